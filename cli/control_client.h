#ifndef DBLOAD_CLI_CONTROL_CLIENT_H_
#define DBLOAD_CLI_CONTROL_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "process/exit_codes.h"
#include "net/transport_security.h"
#include "dbload/v1/control.grpc.pb.h"

namespace dbload {

// A Control stub for a coordinator at `address` (HOST:PORT; off this machine only with TLS or
// allow_insecure_remote; the error says what is wrong with the address), with TLS and the token
// as `security` says. Dialling is lazy: an unreachable coordinator shows in the first call (see
// ControlCallError).
absl::StatusOr<std::unique_ptr<dbload::v1::Control::Stub>> DialControl(
    const std::string& address, const TransportSecurity& security = {});

// One line for a failed Control call: names the coordinator when it could not be reached, and
// otherwise passes on the coordinator's own message (which names the run or the plan).
absl::Status ControlCallError(const std::string& address, const grpc::Status& status);

struct FollowOptions {
  std::string coordinator;  // for messages
  std::string plan_path;    // names the plan in messages; may be empty
  std::string report_path;  // --report: also written as JSON, atomically; may be empty
  bool print_intervals = true;
  // Also given each interval as it is printed (or would be), on the calling thread; may be null.
  std::function<void(const dbload::v1::IntervalSample&)> on_interval;
  bool print_report = true;
  // Polled while the run goes; when it becomes true, on_interrupt is called once (from another
  // thread): it asks the coordinator to stop the run, whose final report then follows.
  const std::atomic<bool>* interrupted = nullptr;
  std::function<void()> on_interrupt;
};

// Follows a submitted run to its end: one line per interval (RenderIntervalLine), then the
// report (RenderReportText, and --report JSON), and returns the exit code:
//   0 the run finished; 1 it ended by a fatal database error (or failed), or the rows the
//   coordinator counted disagree with the report (RowChangesDisagreement); 4 it finished but
//   lost an agent (degraded); 130 it was stopped or interrupted; 2 it never started
//   (unreachable database, wrong password, missing table: the agents' one-line reason goes to
//   stderr, no report) or the coordinator was lost.
int FollowRun(dbload::v1::Control::Stub& stub, const std::string& run_id,
              const FollowOptions& options);

// The exit code of a run that ended as `state` and `end_kind` say, `degraded` when it lost an
// agent (as FollowRun returns it; a failed row check aside): 2 it never started; 130 stopped or
// interrupted; 3 aborted; 1 failed or ended by a fatal error; 4 degraded; else 0.
int RunExitCode(dbload::v1::RunState state, dbload::v1::EndReasonKind end_kind, bool degraded);

}  // namespace dbload

#endif  // DBLOAD_CLI_CONTROL_CLIENT_H_
