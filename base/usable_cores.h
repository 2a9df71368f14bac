#ifndef DBLOAD_BASE_USABLE_CORES_H_
#define DBLOAD_BASE_USABLE_CORES_H_

// How many cores this process may use. std::thread::hardware_concurrency counts the machine's
// online CPUs whatever the process is allowed: under `taskset -c 0`, in a container given a
// cpuset or a CPU quota, it still says 2 (or 64), and an agent would start a loop per CPU it
// cannot run on and judge its own CPU use against cores it does not have.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace dbload {

// The CPUs of this process's affinity mask, fewer when a CPU quota of its cgroup or of any
// cgroup above it allows less (cgroup v2's cpu.max; cgroup v1's cpu.cfs_quota_us over
// cpu.cfs_period_us, as older Docker hosts set with --cpus), rounded up; at least 1.
uint32_t UsableCores();

// The parts, exposed for tests. `cgroup_root` is "/sys/fs/cgroup" except in tests;
// `proc_self_cgroup` the text of /proc/self/cgroup ("0::/user.slice/…" on cgroup v2,
// "3:cpu,cpuacct:/docker/…" for v1's cpu controller, mounted at cgroup_root/cpu or
// cgroup_root/cpu,cpuacct).
uint32_t UsableCoresFrom(uint32_t affinity_cpus, const std::string& cgroup_root,
                         absl::string_view proc_self_cgroup);
// A cpu.max file ("max 100000" or "150000 100000": quota and period in µs), or cgroup v1's
// cpu.cfs_quota_us and cpu.cfs_period_us joined by a space ("-1 100000" without a limit), as
// whole cores, rounded up; std::nullopt when it sets no limit or is not understood.
std::optional<uint32_t> CoresOfCpuMax(absl::string_view cpu_max);

}  // namespace dbload

#endif  // DBLOAD_BASE_USABLE_CORES_H_
