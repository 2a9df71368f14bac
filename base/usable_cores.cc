#include "base/usable_cores.h"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/bounded_file.h"

namespace dbload {
namespace {

// A missing or unreadable file reads as empty: it sets no limit.
std::string ReadKernelFile(const std::string& path) {
  return ReadBoundedFile(path, 4096, "cgroup file").value_or("");
}

}  // namespace

std::optional<uint32_t> CoresOfCpuMax(absl::string_view cpu_max) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(cpu_max), ' ', absl::SkipEmpty());
  uint64_t quota = 0, period = 0;
  if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &quota) ||
      !absl::SimpleAtoi(fields[1], &period) || quota == 0 || period == 0) {
    return std::nullopt;  // "max …" (no limit) among them
  }
  return static_cast<uint32_t>(std::max<uint64_t>(1, (quota + period - 1) / period));
}

uint32_t UsableCoresFrom(uint32_t affinity_cpus, const std::string& cgroup_root,
                         absl::string_view proc_self_cgroup) {
  uint32_t cores = std::max<uint32_t>(1, affinity_cpus);
  // Every cgroup from `path` up to the hierarchy's root under `mount`: a container's quota may
  // sit above the process's cgroup (and a container that mounts only its own cgroup has the
  // quota at the mount's root).
  const auto bound_by_quotas_above = [&](const std::string& mount, absl::string_view cgroup,
                                         bool v1) {
    std::string path(absl::StripSuffix(cgroup, "/"));
    while (true) {
      const std::string dir = mount + path;
      const std::optional<uint32_t> quota =
          v1 ? CoresOfCpuMax(std::string(absl::StripAsciiWhitespace(
                                 ReadKernelFile(dir + "/cpu.cfs_quota_us"))) +
                             " " + ReadKernelFile(dir + "/cpu.cfs_period_us"))
             : CoresOfCpuMax(ReadKernelFile(dir + "/cpu.max"));
      if (quota) cores = std::min(cores, *quota);
      if (path.empty()) break;
      const size_t parent_end = path.rfind('/');
      path.resize(parent_end == std::string::npos ? 0 : parent_end);
    }
  };
  // Lines of /proc/self/cgroup: "ID:CONTROLLERS:PATH"; cgroup v2's has ID 0 and none.
  for (absl::string_view line : absl::StrSplit(proc_self_cgroup, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() != 3) continue;
    if (fields[0] == "0" && fields[1].empty()) {
      bound_by_quotas_above(cgroup_root, fields[2], /*v1=*/false);
      continue;
    }
    const std::vector<absl::string_view> controllers = absl::StrSplit(fields[1], ',');
    if (std::find(controllers.begin(), controllers.end(), "cpu") == controllers.end()) continue;
    // Where distributions mount v1's cpu controller (a missing directory sets no limit).
    for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"}) {
      bound_by_quotas_above(cgroup_root + mount, fields[2], /*v1=*/true);
    }
  }
  return cores;
}

uint32_t UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const uint32_t affinity = sched_getaffinity(0, sizeof(set), &set) == 0
                                ? static_cast<uint32_t>(CPU_COUNT(&set))
                                : std::thread::hardware_concurrency();
  return UsableCoresFrom(affinity, "/sys/fs/cgroup", ReadKernelFile("/proc/self/cgroup"));
}

}  // namespace dbload
