# The two commands of the README, and the rest. Each first installs what it needs
# (scripts/install-deps, Debian packages only), then configures and builds with CMake presets.
# `make run` installs and builds only what running needs (the library and the `ember` command);
# `make test` adds the test dependencies and builds everything else, the Python package included.
BUILD := build/release
JOBS ?= $(shell nproc)

.PHONY: deps build run test check-asan soak bench deb clean

deps:
	bash scripts/install-deps run test

# A first configure without the tests' dependencies leaves the tests and benchmarks out;
# `make build` (and so `make test`) puts them back.
run:
	bash scripts/install-deps run
	test -f $(BUILD)/CMakeCache.txt || cmake --preset release -DEMBER_TESTS=OFF -DEMBER_BENCH=OFF
	cmake --build --preset release -j $(JOBS) --target ember-cli
	./$(BUILD)/tools/ember info
	./$(BUILD)/tools/ember train --epochs 1 --out $(BUILD)/run

# The Python package is installed into /usr/bin/python3's site-packages, so that `import ember`
# works from any directory afterwards.
build: deps
	cmake --preset release -DEMBER_TESTS=ON -DEMBER_BENCH=ON
	cmake --build --preset release -j $(JOBS)
	cmake --install $(BUILD) --component python

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

# A Debian package of the library, headers, CMake package, `ember` command and Python package:
# build/deb/ember_<version>_amd64.deb (the deb preset: CPU only, AVX2, under /usr).
deb:
	bash scripts/install-deps run deb
	cmake --preset deb
	cmake --build --preset deb -j $(JOBS)
	cd build/deb && cpack -G DEB

clean:
	rm -rf build
