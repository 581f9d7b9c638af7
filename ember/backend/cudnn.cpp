// The torch.backends.cudnn switches, the same in every build (backend/cudnn.h).
#include "ember/backend/cudnn.h"

#include <atomic>

namespace ember::cudnn {
namespace {
std::atomic<bool> g_enabled{true};
std::atomic<bool> g_allow_tf32{true};
}  // namespace

void set_enabled(bool enabled) { g_enabled = enabled; }
bool enabled() { return g_enabled; }
void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

}  // namespace ember::cudnn
