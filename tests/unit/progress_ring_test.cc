#include "coordinator/progress_ring.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::RunProgress Numbered(int i) {
  v1::RunProgress progress;
  progress.set_agents(static_cast<uint32_t>(i));
  return progress;
}

TEST(ProgressRingTest, AWatcherGetsWhatWasPushedSinceItsLastRead) {
  ProgressRing ring;
  uint64_t next = 0;
  EXPECT_TRUE(ring.Since(next).empty());
  EXPECT_EQ(next, 0u);
  ring.Push(Numbered(0));
  ring.Push(Numbered(1));
  std::vector<v1::RunProgress> batch = ring.Since(next);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].agents(), 0u);
  EXPECT_EQ(batch[1].agents(), 1u);
  EXPECT_EQ(next, 2u);
  ring.Push(Numbered(2));
  batch = ring.Since(next);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].agents(), 2u);
  EXPECT_EQ(ring.count(), 3u);
  EXPECT_EQ(next, 3u);
}

TEST(ProgressRingTest, ASlowWatcherSkipsWhatIsNoLongerKept) {
  ProgressRing ring(/*kept=*/3);
  for (int i = 0; i < 10; ++i) ring.Push(Numbered(i));
  EXPECT_EQ(ring.count(), 10u);
  uint64_t next = 2;  // numbers 2..6 are gone
  std::vector<v1::RunProgress> batch = ring.Since(next);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[0].agents(), 7u);
  EXPECT_EQ(batch[2].agents(), 9u);
  EXPECT_EQ(next, 10u);
  uint64_t late = 0;  // a watcher that connects late starts with what is still kept
  EXPECT_EQ(ring.Since(late).size(), 3u);
}

TEST(ProgressRingTest, KeepsTwoMinutesOfIntervalsByDefault) {
  ProgressRing ring;
  for (int i = 0; i < 500; ++i) ring.Push(Numbered(i));
  uint64_t next = 0;
  std::vector<v1::RunProgress> batch = ring.Since(next);
  ASSERT_EQ(batch.size(), ProgressRing::kDefaultKept);
  EXPECT_EQ(batch.front().agents(), 500u - ProgressRing::kDefaultKept);
}

}  // namespace
}  // namespace dbload
