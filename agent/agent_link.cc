#include "agent/agent_link.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/agent_resources.h"
#include "agent/assignment_runner.h"
#include "agent/coordinator_connection.h"
#include "agent/load_change.h"
#include "agent/reconnect_policy.h"
#include "agent/run_preparation.h"
#include "base/thread_name.h"
#include "base/usable_cores.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "plan/durations.h"
#include "proto/agent_protocol.h"

#ifndef DBLOAD_VERSION_STRING
#define DBLOAD_VERSION_STRING "unknown"
#endif

namespace dbload {

namespace {

namespace v1 = dbload::v1;

// How often the supervising loop looks at the shutdown flag, the stream and the dead-man timer
// when no heartbeat is due sooner. Small against the dead-man timeout, large against its cost.
constexpr Nanos kPollSlice = 50 * kMillisecond;
// On Shutdown() the link half-closes and gives the coordinator this long to read the run's last
// reports and end the call, and then cancels it.
constexpr Nanos kCloseGrace = kSecond;

std::string Hostname() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "unknown-host";
  return buffer;
}

std::shared_ptr<grpc::Channel> DialCoordinator(const AgentLinkOptions& options) {
  grpc::ChannelArguments args;
  // Every attempt gets a fresh channel; a private subchannel pool keeps it from inheriting
  // gRPC's own reconnect backoff from the last attempt's failed subchannel, so that the link's
  // backoff (below) is the only one and a restarted coordinator is found quickly.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const auto millis = [](Nanos n) {
    return static_cast<int>(std::max<Nanos>(n / kMillisecond, 1));
  };
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, millis(options.reconnect_backoff_min));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, millis(options.reconnect_backoff_min));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, millis(options.reconnect_backoff_max));
  // As the coordinator's server: an assignment carries the workload, a report every query type.
  args.SetMaxReceiveMessageSize(kMaxRpcMessageBytes);
  args.SetMaxSendMessageSize(kMaxRpcMessageBytes);
  return DialSecure(options.coordinator, options.security, args);
}

// Why a connection ended.
enum class LinkEnd { kShutdown, kStreamEnded, kSendFailed, kDeadMan };

}  // namespace

class AgentLink::Impl {
 public:
  Impl(AgentLinkOptions options, DriverFactory driver_factory, Clock& clock)
      : options_(std::move(options)),
        driver_factory_(std::move(driver_factory)),
        clock_(clock),
        host_(Hostname()) {
    if (options_.name.empty()) options_.name = absl::StrCat(host_, "-", getpid());
    if (options_.resolver == nullptr) options_.resolver = std::make_shared<SystemResolver>();
    // Nonsense timings would make the link spin or never notice a lost coordinator.
    if (options_.heartbeat_interval <= 0) options_.heartbeat_interval = kSecond;
    if (options_.dead_man_timeout <= 0) options_.dead_man_timeout = 5 * kSecond;
    if (options_.reconnect_backoff_min <= 0) options_.reconnect_backoff_min = 100 * kMillisecond;
    options_.reconnect_backoff_max =
        std::max(options_.reconnect_backoff_max, options_.reconnect_backoff_min);
  }

  ~Impl() {
    Shutdown();
    // Run() joins every thread it started before it returns, so normally there is nothing left;
    // whatever happens, no run thread may outlive the object it points into.
    EndRun();
  }

  absl::Status Run() {
    if (absl::Status address = CheckCoordinatorAddress(options_.coordinator, options_.security);
        !address.ok()) {
      Event(std::string(address.message()));
      return address;
    }
    ReconnectBackoff backoff(options_.reconnect_backoff_min, options_.reconnect_backoff_max,
                             std::random_device{}());
    while (!shutdown_) {
      const bool heard = RunConnection();
      if (shutdown_) break;
      if (!refusal_.ok()) return refusal_;
      const Nanos wait = backoff.NextWait(heard);
      Event(absl::StrCat("reconnecting to ", options_.coordinator, " in ", wait / kMillisecond,
                         " ms"));
      SleepUnlessShutdown(clock_.Now() + wait);
    }
    return absl::OkStatus();
  }

  void Shutdown() { shutdown_ = true; }

 private:
  void Event(const std::string& line) {
    if (!options_.on_event) return;
    std::lock_guard lock(event_mu_);
    options_.on_event(line);
  }

  void SleepUnlessShutdown(Nanos until) {
    for (Nanos now = clock_.Now(); now < until && !shutdown_; now = clock_.Now()) {
      clock_.SleepUntil(std::min(until, now + kPollSlice));
    }
  }

  AgentResources Resources() const {
    return options_.resources ? options_.resources() : ReadAgentResources();
  }

  v1::AgentMessage Hello() const {
    v1::AgentMessage message;
    v1::AgentHello& hello = *message.mutable_hello();
    hello.set_protocol_version(kAgentProtocolVersion);
    hello.set_name(options_.name);
    hello.set_host(host_);
    hello.set_cores(UsableCores());
    hello.set_version(DBLOAD_VERSION_STRING);
    hello.set_capacity(options_.capacity);
    const AgentResources resources = Resources();
    v1::AgentResources& sent = *hello.mutable_resources();
    sent.set_threads(resources.threads);
    sent.set_threads_bound(resources.threads_bound);
    sent.set_files(resources.files);
    sent.set_files_bound(resources.files_bound);
    for (const std::string& entry : options_.allow_target.entries()) hello.add_allow_target(entry);
    return message;
  }

  // One connection from dial to teardown. Returns whether the coordinator said anything.
  bool RunConnection() {
    auto connection = std::make_shared<CoordinatorConnection>(DialCoordinator(options_));
    dead_man_timeout_ = options_.dead_man_timeout;
    last_heard_ = clock_.Now();
    heard_ = false;
    connection->Send(Hello());
    {
      std::lock_guard lock(run_mu_);
      accepting_runs_ = true;
    }
    Event(absl::StrCat("connecting to coordinator ", options_.coordinator, " as ", options_.name));
    std::thread reader([this, connection] {
      NameThisThread("dbload-link");
      ReadMain(connection);
    });

    const LinkEnd end = Supervise(*connection);
    bool stopped_load = false;
    {
      // From here no assignment starts a run, so the run slot only empties.
      std::lock_guard lock(run_mu_);
      accepting_runs_ = false;
    }
    if (end == LinkEnd::kShutdown) {
      // The run sees the shutdown flag as an interruption and ends within its poll slice; its
      // last interval and final report are queued before the stream is half-closed.
      EndRun();
      connection->CloseAfterQueued();
      const Nanos give_up = clock_.Now() + kCloseGrace;
      for (Nanos now = clock_.Now(); now < give_up && !connection->reader_done();
           now = clock_.Now()) {
        clock_.SleepUntil(std::min(give_up, now + kPollSlice));
      }
    } else {
      // The load must not outlive the coordinator's attention: stop it first, then drop the
      // stream. The run is not resumed on a later connection; the coordinator re-splits.
      stopped_load = StopRun("coordinator lost");
    }
    // The reader is blocked in Read unless the coordinator ended the call; only then is
    // cancelling unnecessary (and it would replace the coordinator's status with CANCELLED).
    if (end != LinkEnd::kStreamEnded) connection->Abort();
    reader.join();
    EndRun();
    const grpc::Status status = connection->Finish();
    switch (end) {
      case LinkEnd::kShutdown:
        Event("link closed: shutting down");
        break;
      case LinkEnd::kStreamEnded:
        if (const auto code = static_cast<absl::StatusCode>(status.error_code());
            IsPermanentLinkRefusal(code)) {
          // Told once, by whoever runs the link (Run returns it): trying again cannot help.
          refusal_ = absl::Status(
              code, absl::StrCat("coordinator ", options_.coordinator, " refused this agent (",
                                 absl::StatusCodeToString(code), "): ", status.error_message(),
                                 "; not retrying"));
          break;
        }
        Event(absl::StrCat("coordinator ", options_.coordinator, " ended the link: ",
                           status.ok()
                               ? "OK"
                               : absl::StrCat("code ", static_cast<int>(status.error_code()), ": ",
                                              status.error_message())));
        break;
      case LinkEnd::kSendFailed:
        Event(absl::StrCat(
            "coordinator ", options_.coordinator,
            connection->overflowed() ? " stopped reading reports" : " cannot be written to",
            (status.ok() ? "" : absl::StrCat(": ", status.error_message()))));
        break;
      case LinkEnd::kDeadMan:
        Event(absl::StrCat("coordinator lost: nothing heard from ", options_.coordinator, " for ",
                           FormatDurationNanos(dead_man_timeout_.load()),
                           stopped_load ? "; load stopped" : ""));
        break;
    }
    return heard_;
  }

  // Heartbeats and the dead-man timer, on the Run() thread, until the connection ends.
  LinkEnd Supervise(CoordinatorConnection& connection) {
    Nanos next_heartbeat = clock_.Now() + options_.heartbeat_interval;
    uint64_t heartbeat_sequence = 0;
    for (;;) {
      if (shutdown_) return LinkEnd::kShutdown;
      if (connection.reader_done()) return LinkEnd::kStreamEnded;
      if (connection.broken()) return LinkEnd::kSendFailed;
      const Nanos now = clock_.Now();
      const Nanos silent_until = last_heard_.load() + dead_man_timeout_.load();
      if (now >= silent_until) return LinkEnd::kDeadMan;
      if (now >= next_heartbeat) {
        v1::AgentMessage message;
        message.mutable_heartbeat()->set_sequence(++heartbeat_sequence);
        connection.Send(std::move(message));
        next_heartbeat += options_.heartbeat_interval;
        // After a stall, one heartbeat now, not a burst to catch up.
        if (next_heartbeat <= now) next_heartbeat = now + options_.heartbeat_interval;
      }
      clock_.SleepUntil(std::min({next_heartbeat, silent_until, now + kPollSlice}));
    }
  }

  // The reader thread: every message proves the coordinator alive; blocking reads live here so
  // that nothing time-driven waits on the network.
  void ReadMain(const std::shared_ptr<CoordinatorConnection>& connection) {
    v1::CoordinatorMessage message;
    while (connection->Read(&message)) {
      last_heard_ = clock_.Now();
      if (!heard_.exchange(true)) {
        Event(absl::StrCat("connected to coordinator ", options_.coordinator));
      }
      switch (message.kind_case()) {
        case v1::CoordinatorMessage::kAssign:
          OnAssignment(connection, message.assign());
          break;
        case v1::CoordinatorMessage::kChange:
          OnLoadChange(message.change());
          break;
        case v1::CoordinatorMessage::kStop:
          OnStopLoad(message.stop());
          break;
        case v1::CoordinatorMessage::kCloseSessions:
          OnCloseSessions(message.close_sessions());
          break;
        case v1::CoordinatorMessage::kStartLoad:
          OnStartLoad(message.start_load());
          break;
        case v1::CoordinatorMessage::kHeartbeat:
          break;
        case v1::CoordinatorMessage::KIND_NOT_SET:
          // A newer coordinator's message; it still counts as a sign of life.
          Event("ignoring a message of a kind this agent does not know");
          break;
      }
    }
  }

  void OnAssignment(const std::shared_ptr<CoordinatorConnection>& connection,
                    const v1::Assignment& assignment) {
    std::lock_guard lock(run_mu_);
    if (!accepting_runs_) return;  // the connection is closing
    if (run_ != nullptr && !run_->finished) {
      if (run_->run_id == assignment.run_id()) {
        // A repeat; answering it would interleave a second sequence into the run's reports.
        Event(absl::StrCat("ignoring a repeated assignment of run ", assignment.run_id()));
        return;
      }
      Refuse(*connection, assignment.run_id(), absl::StrCat("agent busy with run ", run_->run_id));
      return;
    }
    ReapRunLocked();
    bool target_refused = false;
    absl::StatusOr<std::unique_ptr<ActiveRun>> run = preparer_.PrepareRun(assignment, target_refused);
    if (!run.ok()) {
      Refuse(*connection, assignment.run_id(), std::string(run.status().message()),
             target_refused);
      return;
    }
    if (assignment.dead_man_timeout_ns() > 0) dead_man_timeout_ = assignment.dead_man_timeout_ns();
    run_ = *std::move(run);
    run_->connection = connection;
    run_->thread = std::thread([this, active = run_.get()] {
      NameThisThread("dbload-run");
      runner_.Run(*active);
    });
  }

  void OnLoadChange(const v1::LoadChange& change) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != change.run_id()) {
      Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": not running it"));
      return;
    }
    ApplyLoadChange(change, *run_, [this](const std::string& line) { Event(line); });
  }

  void OnStopLoad(const v1::StopLoad& stop) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != stop.run_id()) {
      Event(absl::StrCat("ignoring a stop for run ", stop.run_id(), ": not running it"));
      return;
    }
    run_->control.Stop(stop.reason().empty() ? "by the coordinator" : stop.reason());
  }

  void OnStartLoad(const v1::StartLoad& start) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != start.run_id()) return;
    run_->control.StartLoad();
  }

  void OnCloseSessions(const v1::CloseSessions& close) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != close.run_id()) return;
    run_->control.CloseSessions();
  }

  // Answers an assignment that will not run with the only report it gets: a final one.
  void Refuse(CoordinatorConnection& connection, const std::string& run_id, const std::string& why,
              bool target_refused = false) {
    Event(absl::StrCat("refused run ", run_id, ": ", why));
    v1::AgentMessage message;
    v1::AgentReport& report = *message.mutable_report();
    report.set_run_id(run_id);
    report.set_target_refused(target_refused);
    report.set_sequence(1);
    report.set_final(true);
    report.set_end_reason("not started");
    report.set_end_reason_kind(v1::END_REASON_NOT_STARTED);
    report.set_fatal_error(why);
    connection.Send(std::move(message));
  }

  // Returns whether there was a load to stop.
  bool StopRun(const std::string& reason) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished) return false;
    run_->control.Stop(reason);
    return true;
  }

  // Waits for the current run, if any, to end and frees the slot.
  void EndRun() {
    std::unique_ptr<ActiveRun> run;
    {
      std::lock_guard lock(run_mu_);
      run = std::move(run_);
    }
    if (run != nullptr && run->thread.joinable()) run->thread.join();
  }

  // Frees the slot of a run that has ended (its thread is past its last statement).
  void ReapRunLocked() {
    if (run_ == nullptr) return;
    if (run_->thread.joinable()) run_->thread.join();
    run_.reset();
  }

  AgentLinkOptions options_;
  DriverFactory driver_factory_;
  Clock& clock_;
  const std::string host_;

  std::atomic<bool> shutdown_{false};
  std::atomic<Nanos> last_heard_{0};
  std::atomic<Nanos> dead_man_timeout_{0};
  std::atomic<bool> heard_{false};
  absl::Status refusal_;  // a permanent refusal ends Run(); Run() thread only
  const RunPreparer preparer_{options_, driver_factory_, clock_};
  AssignmentRunner runner_{clock_, shutdown_, [this](const std::string& line) { Event(line); }};

  std::mutex run_mu_;
  std::unique_ptr<ActiveRun> run_;  // guarded by run_mu_
  bool accepting_runs_ = false;     // guarded by run_mu_

  std::mutex event_mu_;
};

AgentLink::AgentLink(AgentLinkOptions options, DriverFactory driver_factory, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(driver_factory), clock)) {}

AgentLink::~AgentLink() = default;

absl::Status AgentLink::Run() { return impl_->Run(); }

void AgentLink::Shutdown() { impl_->Shutdown(); }

}  // namespace dbload
