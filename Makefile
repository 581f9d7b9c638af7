# The two commands of the README, and the benchmark. Each first installs what it needs
# (scripts/install-deps, Debian packages only), then configures and builds with CMake presets.
BUILD := build/release
JOBS ?= $(shell nproc)

.PHONY: deps build run test check-asan soak bench clean

deps:
	bash scripts/install-deps

# The Python package is installed into /usr/bin/python3's site-packages, so that `import ember`
# works from any directory afterwards.
build: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)
	cmake --install $(BUILD) --component python

# Device report, then LeNet trained on Fashion-MNIST for one epoch on the best device.
run: build
	./$(BUILD)/tools/ember info
	./$(BUILD)/tools/ember train --epochs 1 --out $(BUILD)/run

test: build
	ctest --preset release

# The whole suite under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer.
check-asan: deps
	cmake --workflow --preset asan

# Long tests (label slow): ten epochs of training with memory read after each epoch.
soak: build
	ctest --preset slow

# ember against libtorch on the same workloads; JSON lines in $(BUILD)/bench.jsonl, then a table.
bench: build
	./$(BUILD)/bench/ember-vs-libtorch | tee $(BUILD)/bench.jsonl
	python3 scripts/bench-table $(BUILD)/bench.jsonl

clean:
	rm -rf build
