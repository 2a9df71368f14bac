#include "base/usable_cores.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dbload {
namespace {

TEST(CoresOfCpuMaxTest, QuotaOverPeriodRoundedUpAndNoLimitAsNone) {
  EXPECT_EQ(CoresOfCpuMax("200000 100000\n"), 2u);
  EXPECT_EQ(CoresOfCpuMax("150000 100000"), 2u);
  EXPECT_EQ(CoresOfCpuMax("50000 100000"), 1u);
  EXPECT_EQ(CoresOfCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax(""), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax("0 100000"), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax("100000"), std::nullopt);
}

class FakeCgroups {
 public:
  FakeCgroups() {
    char name[] = "/tmp/usable_cores_test.XXXXXX";
    root_ = mkdtemp(name);
  }
  ~FakeCgroups() { std::filesystem::remove_all(root_); }
  void SetCpuMax(const std::string& cgroup, const std::string& text) {
    std::filesystem::create_directories(root_ + cgroup);
    std::ofstream(root_ + cgroup + "/cpu.max") << text;
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(UsableCoresTest, TheTightestQuotaOnTheWayToTheRootBoundsTheAffinity) {
  FakeCgroups cgroups;
  cgroups.SetCpuMax("", "max 100000\n");
  cgroups.SetCpuMax("/docker", "300000 100000\n");  // a container's quota, above the process
  cgroups.SetCpuMax("/docker/app", "max 100000\n");
  EXPECT_EQ(UsableCoresFrom(8, cgroups.root(), "0::/docker/app\n"), 3u);
  EXPECT_EQ(UsableCoresFrom(2, cgroups.root(), "0::/docker/app\n"), 2u);
  // cgroup v1 lines carry no cpu.max; a cgroup without the file sets no limit.
  EXPECT_EQ(UsableCoresFrom(8, cgroups.root(), "4:memory:/docker\n0::/elsewhere\n"), 8u);
  EXPECT_EQ(UsableCoresFrom(0, cgroups.root(), ""), 1u);
}

TEST(UsableCoresTest, FollowsTheAffinityMaskNotTheMachine) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const uint32_t pinned = UsableCores();
  ASSERT_EQ(sched_setaffinity(0, sizeof(before), &before), 0);
  EXPECT_EQ(pinned, 1u);
  EXPECT_LE(UsableCores(), static_cast<uint32_t>(CPU_COUNT(&before)));
}

}  // namespace
}  // namespace dbload
