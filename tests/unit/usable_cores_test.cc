#include "base/usable_cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <string>

#include "tests/harness/scratch_dir.h"

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
  // cgroup v1's two files, joined.
  EXPECT_EQ(CoresOfCpuMax("-1 100000\n"), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax("250000 100000\n"), 3u);
}

TEST(UsableCoresTest, TheTightestQuotaOnTheWayToTheRootBoundsTheAffinity) {
  testing::ScratchDir cgroups("usable_cores_test");
  cgroups.Write("cpu.max", "max 100000\n");
  cgroups.Write("docker/cpu.max", "300000 100000\n");  // a container's quota, above the process
  cgroups.Write("docker/app/cpu.max", "max 100000\n");
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), "0::/docker/app\n"), 3u);
  EXPECT_EQ(UsableCoresFrom(2, cgroups.path(), "0::/docker/app\n"), 2u);
  // Other controllers' v1 lines set no CPU limit; a cgroup without the file sets none either.
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), "4:memory:/docker\n0::/elsewhere\n"), 8u);
  EXPECT_EQ(UsableCoresFrom(0, cgroups.path(), ""), 1u);
}

TEST(UsableCoresTest, ReadsCgroupV1sCpuControllerWhereverItIsMounted) {
  testing::ScratchDir cgroups("usable_cores_test");
  // A Docker host on cgroup v1 with --cpus=1.5 on the container.
  cgroups.Write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  cgroups.Write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  cgroups.Write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
  cgroups.Write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::string in_container = "5:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n";
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), in_container), 2u);
  // The controller's name may come second, and only the cpu controller's line counts.
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), "3:cpuacct,cpu:/docker/abc\n"), 2u);
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), "2:cpuacct:/docker/abc\n"), 8u);
  // A container that mounts only its own cgroup sees the quota at the mount's root.
  testing::ScratchDir own("usable_cores_test");
  own.Write("cpu/cpu.cfs_quota_us", "100000\n");
  own.Write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(UsableCoresFrom(8, own.path(), "3:cpu:/docker/abc\n"), 1u);
  // No limit anywhere.
  EXPECT_EQ(UsableCoresFrom(8, cgroups.path(), "3:cpu,cpuacct:/\n"), 8u);
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
