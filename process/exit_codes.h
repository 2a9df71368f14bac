#ifndef DBLOAD_PROCESS_EXIT_CODES_H_
#define DBLOAD_PROCESS_EXIT_CODES_H_

namespace dbload {

// Exit codes of `dbload` (also in its usage text); the daemons use kExitOk and kExitUsage.
// Header only, so that the integration tests hold the binaries to these very values (they
// include it through cli/exit_codes.h).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitUsage = 2;
// The plan's abort rules ended the run (p99, error rate or achieved rate out of bounds): the
// report holds what was measured until then.
inline constexpr int kExitAborted = 3;
// The run finished but lost an agent before its final report: what that agent ran after its
// last report is not counted (the report bounds it: RunReport.lost_agents).
inline constexpr int kExitDegraded = 4;
// The run finished, but the database broke an invariant of the workload (RunReport.invariants):
// the figures are measured, the data they come from is not what the workload promises.
inline constexpr int kExitInvariantBroken = 5;
inline constexpr int kExitInterrupted = 130;

}  // namespace dbload

#endif  // DBLOAD_PROCESS_EXIT_CODES_H_
