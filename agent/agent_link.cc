#include "agent/agent_link.h"

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_resources.h"
#include "agent/run_executor.h"
#include "workload/loader.h"
#include "plan/stage_program.h"
#include "proto/agent_protocol.h"
#include "base/field_error.h"
#include "interval/interval_snapshot.h"
#include "plan/durations.h"
#include "plan/plan_validation.h"
#include "plan/target_secrets.h"
#include "workload/workload.h"
#include "dbload/v1/agent.grpc.pb.h"

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
// Messages queued for a coordinator that does not read them. Reports and heartbeats come about
// twice a second, so this is minutes of backlog: a coordinator that far behind is treated as
// lost rather than letting the queue grow without bound.
constexpr size_t kMaxQueuedMessages = 256;
// Rates are split across agents in floating point; a share may exceed the plan's rate by
// rounding, never by more.
constexpr double kRateSplitSlack = 1e-9;

std::string Hostname() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "unknown-host";
  return buffer;
}

double ProcessCpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
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

// Errors from code that names a field (workload options, scenario) read like the plan parser's.
absl::Status InPlan(const absl::Status& status, const std::string& source) {
  if (const std::optional<std::string> field = FieldOf(status)) {
    return absl::Status(status.code(), absl::StrCat(source, ": ", *field, ": ", status.message()));
  }
  return absl::Status(status.code(), absl::StrCat(source, ": ", status.message()));
}

// One Connect call: the stream, and the single thread that writes to it. Other threads only
// queue messages (Send), so that a coordinator that stops reading can block nobody but the
// writer: the heartbeats and the dead-man timer keep running, and cancelling unblocks it.
class Connection {
 public:
  Connection(std::shared_ptr<grpc::Channel> channel)
      : channel_(std::move(channel)), stub_(v1::AgentLink::NewStub(channel_)) {
    // Corked: creating the call does not wait for the connection; the first Write (the hello,
    // on the writer thread) sends the headers with it.
    context_.set_initial_metadata_corked(true);
    stream_ = stub_->Connect(&context_);
    writer_ = std::thread([this] { WriterMain(); });
  }
  ~Connection() {
    Abort();
    if (writer_.joinable()) writer_.join();
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Queues a message for the coordinator; false (and nothing queued) once the connection is
  // closing or broken.
  bool Send(v1::AgentMessage message) {
    {
      std::lock_guard lock(mu_);
      if (closing_ || aborted_ || broken_) return false;
      if (queue_.size() >= kMaxQueuedMessages) {
        broken_ = true;
        overflowed_ = true;
        return false;
      }
      queue_.push_back(std::move(message));
    }
    cv_.notify_all();
    return true;
  }

  // Only the reader thread calls this.
  bool Read(v1::CoordinatorMessage* message) {
    if (stream_->Read(message)) return true;
    reader_done_ = true;
    return false;
  }

  // Takes no new messages; the writer sends what is queued and then half-closes the stream.
  void CloseAfterQueued() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
  }

  // Drops what is queued and cancels the call, so that a blocked Read or Write returns at once.
  void Abort() {
    StopWriting();
    context_.TryCancel();
  }

  bool reader_done() const { return reader_done_; }
  bool broken() {
    std::lock_guard lock(mu_);
    return broken_;
  }
  bool overflowed() {
    std::lock_guard lock(mu_);
    return overflowed_;
  }

  // After the reader has returned: stops the writer and collects the call's status. A call the
  // coordinator ended is not cancelled first: its status (e.g. a refused token) would be lost.
  grpc::Status Finish() {
    if (reader_done_) {
      StopWriting();
    } else {
      Abort();
    }
    if (writer_.joinable()) writer_.join();
    return stream_->Finish();
  }

 private:
  // Drops what is queued; the writer stops at its next message (a Write to a call that has
  // ended returns at once).
  void StopWriting() {
    {
      std::lock_guard lock(mu_);
      aborted_ = true;
      queue_.clear();
    }
    cv_.notify_all();
  }

  void WriterMain() {
    bool half_close = false;
    for (;;) {
      v1::AgentMessage message;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || closing_ || aborted_; });
        if (aborted_) break;
        if (queue_.empty()) {
          half_close = true;
          break;
        }
        message = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!stream_->Write(message)) {
        std::lock_guard lock(mu_);
        broken_ = true;
        break;
      }
    }
    if (half_close) stream_->WritesDone();
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentLink::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> stream_;
  std::atomic<bool> reader_done_{false};

  std::mutex mu_;
  std::condition_variable cv_;  // waits for messages, not for time
  std::deque<v1::AgentMessage> queue_;
  bool closing_ = false;
  bool aborted_ = false;
  bool broken_ = false;
  bool overflowed_ = false;
  std::thread writer_;  // last: starts after everything it uses exists
};

// Why a connection ended.
enum class LinkEnd { kShutdown, kStreamEnded, kSendFailed, kDeadMan };

}  // namespace

bool IsPermanentLinkRefusal(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnauthenticated:  // a missing or wrong token
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:  // another agent protocol version
    case absl::StatusCode::kInvalidArgument:     // a hello the coordinator cannot take
    case absl::StatusCode::kUnimplemented:       // no agent link there: not a dbload-coordinator
      return true;
    default:
      // UNAVAILABLE (down, restarting, shutting down), ALREADY_EXISTS (this name's previous
      // connection not yet dropped), DEADLINE_EXCEEDED, CANCELLED …: it may work next time.
      return false;
  }
}

absl::Status CheckCoordinatorAddress(const std::string& address,
                                     const TransportSecurity& security) {
  const auto malformed = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator address: expected HOST:PORT (e.g. 127.0.0.1:7000 or [::1]:7000), got \"",
        address, "\""));
  };
  if (address.empty()) return absl::InvalidArgumentError("coordinator address: missing");
  std::string host;
  std::string port;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return malformed();
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return malformed();
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    // A bare IPv6 address or a gRPC scheme ("dns:///", "ipv4:") would be ambiguous here.
    if (host.find(':') != std::string::npos || host.find('/') != std::string::npos) {
      return malformed();
    }
  }
  uint32_t port_number = 0;
  if (host.empty() || port.empty() || !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535) {
    return malformed();
  }
  return CheckAddressSecurity(address, security, "coordinator address");
}

class AgentLink::Impl {
 public:
  Impl(AgentLinkOptions options, DriverFactory driver_factory, Clock& clock)
      : options_(std::move(options)),
        driver_factory_(std::move(driver_factory)),
        clock_(clock),
        host_(Hostname()),
        random_(std::random_device{}()) {
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
    Nanos backoff = options_.reconnect_backoff_min;
    while (!shutdown_) {
      const bool heard = RunConnection();
      if (shutdown_) break;
      if (!refusal_.ok()) return refusal_;
      // A connection that worked resets the backoff; repeated failures lengthen it.
      if (heard) backoff = options_.reconnect_backoff_min;
      // Jitter, so that agents that lost the same coordinator do not all come back at once.
      const Nanos wait = static_cast<Nanos>(
          static_cast<double>(backoff) * std::uniform_real_distribution<double>(0.5, 1.0)(random_));
      Event(absl::StrCat("reconnecting to ", options_.coordinator, " in ", wait / kMillisecond,
                         " ms"));
      SleepUnlessShutdown(clock_.Now() + wait);
      backoff = std::min(backoff * 2, options_.reconnect_backoff_max);
    }
    return absl::OkStatus();
  }

  void Shutdown() { shutdown_ = true; }

 private:
  // A run this agent is executing. Created and started by the reader thread, ended by its own
  // thread, reaped by whoever next needs the slot (one run at a time).
  struct ActiveRun {
    std::string run_id;
    std::shared_ptr<Connection> connection;  // its reports go only where its assignment came from
    v1::Plan plan;
    RunShare share;
    // Closed loop: the clients its slots allow, its own (the assignment's) and those a
    // LoadChange added; and where its own range ends.
    uint32_t slot_capacity = 0;
    uint32_t own_slots_end = 0;
    bool nothing_to_run = false;  // a zero share of a query-limited plan
    std::string password;         // kept only to scrub it from error messages
    std::unique_ptr<Workload> workload;
    std::unique_ptr<Scenario> scenario;  // may refer to the workload: destroyed first
    std::unique_ptr<db::Driver> driver;
    std::string target_address;  // where its connections go, after the --allow-target check
    RunControl control;
    uint64_t sequence = 0;  // reports sent; touched only by the run's thread
    std::atomic<bool> finished{false};
    std::thread thread;
  };

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
    hello.set_cores(std::thread::hardware_concurrency());
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
    auto connection = std::make_shared<Connection>(DialCoordinator(options_));
    dead_man_timeout_ = options_.dead_man_timeout;
    last_heard_ = clock_.Now();
    heard_ = false;
    connection->Send(Hello());
    {
      std::lock_guard lock(run_mu_);
      accepting_runs_ = true;
    }
    Event(absl::StrCat("connecting to coordinator ", options_.coordinator, " as ", options_.name));
    std::thread reader([this, connection] { ReadMain(connection); });

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
  LinkEnd Supervise(Connection& connection) {
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
  void ReadMain(const std::shared_ptr<Connection>& connection) {
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
        case v1::CoordinatorMessage::kHeartbeat:
          break;
        case v1::CoordinatorMessage::KIND_NOT_SET:
          // A newer coordinator's message; it still counts as a sign of life.
          Event("ignoring a message of a kind this agent does not know");
          break;
      }
    }
  }

  void OnAssignment(const std::shared_ptr<Connection>& connection,
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
    absl::StatusOr<std::unique_ptr<ActiveRun>> run = PrepareRun(assignment, target_refused);
    if (!run.ok()) {
      Refuse(*connection, assignment.run_id(), std::string(run.status().message()),
             target_refused);
      return;
    }
    if (assignment.dead_man_timeout_ns() > 0) dead_man_timeout_ = assignment.dead_man_timeout_ns();
    run_ = *std::move(run);
    run_->connection = connection;
    run_->thread = std::thread([this, active = run_.get()] { RunMain(*active); });
  }

  void OnLoadChange(const v1::LoadChange& change) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != change.run_id()) {
      Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": not running it"));
      return;
    }
    if (run_->plan.stages_size() > 0) {
      // Stages set the load; the coordinator only steers knee searches.
      if (change.knee_done()) {
        run_->control.EndKnee();
        Event(absl::StrCat("run ", change.run_id(), ": knee search done"));
      } else if (change.knee_step() > 0 && std::isfinite(change.knee_level()) &&
                 change.knee_level() >= 0 &&
                 change.knee_level() <= (run_->plan.load().has_open() ? kMaxOpenRate
                                                                       : kMaxClosedClients)) {
        run_->control.SetKneeStep(change.knee_step(), change.knee_level());
        Event(absl::StrCat("run ", change.run_id(), ": knee step ", change.knee_step(), " at ",
                           change.knee_level()));
      } else {
        Event(absl::StrCat("ignoring a load change for run ", change.run_id(),
                           ": its stages set the load"));
      }
      return;
    }
    const bool open = run_->plan.load().has_open();
    switch (change.load().kind_case()) {
      case v1::LoadShare::kRate: {
        const double rate = change.load().rate();
        if (open && run_->share.rate == 0.0) {
          // A zero share opened no sessions and has no pacer: the change could not take effect.
          Event(absl::StrCat("ignoring a load change for run ", change.run_id(),
                             ": it started with rate 0, so it has no sessions to raise"));
          return;
        }
        if (!open || !std::isfinite(rate) || rate < 0 || rate > kMaxOpenRate) {
          Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": rate ", rate,
                             open ? " out of range" : " for a closed-loop run"));
          return;
        }
        run_->control.SetRate(rate);
        Event(absl::StrCat("run ", change.run_id(), ": rate ", rate, "/s"));
        return;
      }
      case v1::LoadShare::kClients: {
        const uint32_t clients = change.load().clients();
        if (open || clients > kMaxClosedClients) {
          Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": ", clients,
                             open ? " clients for an open-loop run" : " clients out of range"));
          return;
        }
        // Added clients need slots of their own: from the run's spares, never inside another
        // agent's range (the coordinator hands out each spare once) or beyond the run's slots.
        const uint64_t first = change.extra_first_slot();
        const uint64_t count = change.extra_slot_count();
        if (count > 0 && (first < run_->own_slots_end || first + count > run_->share.total_slots)) {
          Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": slots ", first,
                             " + ", count, " outside the run's spare slots (", run_->own_slots_end,
                             " to ", run_->share.total_slots, ")"));
          return;
        }
        if (clients > run_->slot_capacity + count) {
          Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": ", clients,
                             " clients, but slots for ", run_->slot_capacity + count));
          return;
        }
        if (count > 0) {
          run_->control.AddSlots(static_cast<uint32_t>(first), static_cast<uint32_t>(count));
          run_->slot_capacity += static_cast<uint32_t>(count);
        }
        run_->control.SetClients(clients);
        Event(absl::StrCat("run ", change.run_id(), ": ", clients, " clients",
                           count > 0 ? absl::StrCat(" (slots ", first, " to ", first + count - 1,
                                                    " added)")
                                     : ""));
        return;
      }
      case v1::LoadShare::KIND_NOT_SET:
        Event(absl::StrCat("ignoring a load change for run ", change.run_id(), ": no load given"));
        return;
    }
  }

  void OnStopLoad(const v1::StopLoad& stop) {
    std::lock_guard lock(run_mu_);
    if (run_ == nullptr || run_->finished || run_->run_id != stop.run_id()) {
      Event(absl::StrCat("ignoring a stop for run ", stop.run_id(), ": not running it"));
      return;
    }
    run_->control.Stop(stop.reason().empty() ? "by the coordinator" : stop.reason());
  }

  // Everything that can be wrong with an assignment is found here, before any load starts.
  // `target_refused`: the error is the --allow-target refusal.
  absl::StatusOr<std::unique_ptr<ActiveRun>> PrepareRun(const v1::Assignment& assignment,
                                                        bool& target_refused) {
    if (assignment.run_id().empty()) return absl::InvalidArgumentError("assignment without run_id");
    const std::string& id = assignment.run_id();
    const std::string source = absl::StrCat("run ", id, " plan");
    const v1::Plan& plan = assignment.plan();
    if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return valid;

    auto run = std::make_unique<ActiveRun>();
    run->run_id = id;
    run->plan = plan;
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(plan);
    if (!workload.ok()) return InPlan(workload.status(), source);
    run->workload = *std::move(workload);
    absl::StatusOr<std::unique_ptr<Scenario>> scenario =
        run->workload->MakeScenario(plan.scenario());
    if (!scenario.ok()) return InPlan(scenario.status(), source);
    run->scenario = *std::move(scenario);

    // The share: never more than the plan asks for, whatever the coordinator computed.
    const std::string where = absl::StrCat("run ", id, " assignment: ");
    RunShare& share = run->share;
    share.first_slot = assignment.first_slot();
    share.total_slots = assignment.total_slots();
    share.phase = assignment.phase();
    // One agent explains, so that the run has one plan per query type and stage.
    share.explain = assignment.agent_index() == 0 && !plan.explain().disabled();
    uint32_t workers = 0;
    if (plan.stages_size() > 0) {
      // The stages give the load; the assignment gives this agent's part of each.
      share.rate_fraction = assignment.rate_fraction();
      share.agent_index = assignment.agent_index();
      share.agent_count = assignment.agent_count();
      if (!std::isfinite(share.rate_fraction) || share.rate_fraction < 0 ||
          share.rate_fraction > 1 + kRateSplitSlack) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "rate_fraction: expected a fraction from 0 to 1, got ", share.rate_fraction));
      }
      if (share.agent_index >= share.agent_count) {
        return absl::InvalidArgumentError(absl::StrCat(where, "agent_index ", share.agent_index,
                                                       " is not below agent_count ",
                                                       share.agent_count));
      }
      const StageProgram program(plan, share.rate_fraction, share.agent_index, share.agent_count);
      workers = plan.load().has_open() ? (program.AnyRate() ? plan.target().pool() : 0)
                                       : program.ClientStarts();
    } else if (plan.load().has_open()) {
      const double plan_rate = plan.load().open().rate();
      if (assignment.load().kind_case() != v1::LoadShare::kRate) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "load.rate: missing; an open-loop plan needs a rate share"));
      }
      const double rate = assignment.load().rate();
      if (!std::isfinite(rate) || rate < 0 || rate > plan_rate * (1 + kRateSplitSlack)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "load.rate: expected 0 to the plan's rate ", plan_rate, ", got ", rate));
      }
      share.rate = rate;
      workers = rate > 0 ? plan.target().pool() : 0;
    } else {
      const uint32_t plan_clients = plan.load().closed().clients();
      if (assignment.load().kind_case() != v1::LoadShare::kClients) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "load.clients: missing; a closed-loop plan needs a clients share"));
      }
      const uint32_t clients = assignment.load().clients();
      if (clients > plan_clients) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "load.clients: expected 0 to the plan's ", plan_clients, ", got ", clients));
      }
      share.clients = clients;
      workers = clients;
    }
    if (!std::isfinite(share.phase) || share.phase < 0 || share.phase >= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "phase: expected a fraction in [0, 1), got ", share.phase));
    }
    if (share.total_slots > 0 &&
        uint64_t{share.first_slot} + workers > uint64_t{share.total_slots}) {
      // Slots beyond total_slots would overlap another agent's key space.
      return absl::InvalidArgumentError(absl::StrCat(where, "slots ", share.first_slot, " + ",
                                                     workers, " workers exceed total_slots ",
                                                     share.total_slots));
    }
    // One thread and one connection per worker: refused here, before any is started, rather
    // than crash the agent past its limits.
    if (absl::Status fits = CheckAgentResources(plan, workers, share.explain, Resources(),
                                                options_.name);
        !fits.ok()) {
      return InPlan(fits, source);
    }
    run->slot_capacity = workers;
    run->own_slots_end = share.first_slot + workers;
    const uint64_t plan_queries = plan.stop().queries();
    if (assignment.stage_queries_size() > plan.stages_size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "stage_queries: ",
                                                     assignment.stage_queries_size(),
                                                     " shares for ", plan.stages_size(),
                                                     " stages"));
    }
    for (int i = 0; i < assignment.stage_queries_size(); ++i) {
      if (assignment.stage_queries(i) > plan.stages(i).queries()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "stage_queries[", i, "]: expected at most the stage's queries ",
            plan.stages(i).queries(), ", got ", assignment.stage_queries(i)));
      }
    }
    share.stage_queries.assign(assignment.stage_queries().begin(),
                               assignment.stage_queries().end());
    if (assignment.queries() > plan_queries) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "queries: expected at most the plan's stop.queries ", plan_queries,
                       ", got ", assignment.queries()));
    }
    share.queries = assignment.queries();
    // In RunShare 0 means "no count limit": a zero share of a count-limited plan means "none".
    run->nothing_to_run = plan.stages_size() == 0 && plan_queries > 0 && assignment.queries() == 0;

    absl::StatusOr<std::string> password = ReadTargetPassword(plan.target());
    if (!password.ok()) {
      // The message names the file or variable, never the content.
      return absl::Status(password.status().code(),
                          absl::StrCat("run ", id, ": ", password.status().message()));
    }
    run->password = *password;
    // The agent is the authority on where its load may go, whatever the coordinator checked:
    // before any connection, the target is checked and a host name resolved, once, to the
    // address that every connection of the run dials.
    absl::StatusOr<std::string> endpoint = ApplyAllowTarget(
        options_.allow_target, *options_.resolver,
        {.subject = absl::StrCat("agent '", options_.name, "'"), .remedy = "the agent"},
        *run->plan.mutable_target());
    if (!endpoint.ok()) {
      target_refused = endpoint.status().code() == absl::StatusCode::kPermissionDenied;
      return absl::Status(endpoint.status().code(),
                          absl::StrCat("run ", id, ": ", endpoint.status().message()));
    }
    run->target_address = *endpoint;
    absl::StatusOr<std::unique_ptr<db::Driver>> driver =
        driver_factory_(run->plan.target(), *std::move(password), clock_);
    if (!driver.ok()) {
      return absl::Status(
          driver.status().code(),
          db::Redact(absl::StrCat("run ", id, ": target: ", driver.status().message()),
                     run->password));
    }
    run->driver = *std::move(driver);
    return run;
  }

  // Answers an assignment that will not run with the only report it gets: a final one.
  void Refuse(Connection& connection, const std::string& run_id, const std::string& why,
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

  // The run's own thread: ExecuteRun, one report per interval, then the final report.
  void RunMain(ActiveRun& run) {
    Event(absl::StrCat("run ", run.run_id, ": started",
                       run.target_address.empty() ? ""
                                                  : absl::StrCat(", dialing ", run.target_address)));
    double cpu_mark = ProcessCpuSeconds();
    const auto cpu_since_mark = [&] {
      const double now = ProcessCpuSeconds();
      const double used = std::max(0.0, now - cpu_mark);
      cpu_mark = now;
      return used;
    };
    double last_elapsed_s = 0;
    uint32_t last_stage = 0;
    v1::AgentMessage final_message;
    v1::AgentReport& final_report = *final_message.mutable_report();
    // Plans come from ExecuteRun's capture thread and leave with the next report.
    std::mutex plans_mu;
    std::vector<v1::CapturedPlan> plans_pending;
    const auto take_plans = [&](v1::AgentReport& report) {
      std::lock_guard lock(plans_mu);
      for (v1::CapturedPlan& plan : plans_pending) *report.add_plans() = std::move(plan);
      plans_pending.clear();
    };
    if (run.nothing_to_run) {
      final_report.set_end_reason("queries");
      final_report.set_end_reason_kind(v1::END_REASON_QUERIES);
    } else if (run.plan.prepare_only()) {
      LoadParts(run, final_report);
    } else {
      ExecutionHooks hooks;
      hooks.on_plans = [&](uint32_t stage, std::vector<v1::QueryPlan> plans) {
        std::lock_guard lock(plans_mu);
        for (v1::QueryPlan& plan : plans) {
          v1::CapturedPlan& captured = plans_pending.emplace_back();
          captured.set_stage(stage);
          *captured.mutable_plan() = std::move(plan);
        }
      };
      // Each report's CPU is the load's during its interval: the set-up before the first
      // interval (reading samples, connecting) is left out.
      hooks.on_load_start = [&] { (void)cpu_since_mark(); };
      hooks.on_interval = [&](const IntervalOutput& out) {
        v1::AgentMessage message;
        v1::AgentReport& report = *message.mutable_report();
        report.set_run_id(run.run_id);
        report.set_sequence(++run.sequence);
        report.set_target_address(run.target_address);
        take_plans(report);
        SnapshotToReport(out.snapshot, &report);
        report.set_in_flight(out.in_flight);
        report.set_connections(out.connections);
        report.set_cpu_seconds(cpu_since_mark());
        report.set_interval_s(out.length_s);
        report.set_warmup(out.warmup);
        report.set_elapsed_s(out.elapsed_s);
        report.set_stage(out.stage);
        last_stage = out.stage;
        report.set_target_rate(out.target_rate);
        report.set_clients(out.clients);
        report.set_knee_step(out.knee_step);
        last_elapsed_s = out.elapsed_s;
        run.connection->Send(std::move(message));
      };
      // Shutdown() ends the run as "interrupted"; the coordinator's StopLoad and the dead-man
      // timer come through the control mailbox as "stopped: …".
      hooks.interrupted = &shutdown_;
      hooks.control = &run.control;
      const absl::StatusOr<ExecutionResult> result =
          ExecuteRun(run.plan, run.share, *run.driver, *run.scenario, clock_, hooks);
      if (!result.ok()) {
        // Nothing ran (connecting failed): the status says why, without the password.
        final_report.set_end_reason("not started");
        final_report.set_end_reason_kind(v1::END_REASON_NOT_STARTED);
        final_report.set_fatal_error(db::Redact(
            absl::StrCat("run ", run.run_id, ": ", result.status().message()), run.password));
      } else {
        final_report.set_end_reason(db::Redact(result->end_reason, run.password));
        final_report.set_end_reason_kind(result->end_reason_kind);
        final_report.set_setup_s(result->setup_s);
        final_report.set_measured_s(result->measured_s);
        final_report.set_not_started(result->not_started);
        if (result->end_reason_kind == v1::END_REASON_FATAL_ERROR) {
          final_report.set_fatal_error(final_report.end_reason());
        }
      }
    }
    take_plans(final_report);
    final_report.set_run_id(run.run_id);
    final_report.set_sequence(++run.sequence);
    final_report.set_final(true);
    final_report.set_target_address(run.target_address);
    final_report.set_elapsed_s(last_elapsed_s);
    final_report.set_stage(last_stage);
    final_report.set_cpu_seconds(cpu_since_mark());
    Event(absl::StrCat("run ", run.run_id, ": ended: ", final_report.end_reason(),
                       final_report.fatal_error().empty() ? "" : " (", final_report.fatal_error(),
                       final_report.fatal_error().empty() ? "" : ")"));
    // Free the slot before the coordinator can read the final report and assign the next run;
    // that assignment reaps (joins) this thread first, so this report still goes out before
    // anything of the next run.
    run.finished = true;
    run.connection->Send(std::move(final_message));
  }

  // A prepare run: this agent's parts of every table (its slots), on one connection each.
  void LoadParts(ActiveRun& run, v1::AgentReport& final_report) {
    const int first = static_cast<int>(run.share.first_slot);
    const int count = static_cast<int>(run.share.clients.value_or(0));
    if (count == 0) {
      final_report.set_end_reason("loaded no parts");
      final_report.set_end_reason_kind(v1::END_REASON_LOADED);
      return;
    }
    LoadOptions options{.parallel = static_cast<int>(run.plan.load().closed().clients()),
                        .stage = LoadOptions::Stage::kPartsOnly,
                        .first_part = first,
                        .part_count = count,
                        .should_stop = [&run, this] {
                          return shutdown_.load() || run.control.StopRequested();
                        }};
    const absl::Status loaded =
        LoadWorkloadData(run.workload->DataSpec(), *run.driver, options, nullptr);
    if (loaded.ok()) {
      final_report.set_end_reason(count == 1 ? absl::StrCat("loaded part ", first)
                                             : absl::StrCat("loaded parts ", first, "-",
                                                            first + count - 1));
      final_report.set_end_reason_kind(v1::END_REASON_LOADED);
    } else {
      final_report.set_end_reason(db::Redact(
          absl::StrCat("fatal error: ", loaded.message()), run.password));
      final_report.set_end_reason_kind(v1::END_REASON_FATAL_ERROR);
      final_report.set_fatal_error(final_report.end_reason());
    }
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
  std::mt19937_64 random_;  // backoff jitter; Run() thread only

  std::atomic<bool> shutdown_{false};
  std::atomic<Nanos> last_heard_{0};
  std::atomic<Nanos> dead_man_timeout_{0};
  std::atomic<bool> heard_{false};
  absl::Status refusal_;  // a permanent refusal ends Run(); Run() thread only

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
