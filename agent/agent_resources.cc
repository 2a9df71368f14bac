#include "agent/agent_resources.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/usable_cores.h"

namespace dbload {
namespace {

std::optional<uint64_t> ReadNumber(const std::string& path) {
  std::ifstream file(path);
  uint64_t value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

std::optional<uint64_t> SoftLimit(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(limit.rlim_cur);
}

// "0.52 0.58 0.59 3/219 12345": the fourth field's second half counts the machine's threads.
std::optional<uint64_t> MachineTasks() {
  std::ifstream file("/proc/loadavg");
  std::string a, b, c, tasks;
  if (!(file >> a >> b >> c >> tasks)) return std::nullopt;
  const size_t slash = tasks.find('/');
  uint64_t total = 0;
  if (slash == std::string::npos || !absl::SimpleAtoi(tasks.substr(slash + 1), &total)) {
    return std::nullopt;
  }
  return total;
}

// Threads of the processes of this real user: what RLIMIT_NPROC counts.
std::optional<uint64_t> UserTasks() {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  const uid_t uid = getuid();
  uint64_t total = 0;
  while (dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    struct stat info {};
    const std::string dir = "/proc/" + name;
    if (stat(dir.c_str(), &info) != 0 || info.st_uid != uid) continue;
    std::ifstream status(dir + "/status");
    for (std::string line; std::getline(status, line);) {
      uint64_t threads = 0;
      if (line.rfind("Threads:", 0) == 0 && absl::SimpleAtoi(line.substr(8), &threads)) {
        total += threads;
        break;
      }
    }
  }
  closedir(proc);
  return total;
}

std::optional<uint64_t> OwnVmSize() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

std::optional<uint64_t> OpenFiles() {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return std::nullopt;
  uint64_t count = 0;
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(fds);
  return count > 0 ? count - 1 : 0;  // less the descriptor reading the directory
}

uint64_t Less(uint64_t limit, uint64_t used) { return limit > used ? limit - used : 0; }

// Keeps the tighter of the current bound and a candidate.
void Tighten(uint64_t candidate, std::string why, uint64_t& best, std::string& best_why,
             bool& any) {
  if (!any || candidate < best) {
    best = candidate;
    best_why = std::move(why);
    any = true;
  }
}

}  // namespace

HostLimits ReadHostLimits() {
  HostLimits limits;
  limits.threads_max = ReadNumber("/proc/sys/kernel/threads-max");
  limits.pid_max = ReadNumber("/proc/sys/kernel/pid_max");
  limits.tasks_in_use = MachineTasks();
  limits.nproc_limit = SoftLimit(RLIMIT_NPROC);
  if (limits.nproc_limit) limits.user_tasks = UserTasks();
  limits.address_space_limit = SoftLimit(RLIMIT_AS);
  if (limits.address_space_limit) limits.address_space_used = OwnVmSize();
  if (std::optional<uint64_t> stack = SoftLimit(RLIMIT_STACK); stack && *stack > 0) {
    limits.stack_bytes = *stack;
  }
  limits.nofile_limit = SoftLimit(RLIMIT_NOFILE);
  limits.open_files = OpenFiles();
  return limits;
}

AgentResources ComputeAgentResources(const HostLimits& limits) {
  AgentResources resources;
  resources.cores = UsableCores();
  bool threads_known = false;
  const uint64_t in_use = limits.tasks_in_use.value_or(0);
  if (limits.threads_max) {
    Tighten(Less(*limits.threads_max, in_use),
            absl::StrCat("kernel.threads-max ", *limits.threads_max, ", ", in_use,
                         " threads on the machine"),
            resources.threads, resources.threads_bound, threads_known);
  }
  if (limits.pid_max) {
    Tighten(
        Less(*limits.pid_max, in_use),
        absl::StrCat("kernel.pid_max ", *limits.pid_max, ", ", in_use, " threads on the machine"),
        resources.threads, resources.threads_bound, threads_known);
  }
  if (limits.nproc_limit) {
    const uint64_t used = limits.user_tasks.value_or(0);
    Tighten(Less(*limits.nproc_limit, used),
            absl::StrCat("RLIMIT_NPROC ", *limits.nproc_limit, ", ", used,
                         " threads of this user in use"),
            resources.threads, resources.threads_bound, threads_known);
  }
  if (limits.address_space_limit && limits.stack_bytes > 0) {
    const uint64_t used = limits.address_space_used.value_or(0);
    Tighten(Less(*limits.address_space_limit, used) / limits.stack_bytes,
            absl::StrCat("RLIMIT_AS ", *limits.address_space_limit, " bytes, ", used, " in use, ",
                         limits.stack_bytes, " per thread's stack"),
            resources.threads, resources.threads_bound, threads_known);
  }
  // 0 means "unknown" on the wire: a known bound of none left is sent as 1 (still refused).
  if (threads_known) resources.threads = std::max<uint64_t>(resources.threads, 1);
  if (limits.nofile_limit) {
    const uint64_t open = limits.open_files.value_or(0);
    resources.files = std::max<uint64_t>(Less(*limits.nofile_limit, open), 1);
    resources.files_bound =
        absl::StrCat("RLIMIT_NOFILE ", *limits.nofile_limit, ", ", open, " open");
  }
  return resources;
}

}  // namespace dbload
