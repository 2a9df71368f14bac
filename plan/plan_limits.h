#ifndef DBLOAD_PLAN_PLAN_LIMITS_H_
#define DBLOAD_PLAN_PLAN_LIMITS_H_

// The limits that keep a plan within what dbload itself can carry, in one place. A plan past
// any of them is refused before any load, with an error that names the field and the limit
// (README, "Limits"). Each was measured to matter: 100,000 query types took the coordinator to
// 2.85 GB and a report past gRPC's 4 MB default; YAML aliases expanding one 1 MB statement
// 10,000 times took `dbload workload check` to 6 GB; 100,000 closed-loop clients (one thread
// each) crashed every agent past pid_max.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// --- The workload (checked by the workload parser with file positions, and on the proto by
// ValidatePlan, so that the CLI, the coordinator and each agent enforce the same).
// Query types in one scenario, and in the whole workload; real ones have 1 to 20. The
// coordinator keeps two dense histograms (270 KB each once used) per query type and scope, and
// the same again for the interval being merged.
inline constexpr int kMaxQueryTypes = 256;
// Statements of one query type (after `repeat` they may run more often: that is not stored).
inline constexpr int kMaxStatementsPerQueryType = 1'000;
// Statements of the whole workload (query types, tables' SQL, checks).
inline constexpr int kMaxStatements = 10'000;
// Tries of one transaction under a retry policy (v1::Retry.max_tries), the first included: more
// would hide a livelock behind a retry loop (pgbench's --max-tries has no bound; a transaction
// that needs a thousand tries measures nothing a user wants).
inline constexpr uint32_t kMaxTries = 1'000;
// One SQL text of one dialect.
inline constexpr size_t kMaxStatementBytes = size_t{1} << 20;
// The whole workload as carried in a plan (the proto's size), and a YAML document's text once
// its aliases are expanded (each use of an alias counts its anchor's bytes again).
inline constexpr size_t kMaxWorkloadSpecBytes = size_t{16} << 20;
inline constexpr size_t kMaxYamlExpandedBytes = kMaxWorkloadSpecBytes;
// Stages of one plan, and query types × scopes (the run, plus each stage) that a report carries
// histograms for: each scope holds a response- and a service-time histogram per query type.
inline constexpr int kMaxStages = 100;
inline constexpr int kMaxQueryTypeScopes = 512;

// --- Messages. The largest are a report (per query type and scope two histograms, at most
// kHistogramWireBytes each when every bucket is filled, plus the per-second samples and the
// plans) and an assignment (the plan with its workload, at most kMaxWorkloadSpecBytes).
// kMaxQueryTypeScopes × 2 × 200 KiB = 200 MiB, plus 16 MiB of workload and headroom for the
// samples of a day's run (~7 MB): 256 MiB on both ends of the Control and AgentLink channels
// (and the coordinator's merged histograms stay within (512 + 256) × 2 × 270 KB ≈ 415 MB).
// The state file of a run (--state-dir) is that report as JSON, bounded by the same limits
// (two to three times the binary size: numbers are written out).
inline constexpr size_t kHistogramWireBytes = size_t{200} << 10;
inline constexpr int kMaxRpcMessageBytes = 256 << 20;

// --- An agent's room for a run's workers. Each worker is one thread with its own stack, and
// holds one connection (one file descriptor) to the target.
// Threads a run needs besides its workers (run, pacer, reports, EXPLAIN capture, gRPC).
inline constexpr uint64_t kRunThreadsBesideWorkers = 8;
// Descriptors the agent keeps for itself (its link, logs, /proc reads, gRPC's own).
inline constexpr uint64_t kReservedFiles = 32;
// Connections left free on the server beside the run's: the coordinator's probe, and the
// superuser connections PostgreSQL reserves by default (superuser_reserved_connections = 3).
inline constexpr uint64_t kServerConnectionMargin = 5;

// What an agent can still start, and what bounds it, as the agent measured it.
struct AgentResources {
  uint64_t threads = 0;       // more threads it can start; 0: unknown (not checked)
  std::string threads_bound;  // e.g. "RLIMIT_NPROC 200, 12 threads in use"
  uint64_t files = 0;         // more file descriptors it can open; 0: unknown
  std::string files_bound;    // e.g. "RLIMIT_NOFILE 64, 9 open"
  uint32_t cores = 0;         // of its machine, for its number of event loops; 0: unknown
};

// How many event loops drive `target`'s connections on an agent with `cores` cores (0: a thread
// per connection): Target.engine and event_loops, one loop per core by default (one when the
// cores are unknown).
uint32_t EventLoopsFor(const v1::Target& target, uint32_t cores);
// Target.connects_at_once, or its default.
inline constexpr uint32_t kDefaultConnectsAtOnce = 32;
uint32_t ConnectsAtOnce(const v1::Target& target);

// The shape of a workload against the limits above; a FieldError (base/field_error.h) whose
// field is relative to the workload ("scenarios.0.query_types").
absl::Status CheckWorkloadLimits(const v1::WorkloadSpec& spec);

// Whether `workers` workers of `plan` fit the agent's resources (a thread each, or the event
// loops that run them; a connection each); `explain`: this agent also opens the EXPLAIN
// connection. The error is a FieldError on the field that sets the workers
// (load.closed.clients, or target.pool for an open loop) naming the agent and its bound.
absl::Status CheckAgentResources(const v1::Plan& plan, uint64_t workers, bool explain,
                                 const AgentResources& resources, const std::string& agent);

// Whether a run's connections (`connections` over all agents, EXPLAIN's included) fit the
// server's max_connections with kServerConnectionMargin to spare; a FieldError as above.
absl::Status CheckServerConnections(const v1::Plan& plan, uint64_t connections,
                                    uint64_t max_connections);

// The field that sets a plan's number of workers, for the errors above.
std::string WorkersField(const v1::Plan& plan);

}  // namespace dbload

#endif  // DBLOAD_PLAN_PLAN_LIMITS_H_
