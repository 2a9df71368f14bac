#include "base/stack_context.h"

#include <cfenv>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace dbload {
namespace {

// An entry takes no arguments: what it works on is here.
StackContext* g_main = nullptr;
StackContext* g_fiber = nullptr;
std::vector<int>* g_steps = nullptr;
bool g_aligned = false;
int g_rounding_seen = -1;

void CountingEntry() {
  alignas(16) volatile char local[16] = {};
  g_aligned = reinterpret_cast<uintptr_t>(&local[0]) % 16 == 0;
  for (int step = 1;; ++step) {
    g_steps->push_back(step);
    g_fiber->SwitchTo(*g_main);
  }
}

TEST(StackContextTest, EachSwitchContinuesWhereTheOtherSideLeft) {
  std::vector<char> stack(64 << 10);
  StackContext main_context;
  StackContext fiber_context;
  std::vector<int> steps;
  g_main = &main_context;
  g_fiber = &fiber_context;
  g_steps = &steps;
  fiber_context.Prepare(stack.data(), stack.size(), &CountingEntry);
  // Values the compiler keeps in callee-saved registers across the switches.
  int64_t kept_a = 7;
  int64_t kept_b = -3;
  for (int round = 1; round <= 3; ++round) {
    main_context.SwitchTo(fiber_context);
    kept_a = kept_a * 3 + round;
    kept_b -= kept_a;
    ASSERT_EQ(steps.size(), static_cast<size_t>(round));
    EXPECT_EQ(steps.back(), round);
  }
  EXPECT_EQ(kept_a, ((7 * 3 + 1) * 3 + 2) * 3 + 3);
  EXPECT_EQ(kept_b, -3 - 22 - 68 - 207);
  EXPECT_TRUE(g_aligned) << "an entry starts on a stack aligned as after a call";
}

void RoundingEntry() {
  std::fesetround(FE_UPWARD);
  for (;;) {
    g_fiber->SwitchTo(*g_main);
    g_rounding_seen = std::fegetround();
  }
}

// The floating-point control words belong to the flow that set them, as registers do.
TEST(StackContextTest, TheRoundingModeStaysWithItsSide) {
  std::vector<char> stack(64 << 10);
  StackContext main_context;
  StackContext fiber_context;
  g_main = &main_context;
  g_fiber = &fiber_context;
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  fiber_context.Prepare(stack.data(), stack.size(), &RoundingEntry);
  main_context.SwitchTo(fiber_context);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  main_context.SwitchTo(fiber_context);
  EXPECT_EQ(g_rounding_seen, FE_UPWARD);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

}  // namespace
}  // namespace dbload
