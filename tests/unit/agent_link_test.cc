// The agent's link to a coordinator written here (a gRPC server that scripts assignments and
// reads reports). Its length: its cases share that fake coordinator and its helpers.
#include "agent/agent_link.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/agent_resources.h"
#include "base/usable_cores.h"
#include "db/forwarding_session.h"
#include "db/noop_driver.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interval/interval_snapshot.h"
#include "proto/agent_protocol.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;
using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::Not;

constexpr milliseconds kCoordinatorHeartbeat{200};

// A coordinator that records what agents send and sends what the test says, plus heartbeats
// every 200 ms unless told to go silent (the stream stays open then).
class FakeCoordinator final : public v1::AgentLink::Service {
 public:
  struct Received {
    int connection = 0;
    v1::AgentMessage message;
    SteadyTime at;
  };

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) override {
    int id = 0;
    {
      std::lock_guard lock(mu_);
      id = ++connections_;
      if (!refusal_.ok()) {
        // As the real coordinator refuses a token: before reading anything.
        ++refused_;
        cv_.notify_all();
        return refusal_;
      }
      live_[id] = {stream, context};
    }
    cv_.notify_all();
    std::thread heartbeats([this, id] { HeartbeatMain(id); });
    v1::AgentMessage message;
    while (stream->Read(&message)) {
      {
        std::lock_guard lock(mu_);
        received_.push_back({id, message, std::chrono::steady_clock::now()});
        // As the real coordinator does when this agent is the run's last to be ready.
        if (message.has_sessions_ready() && start_load_) {
          v1::CoordinatorMessage start;
          start.mutable_start_load()->set_run_id(message.sessions_ready().run_id());
          stream->Write(start);
        }
        // As the real coordinator does when this agent is the run's last to end its load.
        if (message.has_load_over() && close_sessions_) {
          v1::CoordinatorMessage close;
          close.mutable_close_sessions()->set_run_id(message.load_over().run_id());
          stream->Write(close);
        }
      }
      cv_.notify_all();
    }
    {
      // Under the lock that every Write takes: nothing is written to this stream from now on.
      std::lock_guard lock(mu_);
      live_.erase(id);
      ended_at_[id] = std::chrono::steady_clock::now();
    }
    cv_.notify_all();
    heartbeats.join();
    return grpc::Status::OK;
  }

  // Sends to the newest live connection.
  bool Send(const v1::CoordinatorMessage& message) {
    std::lock_guard lock(mu_);
    if (live_.empty()) return false;
    const bool written = live_.rbegin()->second.stream->Write(message);
    if (written) last_sent_ = std::chrono::steady_clock::now();
    return written;
  }

  // Stops heartbeats; returns when the last message was sent (nothing is sent after it).
  SteadyTime GoSilent() {
    std::lock_guard lock(mu_);
    silent_ = true;
    return last_sent_;
  }

  // An agent's LoadOver is no longer answered with CloseSessions at once (other agents' loads
  // still running); the test sends it.
  void HoldSessions() {
    std::lock_guard lock(mu_);
    close_sessions_ = false;
  }

  // An agent's SessionsReady is no longer answered with StartLoad at once (other agents still
  // connecting); the test sends it.
  void HoldStart() {
    std::lock_guard lock(mu_);
    start_load_ = false;
  }

  // Every connection from now on is ended at once with `status`.
  void RefuseWith(grpc::Status status) {
    std::lock_guard lock(mu_);
    refusal_ = std::move(status);
  }
  int RefusedLocked() const { return refused_; }

  // Ends every call, so that the server can shut down at once.
  void CancelAll() {
    std::lock_guard lock(mu_);
    closing_ = true;
    for (auto& [id, live] : live_) live.context->TryCancel();
    cv_.notify_all();
  }

  // Waits (bounded) until `ready` holds; `ready` runs under the lock.
  bool WaitFor(const std::function<bool()>& ready, milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, ready);
  }

  // For use inside WaitFor predicates and after them (locks are taken by the callers below).
  std::vector<Received> ReceivedLocked() const { return received_; }
  bool ReceivedLocked(const std::function<bool(const v1::AgentMessage&)>& matching) const {
    return std::any_of(received_.begin(), received_.end(),
                       [&](const Received& r) { return matching(r.message); });
  }

  std::vector<Received> AllReceived() {
    std::lock_guard lock(mu_);
    return received_;
  }

  std::vector<v1::AgentHello> Hellos() {
    std::lock_guard lock(mu_);
    std::vector<v1::AgentHello> hellos;
    for (const Received& r : received_) {
      if (r.message.has_hello()) hellos.push_back(r.message.hello());
    }
    return hellos;
  }

  std::vector<Received> Reports(const std::string& run_id) {
    std::lock_guard lock(mu_);
    return ReportsLocked(run_id);
  }

  bool HasFinalLocked(const std::string& run_id) const {
    for (const Received& r : ReportsLocked(run_id)) {
      if (r.message.report().final()) return true;
    }
    return false;
  }

  int HelloCountLocked() const {
    int count = 0;
    for (const Received& r : received_) count += r.message.has_hello();
    return count;
  }

  int ReportCountLocked(const std::string& run_id) const {
    return static_cast<int>(ReportsLocked(run_id).size());
  }

  std::optional<SteadyTime> EndedAt(int connection) {
    std::lock_guard lock(mu_);
    return EndedAtLocked(connection);
  }

  std::optional<SteadyTime> EndedAtLocked(int connection) const {
    auto it = ended_at_.find(connection);
    if (it == ended_at_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Live {
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream;
    grpc::ServerContext* context;
  };

  std::vector<Received> ReportsLocked(const std::string& run_id) const {
    std::vector<Received> reports;
    for (const Received& r : received_) {
      if (r.message.has_report() && r.message.report().run_id() == run_id) reports.push_back(r);
    }
    return reports;
  }

  void HeartbeatMain(int id) {
    uint64_t sequence = 0;
    std::unique_lock lock(mu_);
    for (;;) {
      // Paced by a timed wait: this is the fake's behaviour, not a test's synchronization.
      cv_.wait_for(lock, kCoordinatorHeartbeat, [&] { return closing_ || !live_.contains(id); });
      if (closing_ || !live_.contains(id)) return;
      if (silent_) continue;
      v1::CoordinatorMessage message;
      message.mutable_heartbeat()->set_sequence(++sequence);
      if (live_[id].stream->Write(message)) last_sent_ = std::chrono::steady_clock::now();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  int connections_ = 0;
  std::map<int, Live> live_;
  std::map<int, SteadyTime> ended_at_;
  std::vector<Received> received_;
  bool silent_ = false;
  bool closing_ = false;
  bool close_sessions_ = true;  // answer LoadOver with CloseSessions (HoldSessions)
  bool start_load_ = true;      // answer SessionsReady with StartLoad (HoldStart)
  grpc::Status refusal_;
  int refused_ = 0;
  SteadyTime last_sent_{};
};

class FakeServer {
 public:
  // port 0: any free port.
  explicit FakeServer(int port) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", port), grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&coordinator_);
    server_ = builder.BuildAndStart();
  }
  ~FakeServer() {
    coordinator_.CancelAll();
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(500));
    server_->Wait();
  }
  int port() const { return port_; }
  FakeCoordinator& coordinator() { return coordinator_; }

 private:
  FakeCoordinator coordinator_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// What the agent's database saw: sessions open now (and at most), statements executed.
class DatabaseCounters {
 public:
  void SessionOpened() {
    std::lock_guard lock(mu_);
    ++live_;
    max_live_ = std::max(max_live_, live_);
    cv_.notify_all();
  }
  void SessionClosed() {
    std::lock_guard lock(mu_);
    --live_;
    cv_.notify_all();
  }
  bool WaitForLive(const std::function<bool(int)>& ready, milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ready(live_); });
  }
  int max_live() {
    std::lock_guard lock(mu_);
    return max_live_;
  }
  std::atomic<uint64_t> executes{0};
  std::atomic<int> drivers_made{0};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;
  int max_live_ = 0;
};

// The noop driver, counted.
class CountingDriver final : public db::Driver {
 public:
  CountingDriver(std::unique_ptr<db::Driver> inner, DatabaseCounters& counters,
                 std::optional<std::string> connect_error)
      : inner_(std::move(inner)), counters_(counters), connect_error_(std::move(connect_error)) {}
  db::Dialect dialect() const override { return inner_->dialect(); }
  db::Capabilities capabilities() const override { return inner_->capabilities(); }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    if (connect_error_) return absl::UnavailableError(*connect_error_);
    absl::StatusOr<std::unique_ptr<db::Session>> session = inner_->Connect();
    if (!session.ok()) return session.status();
    return std::make_unique<Session>(*std::move(session), counters_);
  }

 private:
  class Session final : public db::ForwardingSession {
   public:
    Session(std::unique_ptr<db::Session> inner, DatabaseCounters& counters)
        : ForwardingSession(std::move(inner)), counters_(counters) {
      counters_.SessionOpened();
    }
    ~Session() override { counters_.SessionClosed(); }
    db::ExecOutcome Execute(int id, std::span<const db::Value> params,
                            bool capture_first_value) override {
      ++counters_.executes;
      return ForwardingSession::Execute(id, params, capture_first_value);
    }

   private:
    DatabaseCounters& counters_;
  };

  std::unique_ptr<db::Driver> inner_;
  DatabaseCounters& counters_;
  std::optional<std::string> connect_error_;
};

v1::Plan NoopPlan() {
  v1::Plan plan;
  plan.set_name("agent-link-test");
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(4);
  plan.mutable_target()->mutable_noop()->set_fixed_ns(100 * kMicrosecond);
  plan.set_workload("oltp");
  plan.set_scenario("point_select");
  plan.set_seed(7);
  return plan;
}

v1::Plan OpenPlan(double rate, Nanos duration) {
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_load()->mutable_open()->set_arrival(v1::OpenLoad::UNIFORM);
  plan.mutable_stop()->set_duration_ns(duration);
  return plan;
}

// The whole plan for one agent.
v1::CoordinatorMessage Assign(const std::string& run_id, const v1::Plan& plan) {
  v1::CoordinatorMessage message;
  v1::Assignment& assignment = *message.mutable_assign();
  assignment.set_run_id(run_id);
  *assignment.mutable_plan() = plan;
  assignment.set_agent_index(0);
  assignment.set_agent_count(1);
  assignment.set_first_slot(0);
  if (plan.load().has_open()) {
    assignment.mutable_load()->set_rate(plan.load().open().rate());
    assignment.set_total_slots(plan.target().pool());
  } else {
    assignment.mutable_load()->set_clients(plan.load().closed().clients());
    assignment.set_total_slots(plan.target().pool());
  }
  assignment.set_queries(plan.stop().queries());
  return message;
}

class AgentLinkTest : public testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<FakeServer>(0); }

  void TearDown() override {
    StopAgent();
    if (HasFailure()) {
      std::lock_guard lock(events_mu_);
      for (const std::string& line : events_) std::cerr << "agent event: " << line << "\n";
    }
    server_.reset();
  }

  void StartAgent(Nanos dead_man_timeout = 5 * kSecond) {
    AgentLinkOptions options;
    options.coordinator = absl::StrCat("127.0.0.1:", server_->port());
    options.name = "agent-under-test";
    options.capacity = 2.5;
    options.dead_man_timeout = dead_man_timeout;
    options.heartbeat_interval = 200 * kMillisecond;
    options.reconnect_backoff_min = 50 * kMillisecond;
    options.reconnect_backoff_max = 400 * kMillisecond;
    options.on_event = [this](const std::string& line) {
      std::lock_guard lock(events_mu_);
      events_.push_back(line);
    };
    if (resources_) options.resources = resources_;
    if (allow_target_) options.allow_target = *allow_target_;
    options.resolver = resolver_;
    DriverFactory factory = [this](const v1::Target& target, std::string password,
                                   Clock& clock) -> absl::StatusOr<std::unique_ptr<db::Driver>> {
      ++counters_.drivers_made;
      {
        std::lock_guard lock(events_mu_);
        dialed_.push_back(target.dial_address());
      }
      std::optional<std::string> connect_error;
      if (fail_connect_) {
        // A careless driver that echoes its connection string: the agent must scrub it.
        connect_error = absl::StrCat("authentication failed for user x password=", password);
      }
      auto noop = std::make_unique<db::NoopDriver>(
          db::NoopOptions{.fixed_latency = target.noop().fixed_ns()}, clock);
      return std::make_unique<CountingDriver>(std::move(noop), counters_, connect_error);
    };
    link_ = std::make_unique<AgentLink>(options, factory, clock_);
    std::promise<absl::Status> ended;
    run_ended_ = ended.get_future();
    agent_thread_ =
        std::thread([this, ended = std::move(ended)]() mutable { ended.set_value(link_->Run()); });
  }

  void StopAgent() {
    if (link_ == nullptr) return;
    link_->Shutdown();
    agent_thread_.join();
    link_.reset();
  }

  FakeCoordinator& coordinator() { return server_->coordinator(); }

  bool WaitForHellos(int count, milliseconds timeout = milliseconds(5000)) {
    FakeCoordinator& c = coordinator();
    return c.WaitFor([&] { return c.HelloCountLocked() >= count; }, timeout);
  }

  bool WaitForReports(const std::string& run_id, int count, milliseconds timeout) {
    FakeCoordinator& c = coordinator();
    return c.WaitFor([&] { return c.ReportCountLocked(run_id) >= count; }, timeout);
  }

  // The run's reports, after its final one arrived.
  std::vector<v1::AgentReport> WaitForFinal(const std::string& run_id, milliseconds timeout) {
    FakeCoordinator& c = coordinator();
    EXPECT_TRUE(c.WaitFor([&] { return c.HasFinalLocked(run_id); }, timeout))
        << "no final report for " << run_id;
    std::vector<v1::AgentReport> reports;
    for (const auto& r : c.Reports(run_id)) reports.push_back(r.message.report());
    return reports;
  }

  // Checks the numbering and the final flag, and returns the executed total.
  uint64_t CheckSequenceAndSum(const std::vector<v1::AgentReport>& reports) {
    uint64_t executed = 0;
    for (size_t i = 0; i < reports.size(); ++i) {
      EXPECT_EQ(reports[i].sequence(), i + 1);
      EXPECT_EQ(reports[i].final(), i + 1 == reports.size()) << "report " << i + 1;
      absl::StatusOr<IntervalSnapshot> snapshot = SnapshotFromReport(reports[i], 1);
      EXPECT_TRUE(snapshot.ok()) << snapshot.status();
      if (snapshot.ok()) {
        executed += snapshot->Executed();
        EXPECT_EQ(snapshot->Errors(), 0u);
      }
    }
    return executed;
  }

  SteadyClock clock_;
  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<AgentLink> link_;
  std::thread agent_thread_;
  std::future<absl::Status> run_ended_;  // what Run() returned
  DatabaseCounters counters_;
  bool fail_connect_ = false;
  std::function<AgentResources()> resources_;  // empty: the machine's own
  std::optional<TargetAllowList> allow_target_;  // empty: the default (loopback)
  std::shared_ptr<Resolver> resolver_;           // empty: the system's
  std::mutex events_mu_;
  std::vector<std::string> events_;
  std::vector<std::string> dialed_;  // dial_address of each target a driver was made for
};

TEST(CoordinatorAddressTest, PlainTextOnlyToLoopbackAndAlwaysHostPort) {
  for (const char* good : {"127.0.0.1:7000", "127.9.9.9:1", "localhost:65535", "LOCALHOST:80",
                           "[::1]:7000", "[::ffff:127.0.0.1]:7000"}) {
    EXPECT_TRUE(CheckCoordinatorAddress(good).ok()) << good;
  }
  TransportSecurity tls;
  tls.tls = true;
  TransportSecurity trusted_network;
  trusted_network.allow_insecure_remote = true;
  for (const char* remote :
       {"10.0.0.1:7000", "example.com:7000", "[2001:db8::1]:7000", "128.0.0.1:7000"}) {
    const absl::Status status = CheckCoordinatorAddress(remote);
    EXPECT_FALSE(status.ok()) << remote;
    EXPECT_THAT(status.message(), HasSubstr("not on this machine, and the link would be plain"));
    EXPECT_TRUE(CheckCoordinatorAddress(remote, tls).ok()) << remote;
    EXPECT_TRUE(CheckCoordinatorAddress(remote, trusted_network).ok()) << remote;
  }
  for (const char* malformed :
       {"", "127.0.0.1", "::1:7000", "dns:///localhost:7000", "127.0.0.1:0", "127.0.0.1:70000",
        "127.0.0.1:x", "[::1]7000", "ipv4:127.0.0.1:7000", ":7000"}) {
    EXPECT_FALSE(CheckCoordinatorAddress(malformed).ok()) << malformed;
    EXPECT_FALSE(CheckCoordinatorAddress(malformed, tls).ok()) << malformed;
  }
}

TEST(LinkRefusalTest, OnlyRefusalsThatEveryRetryWouldRepeatArePermanent) {
  for (absl::StatusCode permanent :
       {absl::StatusCode::kUnauthenticated, absl::StatusCode::kPermissionDenied,
        absl::StatusCode::kFailedPrecondition, absl::StatusCode::kInvalidArgument,
        absl::StatusCode::kUnimplemented}) {
    EXPECT_TRUE(IsPermanentLinkRefusal(permanent)) << absl::StatusCodeToString(permanent);
  }
  for (absl::StatusCode passing :
       {absl::StatusCode::kOk, absl::StatusCode::kUnavailable, absl::StatusCode::kCancelled,
        absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kAlreadyExists,
        absl::StatusCode::kResourceExhausted, absl::StatusCode::kInternal,
        absl::StatusCode::kUnknown, absl::StatusCode::kAborted}) {
    EXPECT_FALSE(IsPermanentLinkRefusal(passing)) << absl::StatusCodeToString(passing);
  }
}

// A refused token ends Run() after one try, with the coordinator's reason, and no retry is
// logged; a coordinator that is only unavailable is retried.
TEST_F(AgentLinkTest, ARefusedTokenEndsTheLinkAtOnceWithTheReason) {
  coordinator().RefuseWith(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                        "the token sent is not this coordinator's (--token-file)"));
  StartAgent();
  ASSERT_EQ(run_ended_.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the agent is still retrying";
  const absl::Status ended = run_ended_.get();
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(ended.message(), HasSubstr(absl::StrCat("coordinator 127.0.0.1:", server_->port(),
                                                      " refused this agent")));
  EXPECT_THAT(ended.message(), HasSubstr("the token sent is not this coordinator's"));
  FakeCoordinator& c = coordinator();
  EXPECT_TRUE(c.WaitFor([&] { return c.RefusedLocked() == 1; }, milliseconds(0)));
  std::lock_guard lock(events_mu_);
  for (const std::string& line : events_) EXPECT_THAT(line, Not(HasSubstr("reconnecting")));
}

TEST_F(AgentLinkTest, AnUnavailableCoordinatorIsRetried) {
  coordinator().RefuseWith(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
  StartAgent();
  FakeCoordinator& c = coordinator();
  EXPECT_TRUE(c.WaitFor([&] { return c.RefusedLocked() >= 3; }, milliseconds(10000)));
  EXPECT_EQ(run_ended_.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
}

TEST_F(AgentLinkTest, HelloSaysWhoTheAgentIs) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  const v1::AgentHello hello = coordinator().Hellos().front();
  EXPECT_EQ(hello.protocol_version(), kAgentProtocolVersion);
  EXPECT_EQ(hello.name(), "agent-under-test");
  EXPECT_FALSE(hello.host().empty());
  EXPECT_EQ(hello.cores(), UsableCores());
  EXPECT_FALSE(hello.version().empty());
  EXPECT_EQ(hello.capacity(), 2.5);
  // And the agent's own heartbeats follow on the same stream.
  FakeCoordinator& c = coordinator();
  EXPECT_TRUE(c.WaitFor(
      [&] {
        for (const auto& r : c.ReceivedLocked()) {
          if (r.message.has_heartbeat()) return true;
        }
        return false;
      },
      milliseconds(3000)));
}

TEST_F(AgentLinkTest, OpenLoopReportsAddUpToWhatRan) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(coordinator().Send(Assign("open-1", OpenPlan(1'000, 2 * kSecond))));
  const std::vector<v1::AgentReport> reports = WaitForFinal("open-1", milliseconds(6000));
  ASSERT_GE(reports.size(), 3u);  // at least two intervals and the final report
  const uint64_t executed = CheckSequenceAndSum(reports);
  const v1::AgentReport& final = reports.back();
  EXPECT_EQ(final.end_reason(), "duration");
  EXPECT_TRUE(final.fatal_error().empty()) << final.fatal_error();
  EXPECT_NEAR(final.measured_s(), 2.0, 0.05);
  // Exact: everything the pacer released ran and was reported once.
  EXPECT_EQ(executed, 2'000u - final.not_started());
  EXPECT_EQ(executed, counters_.executes.load());  // point_select: one statement each
  EXPECT_LT(final.not_started(), 20u);
  // Sessions are counted while they live: all 4 during the run, fewer as they close at its end.
  EXPECT_EQ(reports[0].connections(), 4u);
  double interval_total = 0;
  for (size_t i = 0; i + 1 < reports.size(); ++i) {
    EXPECT_GE(reports[i].cpu_seconds(), 0.0);
    EXPECT_FALSE(reports[i].warmup());
    interval_total += reports[i].interval_s();
  }
  EXPECT_NEAR(interval_total, 2.0, 0.05);
  EXPECT_NEAR(reports[reports.size() - 2].elapsed_s(), 2.0, 0.05);
}

// Other agents' last transactions may still run when this agent's load ends: it says so and
// keeps its connections open until the coordinator's CloseSessions, then closes them and sends
// its final report, the hold in none of its figures.
TEST_F(AgentLinkTest, AfterItsLoadTheAgentHoldsItsConnectionsUntilCloseSessions) {
  FakeCoordinator& c = coordinator();
  c.HoldSessions();
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(c.Send(Assign("hold-1", OpenPlan(1'000, kSecond))));
  ASSERT_TRUE(c.WaitFor(
      [&] {
        return c.ReceivedLocked([](const v1::AgentMessage& m) {
          return m.has_load_over() && m.load_over().run_id() == "hold-1";
        });
      },
      milliseconds(5000)));
  EXPECT_FALSE(c.WaitFor([&] { return c.HasFinalLocked("hold-1"); }, milliseconds(500)));
  EXPECT_TRUE(counters_.WaitForLive([](int live) { return live == 4; }, milliseconds(0)));
  v1::CoordinatorMessage close;
  close.mutable_close_sessions()->set_run_id("hold-1");
  ASSERT_TRUE(c.Send(close));
  const std::vector<v1::AgentReport> reports = WaitForFinal("hold-1", milliseconds(3000));
  EXPECT_TRUE(counters_.WaitForLive([](int live) { return live == 0; }, milliseconds(3000)));
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().end_reason(), "duration");
  EXPECT_NEAR(reports.back().measured_s(), 1.0, 0.05);
}

// Agents of one run open their connections at their own pace: each says when its sessions are
// open and starts its load only on the coordinator's StartLoad, the wait in none of its figures.
TEST_F(AgentLinkTest, TheAgentStartsItsLoadOnStartLoadNotWhenItsSessionsAreOpen) {
  FakeCoordinator& c = coordinator();
  c.HoldStart();
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(c.Send(Assign("start-1", OpenPlan(1'000, kSecond))));
  ASSERT_TRUE(c.WaitFor(
      [&] {
        return c.ReceivedLocked([](const v1::AgentMessage& m) {
          return m.has_sessions_ready() && m.sessions_ready().run_id() == "start-1";
        });
      },
      milliseconds(5000)));
  EXPECT_TRUE(counters_.WaitForLive([](int live) { return live == 4; }, milliseconds(1000)));
  // Held: no statement, no report (a report would mean the load's clock runs).
  EXPECT_FALSE(c.WaitFor(
      [&] { return c.ReceivedLocked([](const v1::AgentMessage& m) { return m.has_report(); }); },
      milliseconds(1500)));
  EXPECT_EQ(counters_.executes.load(), 0u);

  v1::CoordinatorMessage start;
  start.mutable_start_load()->set_run_id("start-1");
  ASSERT_TRUE(c.Send(start));
  const std::vector<v1::AgentReport> reports = WaitForFinal("start-1", milliseconds(4000));
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().end_reason(), "duration");
  EXPECT_NEAR(reports.back().measured_s(), 1.0, 0.05);
  EXPECT_NEAR(static_cast<double>(counters_.executes.load()), 1'000, 50);
}

// A run stopped while its agent waits for StartLoad ends there: no load, its sessions closed.
TEST_F(AgentLinkTest, AStopWhileWaitingForStartLoadEndsTheRunWithoutLoad) {
  FakeCoordinator& c = coordinator();
  c.HoldStart();
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(c.Send(Assign("start-2", OpenPlan(1'000, 10 * kSecond))));
  ASSERT_TRUE(c.WaitFor(
      [&] {
        return c.ReceivedLocked([](const v1::AgentMessage& m) { return m.has_sessions_ready(); });
      },
      milliseconds(5000)));
  v1::CoordinatorMessage stop;
  stop.mutable_stop()->set_run_id("start-2");
  stop.mutable_stop()->set_reason("by the test");
  ASSERT_TRUE(c.Send(stop));
  const std::vector<v1::AgentReport> reports = WaitForFinal("start-2", milliseconds(3000));
  ASSERT_EQ(reports.size(), 1u);  // the final one only: no interval ran
  EXPECT_EQ(reports.back().end_reason(), "stopped: by the test");
  EXPECT_EQ(reports.back().end_reason_kind(), v1::END_REASON_STOPPED);
  EXPECT_EQ(reports.back().measured_s(), 0);
  EXPECT_EQ(counters_.executes.load(), 0u);
  EXPECT_TRUE(counters_.WaitForLive([](int live) { return live == 0; }, milliseconds(1000)));
}

TEST_F(AgentLinkTest, ClosedLoopFollowsALoadChange) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  v1::Plan plan = NoopPlan();
  plan.mutable_target()->mutable_noop()->set_fixed_ns(kMillisecond);
  plan.mutable_load()->mutable_closed()->set_clients(2);
  // 3 s: the change comes after the first interval, and the second closes with all 4 running.
  plan.mutable_stop()->set_duration_ns(3 * kSecond);
  ASSERT_TRUE(coordinator().Send(Assign("closed-1", plan)));
  ASSERT_TRUE(WaitForReports("closed-1", 1, milliseconds(3000)));
  EXPECT_EQ(coordinator().Reports("closed-1").front().message.report().connections(), 2u);

  // Own slots 0-1 of 4 (the pool): more clients need slots handed over with the change, from
  // beyond the agent's own range and within the run's.
  v1::CoordinatorMessage change;
  change.mutable_change()->set_run_id("closed-1");
  change.mutable_change()->mutable_load()->set_clients(4);
  ASSERT_TRUE(coordinator().Send(change));
  change.mutable_change()->set_extra_first_slot(3);
  change.mutable_change()->set_extra_slot_count(2);
  ASSERT_TRUE(coordinator().Send(change));
  change.mutable_change()->set_extra_first_slot(1);
  ASSERT_TRUE(coordinator().Send(change));
  change.mutable_change()->set_extra_first_slot(2);
  ASSERT_TRUE(coordinator().Send(change));
  FakeCoordinator& c = coordinator();
  EXPECT_TRUE(c.WaitFor(
      [&] {
        for (const auto& r : c.ReceivedLocked()) {
          if (r.message.has_report() && r.message.report().connections() == 4) return true;
        }
        return false;
      },
      milliseconds(3000)));
  const std::vector<v1::AgentReport> reports = WaitForFinal("closed-1", milliseconds(4000));
  const uint64_t executed = CheckSequenceAndSum(reports);
  EXPECT_EQ(reports.back().end_reason(), "duration");
  EXPECT_EQ(counters_.max_live(), 4);
  EXPECT_EQ(executed, counters_.executes.load());
  // 2 then 4 clients at ~1 ms each: an interval with 4 does well above what the first, with 2,
  // did. Relative, so that a machine loaded by other tests slows both alike.
  ASSERT_GE(reports.size(), 2u);
  auto executed_in = [](const v1::AgentReport& report) -> uint64_t {
    absl::StatusOr<IntervalSnapshot> snapshot = SnapshotFromReport(report, 1);
    return snapshot.ok() ? snapshot->Executed() : 0;
  };
  uint64_t with_four = 0;
  for (const v1::AgentReport& report : reports) {
    if (report.connections() == 4) with_four = std::max(with_four, executed_in(report));
  }
  EXPECT_GT(static_cast<double>(with_four), 1.4 * static_cast<double>(executed_in(reports[0])));
  std::lock_guard lock(events_mu_);
  EXPECT_THAT(events_, Contains(HasSubstr("closed-1: 4 clients, but slots for 2")));
  EXPECT_THAT(events_, Contains(HasSubstr("closed-1: slots 3 + 2 outside the run's spare slots "
                                          "(2 to 4)")));
  EXPECT_THAT(events_, Contains(HasSubstr("closed-1: slots 1 + 2 outside")));
  EXPECT_THAT(events_, Contains(HasSubstr("closed-1: 4 clients (slots 2 to 3 added)")));
}

TEST_F(AgentLinkTest, StopLoadEndsTheRunEarly) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(coordinator().Send(Assign("stop-1", OpenPlan(1'000, 3 * kSecond))));
  ASSERT_TRUE(WaitForReports("stop-1", 1, milliseconds(3000)));
  v1::CoordinatorMessage stop;
  stop.mutable_stop()->set_run_id("stop-1");
  stop.mutable_stop()->set_reason("test over");
  ASSERT_TRUE(coordinator().Send(stop));
  const std::vector<v1::AgentReport> reports = WaitForFinal("stop-1", milliseconds(2000));
  const uint64_t executed = CheckSequenceAndSum(reports);
  EXPECT_EQ(reports.back().end_reason(), "stopped: test over");
  EXPECT_TRUE(reports.back().fatal_error().empty());
  EXPECT_LT(reports.back().measured_s(), 2.5);
  EXPECT_LT(executed, 2'500u);
  EXPECT_EQ(executed, counters_.executes.load());
  EXPECT_TRUE(counters_.WaitForLive([](int live) { return live == 0; }, milliseconds(1000)));
}

TEST_F(AgentLinkTest, AssignmentWhileBusyIsRefusedWithAFinalReport) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  ASSERT_TRUE(coordinator().Send(Assign("first", OpenPlan(500, 3 * kSecond))));
  ASSERT_TRUE(coordinator().Send(Assign("second", OpenPlan(500, 3 * kSecond))));
  const std::vector<v1::AgentReport> refused = WaitForFinal("second", milliseconds(2000));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].sequence(), 1u);
  EXPECT_EQ(refused[0].fatal_error(), "agent busy with run first");
  EXPECT_EQ(refused[0].end_reason(), "not started");

  v1::CoordinatorMessage stop;
  stop.mutable_stop()->set_run_id("first");
  ASSERT_TRUE(coordinator().Send(stop));
  const std::vector<v1::AgentReport> first = WaitForFinal("first", milliseconds(2000));
  CheckSequenceAndSum(first);
  EXPECT_EQ(first.back().end_reason(), "stopped: by the coordinator");
  EXPECT_EQ(counters_.drivers_made.load(), 1);
}

TEST_F(AgentLinkTest, BadPlanGetsAFatalFinalReportAndNoLoad) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  v1::Plan plan = OpenPlan(1'000, 2 * kSecond);
  plan.set_scenario("no_such_scenario");
  ASSERT_TRUE(coordinator().Send(Assign("bad-1", plan)));
  const std::vector<v1::AgentReport> reports = WaitForFinal("bad-1", milliseconds(2000));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(reports[0].final());
  EXPECT_EQ(reports[0].sequence(), 1u);
  EXPECT_THAT(reports[0].fatal_error(), HasSubstr("run bad-1 plan: scenario:"));
  EXPECT_THAT(reports[0].fatal_error(), HasSubstr("no_such_scenario"));
  EXPECT_EQ(counters_.drivers_made.load(), 0);
  EXPECT_EQ(counters_.executes.load(), 0u);

  // More than the plan asks for is refused too, whatever the coordinator computed.
  v1::CoordinatorMessage greedy = Assign("greedy-1", OpenPlan(1'000, 2 * kSecond));
  greedy.mutable_assign()->mutable_load()->set_rate(2'000);
  ASSERT_TRUE(coordinator().Send(greedy));
  const std::vector<v1::AgentReport> greedy_reports = WaitForFinal("greedy-1", milliseconds(2000));
  ASSERT_EQ(greedy_reports.size(), 1u);
  EXPECT_THAT(greedy_reports[0].fatal_error(), HasSubstr("load.rate"));
  EXPECT_EQ(counters_.drivers_made.load(), 0);
}

// Resolves every name to one address.
class OneAddressResolver final : public Resolver {
 public:
  explicit OneAddressResolver(std::string address) : address_(std::move(address)) {}
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string&) override {
    return std::vector<std::string>{address_};
  }

 private:
  std::string address_;
};

// The agent is the authority on where its load goes: it tells its list in its hello, refuses a
// target outside it before making a driver, and dials the address it checked.
TEST_F(AgentLinkTest, TargetsOutsideTheAllowListAreRefusedAndTheCheckedAddressIsDialed) {
  absl::StatusOr<TargetAllowList> allow = TargetAllowList::Parse({"127.0.0.1/32"});
  ASSERT_TRUE(allow.ok());
  allow_target_ = *allow;
  resolver_ = std::make_shared<OneAddressResolver>("127.0.0.1");
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  EXPECT_THAT(coordinator().Hellos().front().allow_target(), ElementsAre("127.0.0.1/32"));

  v1::Plan plan = OpenPlan(1'000, 200 * kMillisecond);
  plan.mutable_target()->set_driver("postgresql");  // the factory makes a noop driver anyway
  plan.mutable_target()->clear_noop();
  plan.mutable_target()->set_host("127.0.0.2");
  plan.mutable_target()->set_port(5432);
  ASSERT_TRUE(coordinator().Send(Assign("outside-1", plan)));
  const std::vector<v1::AgentReport> refused = WaitForFinal("outside-1", milliseconds(3000));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(refused[0].target_refused());
  EXPECT_EQ(refused[0].end_reason(), "not started");
  EXPECT_EQ(refused[0].fatal_error(),
            "run outside-1: agent 'agent-under-test' refuses target 127.0.0.2:5432: not in its "
            "--allow-target (127.0.0.1/32); start the agent with --allow-target 127.0.0.2 (or a "
            "CIDR that holds it) to send load there");
  EXPECT_EQ(counters_.drivers_made.load(), 0);

  // A name resolving inside the list: the driver dials the address checked, whatever the
  // coordinator put in dial_address, and every report says where the load went.
  plan.mutable_target()->set_host("db.example");
  plan.mutable_target()->set_dial_address("192.0.2.1");
  ASSERT_TRUE(coordinator().Send(Assign("inside-1", plan)));
  const std::vector<v1::AgentReport> ran = WaitForFinal("inside-1", milliseconds(5000));
  ASSERT_FALSE(ran.empty());
  EXPECT_FALSE(ran.back().target_refused());
  EXPECT_EQ(ran.back().fatal_error(), "");
  for (const v1::AgentReport& report : ran) EXPECT_EQ(report.target_address(), "127.0.0.1:5432");
  std::lock_guard lock(events_mu_);
  EXPECT_THAT(dialed_, ElementsAre("127.0.0.1"));
}

// The agent's room is injected: it says it in its hello and keeps to it for each assignment,
// refusing before it makes a driver or starts a thread (100,000 clients, one thread each, crashed
// every agent past pid_max).
TEST_F(AgentLinkTest, AnAssignmentBeyondTheAgentsThreadsIsRefusedBeforeAnyLoad) {
  resources_ = [] {
    return AgentResources{.threads = 20,
                          .threads_bound = "kernel.pid_max 400, 380 threads on the machine",
                          .files = 500,
                          .files_bound = "RLIMIT_NOFILE 512, 12 open"};
  };
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  const v1::AgentHello hello = coordinator().Hellos().front();
  EXPECT_EQ(hello.resources().threads(), 20u);
  EXPECT_EQ(hello.resources().files_bound(), "RLIMIT_NOFILE 512, 12 open");
  v1::Plan plan = OpenPlan(1'000, 2 * kSecond);
  plan.mutable_target()->set_pool(16);
  ASSERT_TRUE(coordinator().Send(Assign("big-1", plan)));
  const std::vector<v1::AgentReport> reports = WaitForFinal("big-1", milliseconds(3000));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].end_reason(), "not started");
  EXPECT_EQ(reports[0].fatal_error(),
            "run big-1 plan: target.pool: agent agent-under-test cannot run 16 connections: they "
            "need 24 threads (one each, plus 8), and it can start 20 more (kernel.pid_max 400, "
            "380 threads on the machine); use fewer connections per agent (more agents), or "
            "raise the limit");
  EXPECT_EQ(counters_.drivers_made.load(), 0);
  EXPECT_EQ(counters_.executes.load(), 0u);
}

TEST(AgentResourcesTest, TheTightestBoundLessWhatIsInUseIsNamed) {
  HostLimits limits;
  limits.threads_max = 190'000;
  limits.pid_max = 32'768;
  limits.tasks_in_use = 768;
  AgentResources room = ComputeAgentResources(limits);
  EXPECT_EQ(room.threads, 32'000u);
  EXPECT_EQ(room.threads_bound, "kernel.pid_max 32768, 768 threads on the machine");
  EXPECT_EQ(room.files, 0u);  // no RLIMIT_NOFILE: unknown, not checked
  limits.nproc_limit = 300;
  limits.user_tasks = 100;
  limits.nofile_limit = 64;
  limits.open_files = 20;
  room = ComputeAgentResources(limits);
  EXPECT_EQ(room.threads, 200u);
  EXPECT_EQ(room.threads_bound, "RLIMIT_NPROC 300, 100 threads of this user in use");
  EXPECT_EQ(room.files, 44u);
  EXPECT_EQ(room.files_bound, "RLIMIT_NOFILE 64, 20 open");
  // Each thread reserves a stack in the address space.
  limits.address_space_limit = uint64_t{1} << 30;
  limits.address_space_used = uint64_t{512} << 20;
  limits.stack_bytes = uint64_t{8} << 20;
  room = ComputeAgentResources(limits);
  EXPECT_EQ(room.threads, 64u);
  EXPECT_THAT(room.threads_bound, HasSubstr("RLIMIT_AS 1073741824 bytes"));
  // None left is still a known bound (0 on the wire would mean unknown).
  limits.open_files = 64;
  EXPECT_EQ(ComputeAgentResources(limits).files, 1u);
  // This machine's own figures are read.
  const AgentResources here = ReadAgentResources();
  EXPECT_GT(here.threads, 0u);
  EXPECT_GT(here.files, 0u);
  EXPECT_THAT(here.files_bound, HasSubstr("RLIMIT_NOFILE"));
}

TEST_F(AgentLinkTest, ConnectFailureIsFatalAndNeverShowsThePassword) {
  ASSERT_EQ(setenv("DBLOAD_AGENT_LINK_TEST_PASSWORD", "s3cret-value", 1), 0);
  fail_connect_ = true;
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  v1::Plan plan = OpenPlan(1'000, 2 * kSecond);
  plan.mutable_target()->set_password_env("DBLOAD_AGENT_LINK_TEST_PASSWORD");
  ASSERT_TRUE(coordinator().Send(Assign("auth-1", plan)));
  const std::vector<v1::AgentReport> reports = WaitForFinal("auth-1", milliseconds(3000));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_THAT(reports[0].fatal_error(), HasSubstr("authentication failed"));
  EXPECT_THAT(reports[0].fatal_error(), Not(HasSubstr("s3cret-value")));
  EXPECT_EQ(reports[0].end_reason(), "not started");
  EXPECT_EQ(counters_.executes.load(), 0u);

  // A password that cannot be read is named, not shown, and nothing starts.
  v1::Plan unreadable = OpenPlan(1'000, 2 * kSecond);
  unreadable.mutable_target()->set_password_env("DBLOAD_AGENT_LINK_TEST_UNSET_VARIABLE");
  ASSERT_TRUE(coordinator().Send(Assign("auth-2", unreadable)));
  const std::vector<v1::AgentReport> unread = WaitForFinal("auth-2", milliseconds(3000));
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_THAT(unread[0].fatal_error(), HasSubstr("DBLOAD_AGENT_LINK_TEST_UNSET_VARIABLE"));
  EXPECT_EQ(counters_.drivers_made.load(), 1);
}

TEST_F(AgentLinkTest, QueryShareEndsTheRunAtExactlyThatCount) {
  StartAgent();
  ASSERT_TRUE(WaitForHellos(1));
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_closed()->set_clients(2);
  plan.mutable_stop()->set_queries(1'000);
  v1::CoordinatorMessage assign = Assign("queries-1", plan);
  assign.mutable_assign()->set_queries(300);  // another agent does the other 700
  ASSERT_TRUE(coordinator().Send(assign));
  const std::vector<v1::AgentReport> reports = WaitForFinal("queries-1", milliseconds(3000));
  EXPECT_EQ(CheckSequenceAndSum(reports), 300u);
  EXPECT_EQ(reports.back().end_reason(), "queries");

  // A zero share of a count-limited plan: nothing to do, at once.
  v1::CoordinatorMessage none = Assign("queries-2", plan);
  none.mutable_assign()->set_queries(0);
  ASSERT_TRUE(coordinator().Send(none));
  const std::vector<v1::AgentReport> idle = WaitForFinal("queries-2", milliseconds(2000));
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].end_reason(), "queries");
  EXPECT_TRUE(idle[0].fatal_error().empty());
  EXPECT_EQ(counters_.executes.load(), 300u);
}

TEST_F(AgentLinkTest, SilentCoordinatorStopsTheLoadAndARestartedOneIsFoundAgain) {
  constexpr Nanos kDeadMan = kSecond;
  StartAgent(kDeadMan);
  ASSERT_TRUE(WaitForHellos(1));
  v1::CoordinatorMessage assign = Assign("dm-1", OpenPlan(1'000, 3 * kSecond));
  assign.mutable_assign()->set_dead_man_timeout_ns(kDeadMan);
  ASSERT_TRUE(coordinator().Send(assign));
  ASSERT_TRUE(WaitForReports("dm-1", 1, milliseconds(3000)));

  // Silent, but the stream stays open: only the dead-man timer can notice.
  const SteadyTime last_word = coordinator().GoSilent();
  FakeCoordinator& c = coordinator();
  ASSERT_TRUE(c.WaitFor([&] { return c.EndedAtLocked(1).has_value(); }, milliseconds(4000)))
      << "the agent did not drop the silent coordinator's stream";
  ASSERT_TRUE(counters_.WaitForLive([](int live) { return live == 0; }, milliseconds(4000)));
  const SteadyTime load_stopped = std::chrono::steady_clock::now();
  const SteadyTime dropped = *c.EndedAt(1);
  // Not before the timeout (a heartbeat every 200 ms kept it alive until then) …
  EXPECT_GE(dropped - last_word, milliseconds(950));
  // … and within the timeout plus one interval.
  EXPECT_LE(load_stopped - last_word, milliseconds(2000));
  // Its reports stop: all of them came on the first stream, none after it ended.
  const std::vector<FakeCoordinator::Received> dm_reports = c.Reports("dm-1");
  for (const auto& r : dm_reports) {
    EXPECT_EQ(r.connection, 1);
    EXPECT_LE(r.at, dropped);
    EXPECT_FALSE(r.message.report().final());  // it went nowhere: the stream was gone
  }
  const uint64_t executed_when_stopped = counters_.executes.load();
  EXPECT_LT(executed_when_stopped, 3'000u);

  // The agent comes back to the same (still silent) coordinator and says hello again, idle.
  ASSERT_TRUE(WaitForHellos(2, milliseconds(3000)));

  // A restarted coordinator on the same port is found again.
  const int port = server_->port();
  server_.reset();
  server_ = std::make_unique<FakeServer>(port);
  ASSERT_EQ(server_->port(), port);
  ASSERT_TRUE(WaitForHellos(1, milliseconds(5000))) << "no hello after the restart";
  EXPECT_EQ(coordinator().Hellos().front().name(), "agent-under-test");
  // The stopped run was not resumed: no load since, no reports of it to the new coordinator.
  EXPECT_EQ(counters_.executes.load(), executed_when_stopped);
  EXPECT_TRUE(coordinator().Reports("dm-1").empty());
  // And it takes new work.
  ASSERT_TRUE(coordinator().Send(Assign("after-1", OpenPlan(200, 500 * kMillisecond))));
  const std::vector<v1::AgentReport> after = WaitForFinal("after-1", milliseconds(3000));
  EXPECT_EQ(CheckSequenceAndSum(after), 100u - after.back().not_started());
  EXPECT_EQ(after.back().end_reason(), "duration");
}

}  // namespace
}  // namespace dbload
