// The torch.backends.cudnn switches, the same in every build (backend/cudnn.h).
#include "ember/backend/cudnn.h"

#include <atomic>

namespace ember::cudnn {
namespace {
std::atomic<bool> g_enabled{true};
std::atomic<bool> g_allow_tf32{true};
std::atomic<bool> g_benchmark{false};
std::atomic<bool> g_deterministic{false};
}  // namespace

void set_enabled(bool enabled) { g_enabled = enabled; }
bool enabled() { return g_enabled; }
void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }
void set_benchmark(bool on) { g_benchmark = on; }
bool benchmark() { return g_benchmark; }
void set_deterministic(bool on) { g_deterministic = on; }
bool deterministic() { return g_deterministic; }

}  // namespace ember::cudnn
