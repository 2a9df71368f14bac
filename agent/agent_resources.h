#ifndef DBLOAD_AGENT_AGENT_RESOURCES_H_
#define DBLOAD_AGENT_AGENT_RESOURCES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "plan/plan_limits.h"

namespace dbload {

// The raw figures an agent's room for workers is computed from; each std::nullopt (or an
// unlimited rlimit) is a bound that does not apply. Read from /proc and getrlimit by
// ReadHostLimits; tests fill it in.
struct HostLimits {
  std::optional<uint64_t> threads_max;          // /proc/sys/kernel/threads-max
  std::optional<uint64_t> pid_max;              // /proc/sys/kernel/pid_max
  std::optional<uint64_t> tasks_in_use;         // threads on the machine (/proc/loadavg)
  std::optional<uint64_t> nproc_limit;          // RLIMIT_NPROC (soft)
  std::optional<uint64_t> user_tasks;           // threads of this user's processes
  std::optional<uint64_t> address_space_limit;  // RLIMIT_AS (soft), bytes
  std::optional<uint64_t> address_space_used;   // this process's VmSize, bytes
  uint64_t stack_bytes = 8 << 20;               // a thread's stack (RLIMIT_STACK, glibc's default)
  std::optional<uint64_t> nofile_limit;         // RLIMIT_NOFILE (soft)
  std::optional<uint64_t> open_files;           // this process's open descriptors
};

HostLimits ReadHostLimits();

// The tightest of the bounds, each less what is in use, and a text naming it. The kernel exempts
// root from RLIMIT_NPROC; the agent keeps to the limit it was started with all the same.
AgentResources ComputeAgentResources(const HostLimits& limits);

inline AgentResources ReadAgentResources() { return ComputeAgentResources(ReadHostLimits()); }

}  // namespace dbload

#endif  // DBLOAD_AGENT_AGENT_RESOURCES_H_
