#include "cli/control_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/agent_link.h"
#include "plan/plan_limits.h"
#include "proto/run_outcome.h"
#include "report/invariants.h"
#include "report/report.h"
#include "report/row_changes.h"

namespace dbload {


namespace {

// How long a unary Control call (other than a Submit that waits for agents) may take.
constexpr auto kCallTimeout = std::chrono::seconds(10);
constexpr auto kInterruptPoll = std::chrono::milliseconds(50);

// "not started: run run-1-0a1b2c3d: connecting to …" -> "connecting to …": the run id means
// nothing to someone whose run never started (only the words are trimmed: the kind said it).
std::string NotStartedReason(const std::string& end_reason, const std::string& run_id) {
  std::string reason = end_reason;
  if (absl::StartsWith(reason, "not started: ")) reason = reason.substr(13);
  return absl::StrReplaceAll(reason, {{absl::StrCat("run ", run_id, ": "), ""}});
}

std::string InPlan(const FollowOptions& options, const std::string& message) {
  return options.plan_path.empty() ? message : absl::StrCat(options.plan_path, ": ", message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<v1::Control::Stub>> DialControl(
    const std::string& address, const TransportSecurity& security) {
  if (absl::Status valid = CheckCoordinatorAddress(address, security); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--coordinator: ", valid.message()));
  }
  // A report as large as the plan limits allow must be readable (gRPC's default is 4 MB).
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxRpcMessageBytes);
  args.SetMaxSendMessageSize(kMaxRpcMessageBytes);
  return v1::Control::NewStub(DialSecure(address, security, args));
}

absl::Status ControlCallError(const std::string& address, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    // The coordinator's own "shutting down" and "waited for agents" messages say more than ours.
    if (absl::StartsWith(status.error_message(), "no run started") ||
        absl::StartsWith(status.error_message(), "the coordinator")) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return absl::UnavailableError(
        absl::StrCat("cannot reach the coordinator at ", address, ": ", status.error_message()));
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}


int FollowRun(v1::Control::Stub& stub, const std::string& run_id, const FollowOptions& options) {
  // Ctrl-C: the signal handler only sets a flag; this thread turns it into a stop, once.
  std::atomic<bool> following{true};
  std::thread interrupt_watcher([&] {
    if (options.interrupted == nullptr || !options.on_interrupt) return;
    while (following.load()) {
      if (options.interrupted->load()) {
        options.on_interrupt();
        return;
      }
      std::this_thread::sleep_for(kInterruptPoll);
    }
  });
  const auto stop_watcher = [&] {
    following.store(false);
    if (interrupt_watcher.joinable()) interrupt_watcher.join();
  };

  // An interval in which nothing happened is held back until the next message: a run whose
  // agents could not start yields one empty interval (their final reports) just before its end,
  // which must not read as load. Any other empty interval (a stalled database) shows one tick
  // late, but shows.
  std::vector<v1::IntervalSample> held;
  const auto emit = [&options](const v1::IntervalSample& sample) {
    if (options.print_intervals) std::cout << RenderIntervalLine(sample) << "\n";
    if (options.on_interval) options.on_interval(sample);
  };
  v1::RunProgress last;
  bool ended = false;
  grpc::ClientContext watch_context;
  v1::WatchRequest watch_request;
  watch_request.set_run_id(run_id);
  std::unique_ptr<grpc::ClientReader<v1::RunProgress>> reader =
      stub.Watch(&watch_context, watch_request);
  v1::RunProgress progress;
  while (reader->Read(&progress)) {
    const bool terminal = RunStateOf(progress) != v1::RUN_STATE_RUNNING;
    if (!(terminal && EndReasonKindOf(progress) == v1::END_REASON_NOT_STARTED)) {
      for (const v1::IntervalSample& sample : held) emit(sample);
      held.clear();
    }
    if (progress.has_interval() && (options.print_intervals || options.on_interval)) {
      if (progress.interval().executed() == 0 && progress.interval().errors() == 0) {
        held.push_back(progress.interval());
      } else {
        emit(progress.interval());
      }
    }
    std::cout << std::flush;
    if (terminal) {
      last = progress;
      ended = true;
    }
  }
  const grpc::Status watched = reader->Finish();
  if (!ended) {
    stop_watcher();
    std::cerr << "dbload: "
              << InPlan(options,
                        absl::StrCat("lost the run ", run_id, ": ",
                                     ControlCallError(options.coordinator, watched).message()))
              << "\n";
    return kExitUsage;
  }
  const std::string& end_reason = last.end_reason();
  const v1::RunState state = RunStateOf(last);
  const v1::EndReasonKind end_kind = EndReasonKindOf(last);
  if (end_kind == v1::END_REASON_NOT_STARTED) {
    stop_watcher();
    std::cerr << "dbload: " << InPlan(options, NotStartedReason(end_reason, last.run_id())) << "\n";
    return kExitUsage;
  }
  for (const v1::IntervalSample& sample : held) emit(sample);

  if (!options.print_report && options.report_path.empty()) {
    stop_watcher();
    std::cout << "run " << last.run_id() << " " << last.state() << ": " << end_reason << std::endl;
    return RunExitCode(state, end_kind, last.degraded());
  }
  grpc::ClientContext report_context;
  report_context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
  v1::GetReportRequest report_request;
  report_request.set_run_id(last.run_id());
  v1::RunReport report;
  const grpc::Status got = stub.GetReport(&report_context, report_request, &report);
  stop_watcher();
  if (!got.ok()) {
    std::cerr << "dbload: "
              << InPlan(options, absl::StrCat("the report of run ", last.run_id(), ": ",
                                              ControlCallError(options.coordinator, got).message()))
              << "\n";
    return kExitUsage;
  }
  // The rows the coordinator counted (runs that finished as planned only), against the report.
  const absl::Status rows = RowChangesDisagreement(report);
  if (options.print_report) std::cout << "\n" << RenderReportText(report);
  if (!options.report_path.empty()) {
    if (absl::Status written = SaveReportJson(options.report_path, report);
        !written.ok()) {
      std::cerr << "dbload: " << written.message() << "\n";
      return kExitUsage;
    }
    std::cout << "\nReport written to " << options.report_path << "\n";
  }
  std::cout << std::flush;
  if (!rows.ok()) {
    std::cerr << "dbload: " << InPlan(options, std::string(rows.message())) << "\n";
    return kExitRunFailed;
  }
  if (const absl::Status broken = InvariantViolations(report); !broken.ok()) {
    std::cerr << "dbload: " << InPlan(options, std::string(broken.message())) << "\n";
    return kExitInvariantBroken;
  }
  const int code = RunExitCode(state, end_kind, last.degraded() || report.degraded());
  if (code == kExitAborted) {
    std::cerr << "dbload: " << InPlan(options, absl::StrCat("run ", end_reason)) << "\n";
  } else if (code == kExitRunFailed) {
    // The report above says it too, but a script reading stderr must not miss it.
    std::cerr << "dbload: " << InPlan(options, absl::StrCat("run ended by ", end_reason)) << "\n";
  } else if (code == kExitDegraded) {
    std::cerr << "dbload: "
              << InPlan(options, absl::StrCat("run degraded: ", report.lost_agents_size(),
                                              " agent(s) lost before their final report; see "
                                              "DEGRADED in the report (JSON: lost_agents)"))
              << "\n";
  }
  return code;
}

int RunExitCode(v1::RunState state, v1::EndReasonKind end_kind, bool degraded) {
  if (end_kind == v1::END_REASON_NOT_STARTED) return kExitUsage;
  switch (state) {
    case v1::RUN_STATE_STOPPED:
    case v1::RUN_STATE_INTERRUPTED:
      return kExitInterrupted;
    case v1::RUN_STATE_ABORTED:
      return kExitAborted;
    case v1::RUN_STATE_FAILED:
      return kExitRunFailed;
    default:
      break;
  }
  if (end_kind == v1::END_REASON_FATAL_ERROR) return kExitRunFailed;
  return degraded ? kExitDegraded : kExitOk;
}

}  // namespace dbload
