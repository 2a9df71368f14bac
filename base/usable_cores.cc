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
  // cgroup v2's one line, "0::/path"; v1 hierarchies (other lines) have no cpu.max.
  for (absl::string_view line : absl::StrSplit(proc_self_cgroup, '\n')) {
    if (!absl::ConsumePrefix(&line, "0::")) continue;
    std::string path(absl::StripSuffix(line, "/"));
    // Every cgroup from this process's up to the root: a container's quota may sit above it.
    while (true) {
      if (std::optional<uint32_t> quota =
              CoresOfCpuMax(ReadKernelFile(cgroup_root + path + "/cpu.max"))) {
        cores = std::min(cores, *quota);
      }
      if (path.empty()) break;
      const size_t parent_end = path.rfind('/');
      path.resize(parent_end == std::string::npos ? 0 : parent_end);
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
