// `ember bench`: the GPU guides' claims measured on this machine.
#include <iostream>

#include "ember/core/error.h"
#include "tools/ember/commands.h"

namespace ember::cli {

int bench(int, char**) {
  std::cerr << "ember bench: not implemented yet\n";
  return 1;
}

}  // namespace ember::cli
