// The coordinator in-process on 127.0.0.1:0, driven by fake agents written here: gRPC clients
// that say hello, take their assignment and send scripted reports built from known histograms.
// Time is simulated and ticks are called by hand, so what the coordinator decides is
// deterministic; only the RPCs themselves run on real threads.
// Its length: its cases share one fixture (a coordinator and its fake agents); the units cut out
// of the coordinator have their own tests, and these are what only the whole service can show.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/control_client.h"
#include "proto/agent_protocol.h"
#include "base/histogram.h"
#include "interval/interval_snapshot.h"
#include "plan/plan_limits.h"
#include "report/report.h"
#include "net/transport_security.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/metrics_exporter.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.grpc.pb.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Kind = v1::CoordinatorMessage::KindCase;

// Bounds every real-time wait of a test, so that a bug fails the test instead of hanging it.
constexpr auto kPatience = std::chrono::seconds(10);

// A fake agent: one AgentLink stream, a thread that collects whatever the coordinator sends.
class FakeAgent {
 public:
  FakeAgent(const std::string& address, const std::string& name,
            uint32_t protocol_version = kAgentProtocolVersion, double capacity = 0,
            const v1::AgentResources& resources = {},
            const std::vector<std::string>& allow_target = {}) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxRpcMessageBytes);  // as agents dial (agent_link.cc)
    args.SetMaxSendMessageSize(kMaxRpcMessageBytes);
    stub_ = v1::AgentLink::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    stream_ = stub_->Connect(&context_);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_protocol_version(protocol_version);
    hello.mutable_hello()->set_name(name);
    hello.mutable_hello()->set_host("test-host");
    hello.mutable_hello()->set_cores(2);
    hello.mutable_hello()->set_version("test");
    hello.mutable_hello()->set_capacity(capacity);
    *hello.mutable_hello()->mutable_resources() = resources;
    for (const std::string& entry : allow_target) hello.mutable_hello()->add_allow_target(entry);
    stream_->Write(hello);
    reader_ = std::thread([this] {
      v1::CoordinatorMessage message;
      while (stream_->Read(&message)) {
        std::lock_guard lock(mu_);
        inbox_.push_back(message);
        cv_.notify_all();
      }
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_all();
    });
  }

  ~FakeAgent() { Close(); }

  // The next message of `kind` (heartbeats and other kinds before it are dropped), or nothing
  // if the stream closes or nothing comes in time.
  std::optional<v1::CoordinatorMessage> Next(Kind kind,
                                             std::chrono::milliseconds patience = kPatience) {
    std::unique_lock lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (true) {
      while (!inbox_.empty()) {
        v1::CoordinatorMessage message = std::move(inbox_.front());
        inbox_.pop_front();
        if (message.kind_case() == kind) return message;
      }
      if (closed_) return std::nullopt;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) return std::nullopt;
    }
  }

  bool Send(const v1::AgentReport& report) {
    v1::AgentMessage message;
    *message.mutable_report() = report;
    std::lock_guard lock(write_mu_);
    return stream_->Write(message);
  }

  bool SendLoadOver(const std::string& run_id) {
    v1::AgentMessage message;
    message.mutable_load_over()->set_run_id(run_id);
    std::lock_guard lock(write_mu_);
    return stream_->Write(message);
  }

  bool SendSessionsReady(const std::string& run_id) {
    v1::AgentMessage message;
    message.mutable_sessions_ready()->set_run_id(run_id);
    std::lock_guard lock(write_mu_);
    return stream_->Write(message);
  }

  bool SendHeartbeat() {
    v1::AgentMessage message;
    message.mutable_heartbeat()->set_sequence(1);
    std::lock_guard lock(write_mu_);
    return stream_->Write(message);
  }

  // Waits for the coordinator to end the stream (refusal, loss, shutdown); its status.
  grpc::Status WaitClosed() {
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, kPatience, [&] { return closed_; })) {
        return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the stream stayed open");
      }
    }
    return Finish();
  }

  // Leaves politely: half-close, then the coordinator ends the stream.
  grpc::Status Close() {
    if (!finished_) {
      std::lock_guard lock(write_mu_);
      stream_->WritesDone();
    }
    return Finish();
  }

 private:
  grpc::Status Finish() {
    if (finished_) return status_;
    reader_.join();
    status_ = stream_->Finish();
    finished_ = true;
    return status_;
  }

  grpc::ClientContext context_;
  std::unique_ptr<v1::AgentLink::Stub> stub_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> stream_;
  std::thread reader_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::CoordinatorMessage> inbox_;
  bool closed_ = false;
  bool finished_ = false;
  grpc::Status status_;
};

v1::Plan OpenPlan(double rate) {
  v1::Plan plan;
  plan.set_name("coordinator-test");
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(8);
  plan.set_workload("oltp");
  plan.set_scenario("point_select");
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_load()->mutable_open()->set_arrival(v1::OpenLoad::UNIFORM);
  plan.mutable_stop()->set_duration_ns(10 * kSecond);
  plan.set_seed(7);
  return plan;
}

v1::Plan ClosedPlan(uint32_t clients, uint64_t queries) {
  v1::Plan plan = OpenPlan(1);
  plan.mutable_load()->mutable_closed()->set_clients(clients);
  plan.mutable_target()->set_pool(clients);
  plan.mutable_stop()->set_duration_ns(0);
  plan.mutable_stop()->set_queries(queries);
  return plan;
}

// What every fake agent recorded, as one recorder would have seen it.
struct Union {
  Histogram response;
  Histogram service;
  Histogram lag;
  uint64_t executed = 0;
};

IntervalSnapshot RandomSnapshot(std::mt19937_64& random, int samples, Union& all) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);  // point_select has one query type
  std::lognormal_distribution<double> latency(12.5, 1.0);
  for (int i = 0; i < samples; ++i) {
    const int64_t service = static_cast<int64_t>(latency(random));
    const int64_t lag = static_cast<int64_t>(random() % 50'000);
    snapshot.query_types[0].response_time.Record(service + lag);
    snapshot.query_types[0].service_time.Record(service);
    snapshot.schedule_lag.Record(lag);
    all.response.Record(service + lag);
    all.service.Record(service);
    all.lag.Record(lag);
  }
  all.executed += samples;
  return snapshot;
}

v1::AgentReport Report(const std::string& run_id, uint64_t sequence,
                       const IntervalSnapshot& snapshot) {
  v1::AgentReport report;
  report.set_run_id(run_id);
  report.set_sequence(sequence);
  report.set_interval_s(1);
  report.set_elapsed_s(static_cast<double>(sequence));
  SnapshotToReport(snapshot, &report);
  return report;
}

v1::AgentReport Final(const std::string& run_id, uint64_t sequence,
                      const IntervalSnapshot& snapshot, double measured_s,
                      const std::string& end_reason, uint64_t not_started = 0) {
  v1::AgentReport report = Report(run_id, sequence, snapshot);
  report.set_final(true);
  report.set_measured_s(measured_s);
  report.set_end_reason(end_reason);
  report.set_not_started(not_started);
  return report;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  // Lets a derived fixture set limits and the like before the service starts.
  virtual void Configure(CoordinatorOptions& options) { (void)options; }

  void SetUp() override {
    CoordinatorOptions options;
    // Ticks by hand close their interval whoever reported (run_controller_test covers the wait).
    options.interval_wait = 0;
    Configure(options);
    options.run_ticker = false;
    options.wall_time = [] { return std::string("2024-05-01T12:00:00Z"); };
    options.metrics = &metrics_;
    service_ = std::make_unique<CoordinatorService>(clock_, options);
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start("127.0.0.1:0", *service_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = "127.0.0.1:" + std::to_string(server_->port());
    control_ =
        v1::Control::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    service_->Shutdown(0);
    agents_.clear();  // their streams were cancelled by the shutdown
    server_->Shutdown();
    service_.reset();
  }

  // Submits `plan` to the connected `agents` and takes each one's assignment (in that order):
  // the run id, or "" after a failure.
  std::string SubmitAndAssign(const v1::Plan& plan, std::initializer_list<FakeAgent*> agents,
                              std::vector<v1::Assignment>* assignments = nullptr) {
    v1::SubmitResponse submitted;
    if (const grpc::Status status = Submit(plan, submitted); !status.ok()) {
      ADD_FAILURE() << status.error_message();
      return "";
    }
    for (FakeAgent* agent : agents) {
      const std::optional<v1::CoordinatorMessage> assigned = agent->Next(Kind::kAssign);
      if (!assigned.has_value()) {
        ADD_FAILURE() << "an agent got no assignment";
        return "";
      }
      if (assignments != nullptr) assignments->push_back(assigned->assign());
    }
    return submitted.run_id();
  }

  FakeAgent& Connect(const std::string& name, double capacity = 0) {
    agents_.push_back(std::make_unique<FakeAgent>(address_, name, kAgentProtocolVersion, capacity));
    return *agents_.back();
  }

  v1::ListAgentsResponse Agents() {
    grpc::ClientContext context;
    v1::ListAgentsResponse response;
    EXPECT_TRUE(control_->ListAgents(&context, {}, &response).ok());
    return response;
  }

  // Registration happens on the server's threads: wait until it shows.
  bool WaitForAgents(
      size_t count, const std::function<bool(const v1::AgentInfo&)>& matching =
                        [](const v1::AgentInfo&) { return true; }) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      const v1::ListAgentsResponse response = Agents();
      size_t matched = 0;
      for (const auto& agent : response.agents()) matched += matching(agent) ? 1 : 0;
      if (matched == count && static_cast<size_t>(response.agents_size()) == count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  grpc::Status Submit(const v1::Plan& plan, v1::SubmitResponse& response, uint32_t min_agents = 0,
                      Nanos wait = 0) {
    grpc::ClientContext context;
    v1::SubmitRequest request;
    *request.mutable_plan() = plan;
    request.set_source_name("test.yaml");
    request.set_min_agents(min_agents);
    request.set_wait_for_agents_ns(wait);
    return control_->Submit(&context, request, &response);
  }

  // Every progress message of a run until it ends.
  std::vector<v1::RunProgress> WatchToEnd(const std::string& run_id,
                                          std::chrono::seconds patience = kPatience) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + patience);
    v1::WatchRequest request;
    request.set_run_id(run_id);
    std::unique_ptr<grpc::ClientReader<v1::RunProgress>> reader =
        control_->Watch(&context, request);
    std::vector<v1::RunProgress> progress;
    v1::RunProgress message;
    while (reader->Read(&message)) progress.push_back(message);
    const grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return progress;
  }

  v1::RunReport GetReport(const std::string& run_id) {
    grpc::ClientContext context;
    v1::GetReportRequest request;
    request.set_run_id(run_id);
    v1::RunReport report;
    const grpc::Status status = control_->GetReport(&context, request, &report);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return report;
  }

  // Reports are taken in on the server's threads: tick (without moving time) until the report
  // so far shows them.
  bool TickUntilExecuted(const std::string& run_id, uint64_t executed) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      service_->Tick();
      if (GetReport(run_id).executed() == executed) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

  // The value of `family`'s sample whose labels include `labels` (gauge or counter); nullopt if
  // there is none.
  std::optional<double> Metric(const std::string& family,
                               const std::map<std::string, std::string>& labels = {}) const {
    for (const prometheus::MetricFamily& f : metrics_.Collect()) {
      if (f.name != family) continue;
      for (const prometheus::ClientMetric& m : f.metric) {
        size_t matched = 0;
        for (const auto& label : m.label) {
          auto it = labels.find(label.name);
          matched += it != labels.end() && it->second == label.value ? 1 : 0;
        }
        if (matched != labels.size()) continue;
        return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      }
    }
    return std::nullopt;
  }

  // Agents register and leave on the server's threads: wait until the gauge shows `count`.
  bool WaitForAgentsGauge(double count) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Metric("dbload_agents_connected") == count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  MetricsExporter metrics_;  // outlives service_
  SimulatedClock clock_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<CoordinatorServer> server_;
  std::string address_;
  std::unique_ptr<v1::Control::Stub> control_;
  std::vector<std::unique_ptr<FakeAgent>> agents_;
};

Histogram FromProto(const v1::Histogram& proto) {
  absl::StatusOr<Histogram> histogram = Histogram::FromProto(proto);
  EXPECT_TRUE(histogram.ok()) << histogram.status();
  return histogram.ok() ? *histogram : Histogram();
}

TEST_F(CoordinatorTest, ThreeAgentsSplitTheRateAndTheirReportsMergeExactly) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  std::vector<FakeAgent*> fakes = {&a0, &a1, &a2};
  ASSERT_TRUE(WaitForAgents(3));

  const v1::Plan plan = OpenPlan(1000);
  v1::SubmitResponse submitted;
  const grpc::Status status = Submit(plan, submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(submitted.agents(), ::testing::ElementsAre("a0", "a1", "a2"));
  const std::string run_id = submitted.run_id();

  double rate_sum = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    std::optional<v1::CoordinatorMessage> message = fakes[i]->Next(Kind::kAssign);
    ASSERT_TRUE(message.has_value()) << "agent " << i << " got no assignment";
    const v1::Assignment& assignment = message->assign();
    EXPECT_EQ(assignment.run_id(), run_id);
    EXPECT_EQ(assignment.agent_index(), i);
    EXPECT_EQ(assignment.agent_count(), 3u);
    EXPECT_EQ(assignment.first_slot(), 8 * i);  // each opens the plan's pool of 8
    EXPECT_EQ(assignment.total_slots(), 48u);  // and 24 spare ones
    EXPECT_DOUBLE_EQ(assignment.phase(), i / 3.0);
    EXPECT_EQ(assignment.dead_man_timeout_ns(), 5 * kSecond);
    EXPECT_EQ(assignment.queries(), 0u);
    EXPECT_EQ(assignment.plan().SerializeAsString(), plan.SerializeAsString());
    ASSERT_TRUE(assignment.load().has_rate());
    EXPECT_NEAR(assignment.load().rate(), 1000 / 3.0, 1e-9);
    rate_sum += assignment.load().rate();
  }
  EXPECT_EQ(rate_sum, 1000);  // exactly: never more than the plan asks

  std::mt19937_64 random(2024);
  Union all;
  for (uint64_t sequence = 1; sequence <= 2; ++sequence) {
    for (FakeAgent* fake : fakes) {
      ASSERT_TRUE(fake->Send(Report(run_id, sequence, RandomSnapshot(random, 300, all))));
    }
    clock_.Advance(kSecond);
    service_->Tick();
  }
  const double measured[] = {10.0, 10.2, 9.9};
  for (size_t i = 0; i < fakes.size(); ++i) {
    ASSERT_TRUE(fakes[i]->Send(
        Final(run_id, 3, RandomSnapshot(random, 50, all), measured[i], "duration", i)));
  }

  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "finished");
  EXPECT_EQ(progress.back().end_reason(), "duration");
  uint64_t watched = 0;
  for (const v1::RunProgress& p : progress) watched += p.interval().executed();
  EXPECT_EQ(watched, all.executed);

  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.executed(), all.executed);
  EXPECT_EQ(report.executed(), 3u * (300 + 300 + 50));
  ASSERT_EQ(report.query_types_size(), 1);
  EXPECT_EQ(report.query_types(0).name(), "point_select");
  EXPECT_TRUE(FromProto(report.query_types(0).response_histogram()) == all.response);
  EXPECT_TRUE(FromProto(report.query_types(0).service_histogram()) == all.service);
  EXPECT_EQ(report.schedule_lag().count(), all.lag.TotalCount());
  EXPECT_EQ(report.response_time().p99_ms(), all.response.ValueAtPercentile(99) / 1e6);
  EXPECT_DOUBLE_EQ(report.total_duration_s(), 10.2);
  EXPECT_EQ(report.not_started(), 0u + 1u + 2u);
  EXPECT_EQ(report.end_reason(), "duration");
  EXPECT_EQ(report.started_at(), "2024-05-01T12:00:00Z");
  EXPECT_EQ(report.wanted_rate(), 1000);

  // The agents are free again.
  EXPECT_TRUE(WaitForAgents(3, [](const v1::AgentInfo& agent) { return agent.run_id().empty(); }));
}

TEST_F(CoordinatorTest, ClosedLoopSevenClientsGoThreeTwoTwoWithExactQueryShares) {
  std::vector<FakeAgent*> fakes = {&Connect("a0"), &Connect("a1"), &Connect("a2")};
  ASSERT_TRUE(WaitForAgents(3));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(ClosedPlan(7, 700), submitted).ok());
  const std::string run_id = submitted.run_id();

  const uint32_t expected_clients[] = {3, 2, 2};
  const uint32_t expected_first_slot[] = {0, 3, 5};
  uint64_t queries_sum = 0;
  std::vector<uint64_t> budgets;
  for (size_t i = 0; i < 3; ++i) {
    std::optional<v1::CoordinatorMessage> message = fakes[i]->Next(Kind::kAssign);
    ASSERT_TRUE(message.has_value());
    const v1::Assignment& assignment = message->assign();
    ASSERT_TRUE(assignment.load().has_clients());
    EXPECT_EQ(assignment.load().clients(), expected_clients[i]);
    EXPECT_EQ(assignment.first_slot(), expected_first_slot[i]);
    EXPECT_EQ(assignment.total_slots(), 14u);  // 7 spare slots for moving lost clients
    queries_sum += assignment.queries();
    budgets.push_back(assignment.queries());
  }
  EXPECT_EQ(queries_sum, 700u);
  EXPECT_THAT(budgets, ::testing::ElementsAre(300, 200, 200));

  // Each agent completes exactly its share.
  std::mt19937_64 random(7);
  Union all;
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(fakes[i]->Send(Report(run_id, 1, RandomSnapshot(random, 100, all))));
    ASSERT_TRUE(fakes[i]->Send(
        Final(run_id, 2, RandomSnapshot(random, static_cast<int>(budgets[i]) - 100, all), 4.0,
              "queries")));
  }
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "finished");
  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.executed(), 700u);
  EXPECT_EQ(report.end_reason(), "queries");
  EXPECT_TRUE(FromProto(report.query_types(0).response_histogram()) == all.response);
}

TEST_F(CoordinatorTest, WrongProtocolVersionIsRefusedNamingBothVersions) {
  FakeAgent old_agent(address_, "old", kAgentProtocolVersion + 1);
  const grpc::Status status = old_agent.WaitClosed();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("agent protocol version " + std::to_string(kAgentProtocolVersion + 1)));
  EXPECT_THAT(status.error_message(),
              HasSubstr("speaks agent protocol version " + std::to_string(kAgentProtocolVersion)));
  EXPECT_EQ(Agents().agents_size(), 0);
}

TEST_F(CoordinatorTest, DuplicateAgentNameIsRefused) {
  Connect("twin");
  ASSERT_TRUE(WaitForAgents(1));
  FakeAgent second(address_, "twin");
  const grpc::Status status = second.WaitClosed();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(status.error_message(), HasSubstr("'twin'"));
  EXPECT_THAT(status.error_message(), HasSubstr("unique"));
  // The first one is untouched.
  EXPECT_TRUE(WaitForAgents(1));
}

TEST_F(CoordinatorTest, FirstMessageMustBeHello) {
  auto stub =
      v1::AgentLink::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(1);
  stream->Write(heartbeat);
  v1::CoordinatorMessage ignored;
  while (stream->Read(&ignored)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("AgentHello"));
}

TEST_F(CoordinatorTest, SubmitTimesOutWhenTooFewAgentsConnect) {
  Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  const Nanos before = clock_.Now();
  v1::SubmitResponse response;
  const grpc::Status status = Submit(OpenPlan(100), response, /*min_agents=*/2, 5 * kSecond);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs 2 agents (min_agents)"));
  EXPECT_THAT(status.error_message(), HasSubstr("after waiting 5s"));
  EXPECT_THAT(status.error_message(), HasSubstr("1 is connected and idle (a0)"));
  EXPECT_GE(clock_.Now() - before, 5 * kSecond);  // it waited, on the injected clock
  EXPECT_TRUE(response.run_id().empty());
}

TEST_F(CoordinatorTest, ThePlansOwnAgentRequirementIsWaitedFor) {
  Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  const Nanos before = clock_.Now();
  v1::Plan plan = OpenPlan(100);
  plan.mutable_agents()->set_min(3);
  plan.mutable_agents()->set_wait_ns(4 * kSecond);
  v1::SubmitResponse response;
  const grpc::Status status = Submit(plan, response);  // the request asks for nothing
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs 3 agents (min_agents)"));
  EXPECT_THAT(status.error_message(), HasSubstr("after waiting 4s"));
  EXPECT_GE(clock_.Now() - before, 4 * kSecond);
}

TEST_F(CoordinatorTest, SubmitWithoutAgentsAndNoWaitFailsAtOnce) {
  v1::SubmitResponse response;
  const grpc::Status status = Submit(OpenPlan(100), response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs 1 agent (min_agents) and 0 are"));
  EXPECT_THAT(status.error_message(), HasSubstr("wait_for_agents"));
}

TEST_F(CoordinatorTest, InvalidPlansAreRefusedNamingTheField) {
  Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::Plan plan = OpenPlan(100);
  plan.mutable_load()->mutable_open()->set_rate(-5);
  v1::SubmitResponse response;
  grpc::Status status = Submit(plan, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("test.yaml"));
  EXPECT_THAT(status.error_message(), HasSubstr("load.open.rate"));

  plan = OpenPlan(100);
  plan.set_scenario("nope");
  status = Submit(plan, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("test.yaml: scenario: "));
  EXPECT_THAT(status.error_message(), HasSubstr("point_select"));

  // The coordinator reads no YAML: a workload written in it must arrive as the plan's
  // workload_spec, as the CLI sends it, and no agent is asked to run it otherwise.
  plan = OpenPlan(100);
  plan.set_workload("shop");
  plan.set_scenario("browse");
  status = Submit(plan, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(
      status.error_message(),
      HasSubstr("test.yaml: workload: unknown workload 'shop' (in code: oltp, tpcc; a workload "
                "written in YAML, a file or a built-in such as shop, travels in the plan "
                "as its workload_spec"));
}

TEST_F(CoordinatorTest, RunsAnAgentWouldRefuseAreRefusedUpFrontNamingEveryAgentAndWhy) {
  for (const auto& [name, allow] : std::vector<std::pair<std::string, std::string>>{
           {"narrow", "127.0.0.1/32"}, {"wide", "127.0.0.0/8"}, {"v6-only", "::1"}}) {
    agents_.push_back(std::make_unique<FakeAgent>(address_, name, kAgentProtocolVersion, 0,
                                                  v1::AgentResources(),
                                                  std::vector<std::string>{allow}));
  }
  ASSERT_TRUE(WaitForAgents(3));
  v1::Plan plan = ClosedPlan(3, 30);
  plan.mutable_target()->set_driver("postgresql");
  plan.mutable_target()->set_host("127.0.0.2");
  plan.mutable_target()->set_port(5432);
  v1::SubmitResponse response;
  const grpc::Status status = Submit(plan, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("agent 'narrow' refuses target 127.0.0.2:5432: not in its --allow-target "
                        "(127.0.0.1/32); start the agent with --allow-target 127.0.0.2 (or a CIDR "
                        "that holds it) to send load there"));
  EXPECT_THAT(status.error_message(),
              HasSubstr("agent 'v6-only' refuses target 127.0.0.2:5432: not in its --allow-target "
                        "(::1)"));
  EXPECT_THAT(status.error_message(), Not(HasSubstr("'wide'")));
  for (auto& agent : agents_) {
    EXPECT_FALSE(agent->Next(Kind::kAssign, std::chrono::milliseconds(100)).has_value());
  }
}

TEST_F(CoordinatorTest, AnAgentRefusingItsTargetFailsTheRunAndTheManifestSaysWhatOthersDialed) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  const std::string run_id = SubmitAndAssign(ClosedPlan(2, 20), {&a0, &a1});
  ASSERT_FALSE(run_id.empty());
  const std::string why = absl::StrCat(
      "run ", run_id, ": agent 'a0' refuses target db.example:5432 (resolved to 10.0.0.1): not in "
      "its --allow-target (127.0.0.0/8, ::1, localhost); start the agent with --allow-target "
      "db.example (or a CIDR that holds 10.0.0.1) to send load there");
  v1::AgentReport refused;
  refused.set_run_id(run_id);
  refused.set_sequence(1);
  refused.set_final(true);
  refused.set_end_reason("not started");
  refused.set_fatal_error(why);
  refused.set_target_refused(true);
  ASSERT_TRUE(a0.Send(refused));
  // The other agent is told to stop at once.
  std::optional<v1::CoordinatorMessage> stop = a1.Next(Kind::kStop);
  ASSERT_TRUE(stop.has_value());
  EXPECT_THAT(stop->stop().reason(), HasSubstr("agent 'a0' refuses target db.example:5432"));
  std::mt19937_64 random(5);
  Union all;
  v1::AgentReport stopped = Final(run_id, 1, RandomSnapshot(random, 0, all), 0, "stopped: x");
  stopped.set_target_address("127.0.0.1:5432");
  ASSERT_TRUE(a1.Send(stopped));
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "failed");
  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.end_reason(), absl::StrCat("failed: ", why));
  ASSERT_EQ(report.manifest().agents_size(), 2);
  EXPECT_EQ(report.manifest().agents(0).target_address(), "");
  EXPECT_EQ(report.manifest().agents(1).target_address(), "127.0.0.1:5432");
}

class LimitedCoordinatorTest : public CoordinatorTest {
 protected:
  void Configure(CoordinatorOptions& options) override {
    options.max_rate = 1000;
    options.max_clients = 4;
  }
};

TEST_F(LimitedCoordinatorTest, PlansAboveTheCoordinatorsLimitsAreRefusedBeforeAnyLoad) {
  FakeAgent& agent = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse response;
  grpc::Status status = Submit(OpenPlan(5000), response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("test.yaml: load.open.rate: 5000 transactions/s is above this "
                        "coordinator's limit of 1000 (--max-rate)"));
  status = Submit(ClosedPlan(8, 100), response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("load.closed.clients: 8 clients is above this coordinator's limit of 4"));
  // Within the limits: accepted, and the agent's first assignment is this run's (no refused
  // plan reached it).
  status = Submit(OpenPlan(1000), response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::optional<v1::CoordinatorMessage> first = agent.Next(Kind::kAssign);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->assign().run_id(), response.run_id());
}

TEST_F(CoordinatorTest, StopSendsStopLoadAndTheRunEndsWithTheAgentsFinals) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  const std::string run_id = submitted.run_id();
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  ASSERT_TRUE(a1.Next(Kind::kAssign).has_value());

  grpc::ClientContext context;
  v1::StopRequest request;
  request.set_run_id(run_id);
  v1::StopResponse response;
  ASSERT_TRUE(control_->Stop(&context, request, &response).ok());
  for (FakeAgent* fake : {&a0, &a1}) {
    std::optional<v1::CoordinatorMessage> stop = fake->Next(Kind::kStop);
    ASSERT_TRUE(stop.has_value());
    EXPECT_EQ(stop->stop().run_id(), run_id);
  }
  // Still running until the agents confirm.
  EXPECT_EQ(GetReport(run_id).end_reason(), "running");
  std::mt19937_64 random(3);
  Union all;
  ASSERT_TRUE(a0.Send(Final(run_id, 1, RandomSnapshot(random, 10, all), 0.5, "stopped: x")));
  ASSERT_TRUE(a1.Send(Final(run_id, 1, RandomSnapshot(random, 20, all), 0.6, "stopped: x")));
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "interrupted");
  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.end_reason(), "stopped");
  EXPECT_EQ(report.executed(), 30u);
}

// An agent whose load is over holds its connections until every other agent's load is over
// too, or the other has sent its final report or been lost: then all get CloseSessions.
TEST_F(CoordinatorTest, CloseSessionsGoesOutOnceEveryWorkingAgentsLoadIsOver) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  const std::string run_id = submitted.run_id();
  for (FakeAgent* fake : {&a0, &a1, &a2}) ASSERT_TRUE(fake->Next(Kind::kAssign).has_value());

  ASSERT_TRUE(a0.SendLoadOver(run_id));
  std::mt19937_64 random(5);
  Union all;
  // a2 ends without a LoadOver (nothing to hold): its final report is enough.
  ASSERT_TRUE(a2.Send(Final(run_id, 1, RandomSnapshot(random, 5, all), 10.0, "duration")));
  EXPECT_FALSE(a0.Next(Kind::kCloseSessions, std::chrono::milliseconds(300)).has_value());
  ASSERT_TRUE(a1.SendLoadOver(run_id));
  for (FakeAgent* fake : {&a0, &a1}) {
    std::optional<v1::CoordinatorMessage> close = fake->Next(Kind::kCloseSessions);
    ASSERT_TRUE(close.has_value());
    EXPECT_EQ(close->close_sessions().run_id(), run_id);
  }
  ASSERT_TRUE(a0.Send(Final(run_id, 1, RandomSnapshot(random, 10, all), 10.0, "duration")));
  ASSERT_TRUE(a1.Send(Final(run_id, 1, RandomSnapshot(random, 20, all), 10.0, "duration")));
  WatchToEnd(run_id);
  EXPECT_EQ(GetReport(run_id).executed(), 35u);
}

// Agents open their connections at their own pace: none starts its load until every working one
// is ready (one lost meanwhile is not waited for), and one that joins the started run starts at
// once. The report says when each was ready.
TEST_F(CoordinatorTest, StartLoadGoesOutOnceEveryWorkingAgentIsReady) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  const std::string run_id = SubmitAndAssign(OpenPlan(300), {&a0, &a1, &a2});
  ASSERT_FALSE(run_id.empty());
  clock_.Advance(300 * kMillisecond);
  ASSERT_TRUE(a0.SendSessionsReady(run_id));
  EXPECT_FALSE(a0.Next(Kind::kStartLoad, std::chrono::milliseconds(300)).has_value());
  a2.Close();  // lost while connecting
  ASSERT_TRUE(WaitForAgents(2));
  EXPECT_FALSE(a0.Next(Kind::kStartLoad, std::chrono::milliseconds(300)).has_value());
  clock_.Advance(200 * kMillisecond);
  ASSERT_TRUE(a1.SendSessionsReady(run_id));
  for (FakeAgent* fake : {&a0, &a1}) {
    std::optional<v1::CoordinatorMessage> start = fake->Next(Kind::kStartLoad);
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(start->start_load().run_id(), run_id);
  }

  FakeAgent& again = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  clock_.Advance(500 * kMillisecond);
  service_->Tick();
  ASSERT_TRUE(again.Next(Kind::kAssign).has_value());
  ASSERT_TRUE(again.SendSessionsReady(run_id));
  ASSERT_TRUE(again.Next(Kind::kStartLoad).has_value());
  EXPECT_FALSE(a0.Next(Kind::kStartLoad, std::chrono::milliseconds(200)).has_value());

  std::mt19937_64 random(6);
  Union all;
  ASSERT_TRUE(again.Send(Final(run_id, 1, RandomSnapshot(random, 5, all), 9.0, "duration")));
  ASSERT_TRUE(a0.Send(Final(run_id, 1, RandomSnapshot(random, 10, all), 10.0, "duration")));
  ASSERT_TRUE(a1.Send(Final(run_id, 1, RandomSnapshot(random, 10, all), 10.0, "duration")));
  WatchToEnd(run_id);
  std::map<std::string, double> ready;
  const v1::RunReport report = GetReport(run_id);
  for (const v1::AgentSummary& agent : report.agents()) {
    ready[agent.name()] = agent.ready_s();
  }
  EXPECT_THAT(ready, ::testing::UnorderedElementsAre(
                         ::testing::Pair("a0", ::testing::DoubleEq(0.3)),
                         ::testing::Pair("a1", ::testing::DoubleEq(0.5)),
                         ::testing::Pair("a2", 0.0),  // lost before it was ready
                         ::testing::Pair("a2#2", ::testing::DoubleEq(1.0))));
}

TEST_F(CoordinatorTest, IntervalsStatesAndAgentsArePublishedToTheMetrics) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  ASSERT_TRUE(WaitForAgentsGauge(2));
  v1::Plan plan = OpenPlan(1000);
  plan.set_warmup_ns(kSecond);
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(plan, submitted).ok());
  const std::string run_id = submitted.run_id();
  const std::map<std::string, std::string> run = {{"run", run_id}};
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  ASSERT_TRUE(a1.Next(Kind::kAssign).has_value());
  EXPECT_EQ(Metric("dbload_run_info", {{"run", run_id}, {"state", "running"}}), 1);

  // One warm-up interval: published (real traffic), though the report leaves it out.
  std::mt19937_64 random(11);
  Union warmup;
  const std::vector<FakeAgent*> fakes = {&a0, &a1};
  for (size_t i = 0; i < fakes.size(); ++i) {
    v1::AgentReport report = Report(run_id, 1, RandomSnapshot(random, 100, warmup));
    report.set_warmup(true);
    report.set_in_flight(3 + i);
    report.set_connections(8);
    report.set_cpu_seconds(0.25);
    ASSERT_TRUE(fakes[i]->Send(report));
  }
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  const std::map<std::string, std::string> ok = {{"run", run_id}, {"result", "ok"}};
  while (Metric("dbload_queries_total", ok).value_or(0) < 200 &&
         std::chrono::steady_clock::now() < deadline) {
    clock_.Advance(kMillisecond);
    service_->Tick();
  }
  EXPECT_EQ(Metric("dbload_queries_total", ok), 200);
  EXPECT_EQ(GetReport(run_id).executed(), 0u);
  EXPECT_EQ(Metric("dbload_in_flight", run), 3 + 4);
  EXPECT_EQ(Metric("dbload_connections", run), 16);
  EXPECT_EQ(Metric("dbload_target_rate", run), 1000);
  EXPECT_EQ(Metric("dbload_clients", run), 0);
  EXPECT_EQ(Metric("dbload_agent_cpu_seconds_total", {{"run", run_id}, {"agent", "a1"}}), 0.25);

  // A measured interval, then a stop: the metrics count both, the state says "stopped".
  grpc::ClientContext context;
  v1::StopRequest request;
  request.set_run_id(run_id);
  v1::StopResponse response;
  ASSERT_TRUE(control_->Stop(&context, request, &response).ok());
  Union measured;
  for (FakeAgent* fake : fakes) {
    ASSERT_TRUE(fake->Next(Kind::kStop).has_value());
    v1::AgentReport report =
        Final(run_id, 2, RandomSnapshot(random, 50, measured), 0.5, "stopped: x");
    report.set_cpu_seconds(0.5);
    ASSERT_TRUE(fake->Send(report));
  }
  WatchToEnd(run_id);
  EXPECT_EQ(GetReport(run_id).executed(), 100u);
  EXPECT_EQ(Metric("dbload_queries_total", ok), 300);
  EXPECT_EQ(Metric("dbload_agent_cpu_seconds_total", {{"run", run_id}, {"agent", "a0"}}), 0.75);
  EXPECT_EQ(Metric("dbload_run_info", {{"run", run_id}, {"state", "stopped"}}), 1);
  EXPECT_EQ(Metric("dbload_run_info", {{"run", run_id}, {"state", "running"}}), std::nullopt);

  a1.Close();
  EXPECT_TRUE(WaitForAgentsGauge(1));
}

TEST_F(CoordinatorTest, StopOfUnknownRunIsNotFound) {
  grpc::ClientContext context;
  v1::StopRequest request;
  request.set_run_id("run-404");
  v1::StopResponse response;
  EXPECT_EQ(control_->Stop(&context, request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorTest, HeartbeatsGoToEveryAgentEachTick) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  service_->Tick();
  std::optional<v1::CoordinatorMessage> heartbeat = a0.Next(Kind::kHeartbeat);
  ASSERT_TRUE(heartbeat.has_value());
  EXPECT_GT(heartbeat->heartbeat().sequence(), 0u);
}

TEST_F(CoordinatorTest, SilentAgentIsLostAndTheRunIsMarkedDegraded) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  const std::string run_id = submitted.run_id();
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  ASSERT_TRUE(a1.Next(Kind::kAssign).has_value());
  std::mt19937_64 random(5);
  Union all;
  ASSERT_TRUE(a0.Send(Final(run_id, 1, RandomSnapshot(random, 40, all), 10, "duration")));
  // a1's share is 50/s; its report (its first second) wanted 50 arrivals, completed 60 (the
  // uniform schedule's phase) and left 2 in flight.
  v1::AgentReport a1_report = Report(run_id, 1, RandomSnapshot(random, 60, all));
  a1_report.set_target_rate(50);
  a1_report.set_in_flight(2);
  ASSERT_TRUE(a1.Send(a1_report));
  // Both reports are in once ticks (at the same simulated time: nobody is silent yet) have
  // closed an interval with them.
  ASSERT_TRUE(TickUntilExecuted(run_id, 100));
  EXPECT_FALSE(GetReport(run_id).degraded());
  // a1 has said nothing for 4 s (a0 neither, but it is no longer in the run).
  clock_.Advance(4 * kSecond);
  service_->Tick();

  const grpc::Status closed = a1.WaitClosed();
  EXPECT_EQ(closed.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(Metric("dbload_run_agents_lost", {{"run", run_id}}), 1.0);  // degraded, live
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "finished");
  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.end_reason(), "duration; degraded: agent a1 lost (silent for 4.0s)");
  // What a1 reported before it went silent is in.
  EXPECT_EQ(report.executed(), 100u);
  // Degraded, in the progress (for the CLI's exit code) and the report, with a bound on what a1
  // ran after its last report (at 1 s) until it was lost (at 4 s): its 2 in flight, 50/s × 3 s,
  // and 1 for the schedule's rounding; or, had it run on cut off, 50/s × (3 + 5 s of dead-man
  // timeout + 0.1 s).
  EXPECT_TRUE(progress.back().degraded());
  EXPECT_TRUE(report.degraded());
  ASSERT_EQ(report.lost_agents_size(), 1);
  const v1::LostAgent& lost = report.lost_agents(0);
  EXPECT_EQ(lost.name(), "a1");
  EXPECT_EQ(lost.why(), "silent for 4.0s");
  EXPECT_DOUBLE_EQ(lost.last_report_s(), 1);
  EXPECT_DOUBLE_EQ(lost.lost_s(), 4);
  EXPECT_DOUBLE_EQ(lost.dead_man_s(), 5);
  EXPECT_DOUBLE_EQ(lost.rate(), 50);
  EXPECT_TRUE(lost.bound_known());
  EXPECT_EQ(lost.unreported_if_stopped(), 2u + 150 + 1);
  EXPECT_NEAR(static_cast<double>(lost.unreported_max()), 2 + 405 + 1, 1);
  // The noop target has no commit counter to reconcile with.
  EXPECT_FALSE(report.commit_reconciliation().available());
  EXPECT_THAT(RenderReportText(report), HasSubstr("DEGRADED: 1 agent(s) lost"));
}

TEST_F(CoordinatorTest, ALostAgentsRateIsSplitAgainOverTheOthers) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(300), submitted).ok());
  const std::string run_id = submitted.run_id();
  for (FakeAgent* agent : {&a0, &a1, &a2}) {
    const auto assigned = agent->Next(Kind::kAssign);
    ASSERT_TRUE(assigned.has_value());
    EXPECT_DOUBLE_EQ(assigned->assign().load().rate(), 100);
  }
  std::mt19937_64 random(6);
  Union all;
  ASSERT_TRUE(a0.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(a1.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 20));
  // a2 never reports. At 2 s nobody is silent for long enough (3 s); at 3.5 s a2 is, while a0
  // and a1, heard at 2 s, are not: a2 is lost, and a0 and a1 take 150/s each.
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(a0.Send(Report(run_id, 2, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(a1.Send(Report(run_id, 2, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 40));
  clock_.Advance(1500 * kMillisecond);
  service_->Tick();
  EXPECT_EQ(a2.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
  for (FakeAgent* agent : {&a0, &a1}) {
    const auto change = agent->Next(Kind::kChange);
    ASSERT_TRUE(change.has_value());
    EXPECT_EQ(change->change().run_id(), run_id);
    EXPECT_DOUBLE_EQ(change->change().load().rate(), 150);
  }
}

// A restarted agent (the same name) takes a share of the running run again, as NAME#2: the rate
// is split over three again, it gets spare slots and the rest of the duration, and its reports
// land on the run's clock; the report lists both lives of a2.
TEST_F(CoordinatorTest, ARestartedAgentJoinsTheRunningRunAndTakesAShareAgain) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  // 10 s, pool 8: slots 0-23, spares 24-47.
  const std::string run_id = SubmitAndAssign(OpenPlan(300), {&a0, &a1, &a2});
  ASSERT_FALSE(run_id.empty());
  std::mt19937_64 random(8);
  Union all;
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(a0.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(a1.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 20));
  clock_.Advance(1500 * kMillisecond);  // 3.5 s: a2 is lost, a0 and a1 take 150/s
  service_->Tick();
  EXPECT_EQ(a2.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
  for (FakeAgent* agent : {&a0, &a1}) {
    const auto change = agent->Next(Kind::kChange);
    ASSERT_TRUE(change.has_value());
    EXPECT_DOUBLE_EQ(change->change().load().rate(), 150);
  }

  FakeAgent& again = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  clock_.Advance(500 * kMillisecond);  // 4 s into the run
  service_->Tick();
  const auto joined = again.Next(Kind::kAssign);
  ASSERT_TRUE(joined.has_value());
  const v1::Assignment& assignment = joined->assign();
  EXPECT_EQ(assignment.run_id(), run_id);
  EXPECT_DOUBLE_EQ(assignment.load().rate(), 100);
  EXPECT_EQ(assignment.first_slot(), 24u);
  EXPECT_EQ(assignment.total_slots(), 48u);
  EXPECT_EQ(assignment.plan().stop().duration_ns(), 6 * kSecond);
  EXPECT_EQ(assignment.queries(), 0u);
  for (FakeAgent* agent : {&a0, &a1}) {
    const auto change = agent->Next(Kind::kChange);
    ASSERT_TRUE(change.has_value());
    EXPECT_DOUBLE_EQ(change->change().load().rate(), 100);
  }
  // Only lost agents are replaced: a fourth idle agent stays idle.
  FakeAgent& spare = Connect("a3");
  ASSERT_TRUE(WaitForAgents(4));
  service_->Tick();

  // Its first second is the run's fifth.
  clock_.Advance(kSecond);
  ASSERT_TRUE(again.Send(Final(run_id, 1, RandomSnapshot(random, 7, all), 1, "duration")));
  ASSERT_TRUE(a0.Send(Final(run_id, 2, RandomSnapshot(random, 10, all), 10, "duration")));
  ASSERT_TRUE(a1.Send(Final(run_id, 2, RandomSnapshot(random, 10, all), 10, "duration")));
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  const v1::RunReport report = GetReport(run_id);
  EXPECT_EQ(report.executed(), 47u);
  EXPECT_THAT(report.end_reason(), HasSubstr("degraded: agent a2 lost"));
  std::vector<std::string> names;
  for (const v1::AgentSummary& agent : report.agents()) names.push_back(agent.name());
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("a0", "a1", "a2", "a2#2"));
  double latest = 0;
  for (const v1::IntervalSample& sample : report.intervals()) {
    latest = std::max(latest, sample.elapsed_s());
  }
  EXPECT_DOUBLE_EQ(latest, 5.0);  // a2#2's 1 s after joining at 4 s (a0, a1 said 2 s)
  EXPECT_FALSE(spare.Next(Kind::kAssign, std::chrono::milliseconds(200)).has_value());
}

// With a query limit, the joiner's share is what the lost agent had left of its own by its last
// report.
TEST_F(CoordinatorTest, AJoinerTakesTheQueriesTheLostAgentHadLeft) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  v1::Plan plan = OpenPlan(200);
  plan.mutable_stop()->set_queries(1000);  // and 10 s: 500 each
  std::vector<v1::Assignment> assignments;
  const std::string run_id = SubmitAndAssign(plan, {&a0, &a1}, &assignments);
  ASSERT_EQ(assignments.size(), 2u);
  for (const v1::Assignment& assignment : assignments) EXPECT_EQ(assignment.queries(), 500u);
  std::mt19937_64 random(9);
  Union all;
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(a0.Send(Report(run_id, 1, RandomSnapshot(random, 100, all))));
  ASSERT_TRUE(a1.Send(Report(run_id, 1, RandomSnapshot(random, 120, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 220));
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(a0.Send(Report(run_id, 2, RandomSnapshot(random, 100, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 320));
  clock_.Advance(1500 * kMillisecond);
  service_->Tick();  // a1 silent for 3.5 s: lost with 380 of its 500 left
  EXPECT_EQ(a1.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
  // The agent sees its stream end before the coordinator's handler has removed it; until then
  // its name is taken (and the old a1 would count as the second agent below).
  ASSERT_TRUE(WaitForAgents(1));
  FakeAgent& again = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  service_->Tick();
  const auto joined = again.Next(Kind::kAssign);
  ASSERT_TRUE(joined.has_value());
  EXPECT_EQ(joined->assign().queries(), 380u);
  EXPECT_DOUBLE_EQ(joined->assign().load().rate(), 100);
}

// Closed loop: a lost agent's clients go to the survivors, on the run's spare slots (after all
// agents' ranges, each handed out once), so that the database keeps seeing the plan's clients.
TEST_F(CoordinatorTest, ALostAgentsClientsMoveToTheOthersOnSpareSlots) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  FakeAgent& a2 = Connect("a2");
  ASSERT_TRUE(WaitForAgents(3));
  v1::Plan plan = ClosedPlan(7, 0);
  plan.mutable_stop()->set_duration_ns(60 * kSecond);
  std::vector<v1::Assignment> assignments;
  const std::string run_id = SubmitAndAssign(plan, {&a0, &a1, &a2}, &assignments);
  ASSERT_EQ(assignments.size(), 3u);
  for (const v1::Assignment& assignment : assignments) EXPECT_EQ(assignment.total_slots(), 14u);
  std::mt19937_64 random(7);
  Union all;
  clock_.Advance(2 * kSecond);
  ASSERT_TRUE(a1.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(a2.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(TickUntilExecuted(run_id, 20));
  // a0 (3 clients, slots 0-2) never reports and is lost at 3.5 s: a1 (2 clients) takes 2 more
  // on slots 7-8, a2 (2 clients) 1 more on slot 9.
  clock_.Advance(1500 * kMillisecond);
  service_->Tick();
  EXPECT_EQ(a0.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
  const uint32_t expected_clients[] = {4, 3};
  const uint32_t expected_first[] = {7, 9};
  const uint32_t expected_count[] = {2, 1};
  FakeAgent* survivors[] = {&a1, &a2};
  for (size_t i = 0; i < 2; ++i) {
    const auto change = survivors[i]->Next(Kind::kChange);
    ASSERT_TRUE(change.has_value());
    EXPECT_EQ(change->change().run_id(), run_id);
    EXPECT_EQ(change->change().load().clients(), expected_clients[i]);
    EXPECT_EQ(change->change().extra_first_slot(), expected_first[i]);
    EXPECT_EQ(change->change().extra_slot_count(), expected_count[i]);
  }
}

TEST_F(CoordinatorTest, AgentThatDisconnectsMidRunIsLost) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  a0.Close();
  const std::vector<v1::RunProgress> progress = WatchToEnd(submitted.run_id());
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "failed");
  EXPECT_EQ(progress.back().end_reason(),
            "failed: every agent was lost; degraded: agent a0 lost (disconnected)");
}

TEST_F(CoordinatorTest, AGapInAgentReportsFailsTheRunAndStopsItsLoad) {
  FakeAgent& a0 = Connect("a0");
  FakeAgent& a1 = Connect("a1");
  ASSERT_TRUE(WaitForAgents(2));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  const std::string run_id = submitted.run_id();
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  ASSERT_TRUE(a1.Next(Kind::kAssign).has_value());
  std::mt19937_64 random(9);
  Union all;
  ASSERT_TRUE(a0.Send(Report(run_id, 1, RandomSnapshot(random, 10, all))));
  ASSERT_TRUE(a0.Send(Report(run_id, 3, RandomSnapshot(random, 10, all))));
  for (FakeAgent* fake : {&a0, &a1}) {
    std::optional<v1::CoordinatorMessage> stop = fake->Next(Kind::kStop);
    ASSERT_TRUE(stop.has_value());
    EXPECT_THAT(stop->stop().reason(), HasSubstr("missing"));
  }
  const std::vector<v1::RunProgress> progress = WatchToEnd(run_id);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "failed");
  EXPECT_THAT(progress.back().end_reason(), HasSubstr("agent a0: report 3 follows report 1"));
}

TEST_F(CoordinatorTest, UnknownQueryTypeFailsTheRun) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  IntervalSnapshot too_wide;
  too_wide.query_types.resize(2);
  too_wide.query_types[1].response_time.Record(1000);
  ASSERT_TRUE(a0.Send(Report(submitted.run_id(), 1, too_wide)));
  const std::vector<v1::RunProgress> progress = WatchToEnd(submitted.run_id());
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "failed");
  EXPECT_THAT(progress.back().end_reason(), HasSubstr("query type 1"));
}

TEST_F(CoordinatorTest, AnAgentThatCouldNotStartFailsTheRunSayingWhy) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  v1::AgentReport refusal;
  refusal.set_run_id(submitted.run_id());
  refusal.set_sequence(1);
  refusal.set_final(true);
  refusal.set_end_reason("not started");
  refusal.set_fatal_error("target: connection refused");
  ASSERT_TRUE(a0.Send(refusal));
  const std::vector<v1::RunProgress> progress = WatchToEnd(submitted.run_id());
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "failed");
  EXPECT_EQ(progress.back().end_reason(), "not started: target: connection refused");
}

// An agent says in its hello how many threads and descriptors it can still start; a share that
// does not fit is refused at Submit, before any agent has its assignment.
TEST_F(CoordinatorTest, AShareBeyondAnAgentsRoomIsRefusedBeforeAnyAgentIsAssigned) {
  v1::AgentResources tight;
  tight.set_threads(20);
  tight.set_threads_bound("RLIMIT_NPROC 30, 10 threads of this user in use");
  tight.set_files(1000);
  tight.set_files_bound("RLIMIT_NOFILE 1024, 24 open");
  FakeAgent& a0 = Connect("a0");
  agents_.push_back(std::make_unique<FakeAgent>(address_, "a1", kAgentProtocolVersion, 0, tight));
  FakeAgent& a1 = *agents_.back();
  ASSERT_TRUE(WaitForAgents(2));
  v1::SubmitResponse response;
  const grpc::Status status = Submit(ClosedPlan(40, 1000), response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(),
            "load.closed.clients: agent a1 cannot run 20 clients: they need 28 threads "
            "(one each, plus 8), and it can start 20 more (RLIMIT_NPROC 30, 10 threads of this "
            "user in use); use fewer clients per agent (more agents), or raise the limit");
  EXPECT_FALSE(a0.Next(Kind::kAssign, std::chrono::milliseconds(200)).has_value());
  EXPECT_FALSE(a1.Next(Kind::kAssign, std::chrono::milliseconds(200)).has_value());
  // What fits is accepted, by both.
  ASSERT_FALSE(SubmitAndAssign(ClosedPlan(24, 1000), {&a0, &a1}).empty());
}

// A report near what the limits allow (kMaxQueryTypes query types, histograms across the whole
// layout) goes through both channels: the agent's report in, the run's report out, read the way
// the CLI reads it. gRPC's default limit of 4 MB made the report of a large run unreadable.
TEST_F(CoordinatorTest, AReportNearTheLimitsIsRetrievableThroughTheControlApi) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::Plan plan = OpenPlan(100);
  plan.set_workload("big.yaml");
  plan.set_scenario("s");
  v1::WorkloadSpec& spec = *plan.mutable_workload_spec();
  spec.set_name("big");
  v1::Scenario& scenario = *spec.add_scenarios();
  scenario.set_name("s");
  for (int q = 0; q < kMaxQueryTypes; ++q) {
    v1::QueryType& type = *scenario.add_query_types();
    type.set_name(absl::StrCat("q", q));
    type.set_weight(1);
    type.add_statements()->mutable_sql()->set_any("SELECT 1");
  }
  v1::SubmitResponse submitted;
  const grpc::Status accepted = Submit(plan, submitted);
  ASSERT_TRUE(accepted.ok()) << accepted.error_message();
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(kMaxQueryTypes);
  for (auto& type : snapshot.query_types) {
    // Every eighth bucket: each histogram as wide as the layout, at an eighth of the cost (the
    // test runs under ASan too).
    for (int index = 0; index < histogram_layout::kBucketCount; index += 8) {
      type.response_time.RecordAtIndex(index, 1000);
      type.service_time.RecordAtIndex(index, 1000);
    }
  }
  const v1::AgentReport sent = Final(submitted.run_id(), 1, snapshot, 1, "duration");
  ASSERT_GT(sent.ByteSizeLong(), size_t{6} << 20);  // 1.5 times gRPC's default limit
  ASSERT_TRUE(a0.Send(sent));
  // Merging and building a report of this size takes seconds in a sanitizer build.
  const std::vector<v1::RunProgress> progress =
      WatchToEnd(submitted.run_id(), std::chrono::seconds(60));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "finished") << progress.back().end_reason();

  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> control =
      DialControl(address_, TransportSecurity{});
  ASSERT_TRUE(control.ok()) << control.status();
  grpc::ClientContext context;
  v1::GetReportRequest request;
  request.set_run_id(submitted.run_id());
  v1::RunReport report;
  const grpc::Status got = (*control)->GetReport(&context, request, &report);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_GT(report.ByteSizeLong(), size_t{6} << 20);
  EXPECT_LT(report.ByteSizeLong(), static_cast<size_t>(kMaxRpcMessageBytes));
  ASSERT_EQ(report.query_types_size(), kMaxQueryTypes);
  EXPECT_EQ(report.executed(),
            uint64_t{1000} * ((histogram_layout::kBucketCount + 7) / 8) * kMaxQueryTypes);
}

TEST_F(CoordinatorTest, GetReportOfARunningRunIsTheReportSoFar) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  std::mt19937_64 random(11);
  Union all;
  ASSERT_TRUE(a0.Send(Report(submitted.run_id(), 1, RandomSnapshot(random, 25, all))));
  // The report is in once a tick has closed an interval with it.
  ASSERT_TRUE(TickUntilExecuted(submitted.run_id(), 25));
  v1::RunReport report = GetReport(submitted.run_id());
  EXPECT_EQ(report.executed(), 25u);
  EXPECT_EQ(report.end_reason(), "running");
  // An empty run id means the latest run.
  EXPECT_EQ(GetReport("").end_reason(), "running");

  grpc::ClientContext context;
  v1::GetReportRequest request;
  request.set_run_id("run-404");
  EXPECT_EQ(control_->GetReport(&context, request, &report).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorTest, ShutdownStopsRunsAndEndsThemInterrupted) {
  FakeAgent& a0 = Connect("a0");
  ASSERT_TRUE(WaitForAgents(1));
  v1::SubmitResponse submitted;
  ASSERT_TRUE(Submit(OpenPlan(100), submitted).ok());
  ASSERT_TRUE(a0.Next(Kind::kAssign).has_value());
  // The grace is simulated time. This thread stays attached to the clock without sleeping on
  // it, so time stands still while Shutdown waits, until the agent's final is in.
  clock_.AttachThread();
  std::thread shutdown([&] {
    ClockThread attached(clock_);
    service_->Shutdown(3 * kSecond);
  });
  std::optional<v1::CoordinatorMessage> stop = a0.Next(Kind::kStop);
  ASSERT_TRUE(stop.has_value());
  EXPECT_EQ(stop->stop().run_id(), submitted.run_id());
  std::mt19937_64 random(1);
  Union all;
  ASSERT_TRUE(
      a0.Send(Final(submitted.run_id(), 1, RandomSnapshot(random, 5, all), 1, "stopped: x")));
  v1::RunReport report;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  do {
    report = GetReport(submitted.run_id());
  } while (report.end_reason() == "running" && std::chrono::steady_clock::now() < deadline);
  clock_.DetachThread();
  shutdown.join();
  EXPECT_EQ(report.end_reason(), "interrupted");
  EXPECT_EQ(report.executed(), 5u);
  // The agent's stream is closed, and no new work is taken.
  EXPECT_EQ(a0.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
  v1::SubmitResponse refused;
  EXPECT_EQ(Submit(OpenPlan(100), refused).error_code(), grpc::StatusCode::UNAVAILABLE);
}

// The ticker thread on a real clock, sped up: heartbeats arrive by themselves, and an agent that
// never answers is dropped after the silence limit.
TEST(CoordinatorTicker, HeartbeatsOnARealClockAndSilentAgentsAreDropped) {
  SteadyClock clock;
  CoordinatorOptions options;
  options.tick_interval = 20 * kMillisecond;
  options.agent_silence_limit = 300 * kMillisecond;
  CoordinatorService service(clock, options);
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start("127.0.0.1:0", service);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = "127.0.0.1:" + std::to_string((*server)->port());
  // Before the hello: the coordinator hears it (and starts counting the silence) after this.
  const Nanos start = clock.Now();
  {
    FakeAgent quiet(address, "quiet");
    EXPECT_TRUE(quiet.Next(Kind::kHeartbeat).has_value());
    EXPECT_TRUE(quiet.Next(Kind::kHeartbeat).has_value());
    // It never sends anything after its hello.
    EXPECT_EQ(quiet.WaitClosed().error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_GE(clock.Now() - start, 300 * kMillisecond);
  }
  service.Shutdown(0);
  (*server)->Shutdown();
}

TEST(IsLoopbackListenAddress, OnlyThisMachine) {
  EXPECT_TRUE(IsLoopbackListenAddress("127.0.0.1:7000"));
  EXPECT_TRUE(IsLoopbackListenAddress("127.1.2.3:0"));
  EXPECT_TRUE(IsLoopbackListenAddress("localhost:7000"));
  EXPECT_TRUE(IsLoopbackListenAddress("[::1]:7000"));
  EXPECT_TRUE(IsLoopbackListenAddress("unix:/tmp/dbload.sock"));
  EXPECT_FALSE(IsLoopbackListenAddress("0.0.0.0:7000"));
  EXPECT_FALSE(IsLoopbackListenAddress("[::]:7000"));
  EXPECT_FALSE(IsLoopbackListenAddress(":7000"));
  EXPECT_FALSE(IsLoopbackListenAddress("10.0.0.1:7000"));
  EXPECT_FALSE(IsLoopbackListenAddress("example.com:7000"));
}

TEST(CoordinatorServer, RefusesNonLoopbackAddressesInPlainText) {
  SimulatedClock clock;
  CoordinatorOptions options;
  options.run_ticker = false;
  CoordinatorService service(clock, options);
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start("0.0.0.0:0", service);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("--listen '0.0.0.0:0': not on this machine, and the link would be plain "
                        "text"));
}

}  // namespace
}  // namespace dbload
