// ThreadLocalState: capture on one thread, apply on another, restore after.
#include <gtest/gtest.h>

#include <thread>

#include "ember/core/autocast.h"
#include "ember/core/grad_mode.h"
#include "ember/core/thread_local_state.h"

namespace ember {
namespace {

TEST(ThreadLocalState, CarriesGradModeAndAutocastToAnotherThread) {
  NoGradGuard no_grad;
  amp::autocast guard(kCPU, kFloat16);
  ThreadLocalState state = ThreadLocalState::capture();
  EXPECT_FALSE(state.grad_enabled());
  EXPECT_TRUE(state.autocast().enabled[static_cast<int>(kCPU)]);
  bool grad_before = false, grad_inside = true, autocast_inside = false, grad_after = false;
  DType dtype_inside = kFloat32;
  std::thread([&] {
    grad_before = GradMode::is_enabled();
    {
      ThreadLocalStateGuard g(state);
      grad_inside = GradMode::is_enabled();
      autocast_inside = amp::is_autocast_enabled(kCPU);
      dtype_inside = amp::get_autocast_dtype(kCPU);
    }
    grad_after = GradMode::is_enabled();
  }).join();
  EXPECT_TRUE(grad_before);  // a new thread has the defaults
  EXPECT_FALSE(grad_inside);
  EXPECT_TRUE(autocast_inside);
  EXPECT_EQ(dtype_inside, kFloat16);
  EXPECT_TRUE(grad_after);  // the guard put the thread's own state back
}

TEST(ThreadLocalState, GuardRestoresOnTheSameThread) {
  ThreadLocalState defaults = ThreadLocalState::capture();
  {
    NoGradGuard no_grad;
    amp::autocast guard(kCPU);
    ThreadLocalStateGuard g(defaults);
    EXPECT_TRUE(GradMode::is_enabled());
    EXPECT_FALSE(amp::is_autocast_enabled(kCPU));
  }
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_FALSE(amp::is_autocast_enabled(kCPU));
}

}  // namespace
}  // namespace ember
