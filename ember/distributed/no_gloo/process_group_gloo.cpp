// Built when Gloo was not found: the gloo backend is a clear error, not a link failure.
#include "ember/distributed/process_group_gloo.h"
#include "ember/core/error.h"
#include "ember/distributed/distributed.h"

namespace ember::distributed {

bool gloo_available() { return false; }

std::shared_ptr<ProcessGroup> make_gloo_process_group(std::shared_ptr<Store>, int, int,
                                                      const GlooOptions&) {
  EMBER_FAIL(
      "[init_process_group] this ember was built without Gloo (install libgloo-dev and reconfigure); "
      "available backends: ",
      available_backends());
}

}  // namespace ember::distributed
