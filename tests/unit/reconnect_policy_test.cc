#include "agent/reconnect_policy.h"

#include "gtest/gtest.h"

namespace dbload {
namespace {

constexpr Nanos kMin = 100 * kMillisecond;
constexpr Nanos kMax = 800 * kMillisecond;

// Each wait is jittered to 50-100 % of its backoff.
void ExpectWithin(Nanos wait, Nanos backoff) {
  EXPECT_GE(wait, backoff / 2);
  EXPECT_LE(wait, backoff);
}

TEST(ReconnectBackoffTest, DoublesAfterEachFailedAttemptUpToTheMaximum) {
  ReconnectBackoff backoff(kMin, kMax, 1);
  for (const Nanos expected : {kMin, 2 * kMin, 4 * kMin, kMax, kMax, kMax}) {
    ExpectWithin(backoff.NextWait(/*heard=*/false), expected);
  }
}

TEST(ReconnectBackoffTest, AConnectionOnWhichTheCoordinatorSpokeStartsOverFromTheMinimum) {
  ReconnectBackoff backoff(kMin, kMax, 2);
  for (int i = 0; i < 5; ++i) backoff.NextWait(/*heard=*/false);
  ExpectWithin(backoff.NextWait(/*heard=*/true), kMin);
  ExpectWithin(backoff.NextWait(/*heard=*/false), 2 * kMin);
}

TEST(ReconnectBackoffTest, AgentsWithDifferentSeedsDoNotComeBackInLockstep) {
  ReconnectBackoff first(kMin, kMax, 1);
  ReconnectBackoff second(kMin, kMax, 2);
  ReconnectBackoff same_as_first(kMin, kMax, 1);
  bool any_different = false;
  for (int i = 0; i < 8; ++i) {
    const Nanos wait = first.NextWait(false);
    EXPECT_EQ(wait, same_as_first.NextWait(false));
    if (wait != second.NextWait(false)) any_different = true;
  }
  EXPECT_TRUE(any_different);
}

TEST(ReconnectBackoffTest, EqualBoundsKeepOneBackoff) {
  ReconnectBackoff backoff(kMin, kMin, 3);
  for (int i = 0; i < 4; ++i) ExpectWithin(backoff.NextWait(i % 2 == 0), kMin);
}

}  // namespace
}  // namespace dbload
