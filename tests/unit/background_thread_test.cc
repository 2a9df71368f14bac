#include "base/background_thread.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace dbload {
namespace {

int NiceOfThisThread() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  EXPECT_EQ(errno, 0);
  return nice;
}

TEST(BackgroundThreadTest, LowersTheCallingThreadOnly) {
  const int before = NiceOfThisThread();
  ASSERT_LT(before, 19) << "the test needs to start above the lowest priority";
  int inside = 0;
  bool made = false;
  std::thread([&] {
    made = MakeThisThreadBackground();
    inside = NiceOfThisThread();
  }).join();
  EXPECT_TRUE(made);
  EXPECT_EQ(inside, 19);
  EXPECT_EQ(NiceOfThisThread(), before);
  // Threads take their creator's priority: one this thread starts afterwards is not lowered.
  int later = 0;
  std::thread([&] { later = NiceOfThisThread(); }).join();
  EXPECT_EQ(later, before);
}

}  // namespace
}  // namespace dbload
