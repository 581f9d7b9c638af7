// The subcommands of `ember`. Each returns the process exit code.
#pragma once

namespace ember::cli {

int info(int argc, char** argv);
int train(int argc, char** argv);
int predict(int argc, char** argv);
int generate(int argc, char** argv);
int bench(int argc, char** argv);
int launch(int argc, char** argv);

}  // namespace ember::cli
