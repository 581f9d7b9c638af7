#include <gtest/gtest.h>

#include <stdexcept>

#include "ember/core/scope_guard.h"

namespace ember {
namespace {

TEST(ScopeGuard, RunsOnceAtTheEndOfItsScope) {
  int calls = 0;
  {
    ScopeGuard guard([&] { ++calls; });
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 1);
}

TEST(ScopeGuard, RestoresWhenAnExceptionLeavesTheScope) {
  bool flag = false;
  auto set_then_throw = [&] {
    bool saved = flag;
    flag = true;
    ScopeGuard restore([&] { flag = saved; });
    throw std::runtime_error("boom");
  };
  EXPECT_THROW(set_then_throw(), std::runtime_error);
  EXPECT_FALSE(flag);
}

}  // namespace
}  // namespace ember
