#include "coordinator/probe_session.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

// Answers every host with one address, whatever it is: the allow list judges the address.
class FixedResolver final : public Resolver {
 public:
  explicit FixedResolver(std::string address) : address_(std::move(address)) {}
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string&) override {
    return std::vector<std::string>{address_};
  }

 private:
  std::string address_;
};

v1::Plan PlanFor(const std::string& driver, const std::string& host) {
  v1::Plan plan;
  plan.mutable_target()->set_driver(driver);
  plan.mutable_target()->set_host(host);
  plan.mutable_target()->set_port(5432);
  plan.mutable_target()->set_database("app");
  return plan;
}

TEST(ProbeSessionTest, ARunWithoutAProbeSaysWhyAndWaitsForNothing) {
  ProbeSession session = ProbeSession::Off("probe off: no password");
  EXPECT_FALSE(session.active());
  EXPECT_FALSE(session.up());
  EXPECT_TRUE(session.FirstReadingIn());
  EXPECT_FALSE(session.MaxConnections().has_value());
  EXPECT_TRUE(session.TakeReadings(0).empty());
  EXPECT_EQ(session.Retire(), nullptr);
  v1::RunReport report;
  session.FillReport(report);
  EXPECT_EQ(report.probe_error(), "probe off: no password");
  EXPECT_EQ(report.probe_samples_size(), 0);
}

TEST(ProbeSessionTest, KeepsReadingsOnTheRunsClockAndWhatTheServerSaid) {
  SteadyClock clock;
  std::mutex mu;
  std::condition_variable read;
  bool got = false;
  class Counter final : public ProbeSource {
   public:
    std::string name() const override { return "postgresql"; }
    absl::Status Read(std::vector<ProbeValue>& out) override {
      out.push_back({.source = "postgresql", .name = "xact_commit", .value = 1, .gauge = false});
      return absl::OkStatus();
    }
  };
  auto server = std::make_shared<ProbedServer>();
  server->identity.product = "PostgreSQL";
  server->identity.version = "15.4";
  server->identity.settings["max_connections"] = "100";
  const Nanos started = clock.Now();
  ProbeSession session(std::make_unique<DatabaseProbe>(
                           clock,
                           []() -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
                             std::vector<std::unique_ptr<ProbeSource>> sources;
                             sources.push_back(std::make_unique<Counter>());
                             return sources;
                           },
                           DatabaseProbe::Options{.interval = 5 * kMillisecond,
                                                  .on_reading =
                                                      [&] {
                                                        std::lock_guard lock(mu);
                                                        got = true;
                                                        read.notify_all();
                                                      },
                                                  .thread_start = {},
                                                  .thread_end = {}}),
                       server);
  EXPECT_TRUE(session.active());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(read.wait_for(lock, std::chrono::seconds(10), [&] { return got; }));
  }
  const std::vector<ProbeReading> readings = session.TakeReadings(started);
  ASSERT_FALSE(readings.empty());
  EXPECT_TRUE(session.has_readings());
  EXPECT_TRUE(session.FirstReadingIn());
  EXPECT_GE(session.last_reading_s(), 0);
  EXPECT_EQ(session.error(), "");
  EXPECT_EQ(session.MaxConnections(), 100u);
  v1::RunManifest manifest;
  session.FillManifest(manifest);
  EXPECT_EQ(manifest.server_product(), "PostgreSQL");
  EXPECT_EQ(manifest.server_version(), "15.4");
  EXPECT_EQ(manifest.server_settings().at("max_connections"), "100");
  std::unique_ptr<DatabaseProbe> retired = session.Retire();
  EXPECT_NE(retired, nullptr);
  EXPECT_FALSE(session.active());
}

TEST(DatabaseProbeFactoryTest, TheNoopDriverAndAPlanThatTurnsItOffHaveNoProbe) {
  SteadyClock clock;
  DatabaseProbeFactory factory(clock, {});
  ProbeSession noop = factory.Start("run-1", PlanFor("noop", "127.0.0.1"),
                                    PlanFor("noop", "127.0.0.1").target(), [] {});
  EXPECT_FALSE(noop.active());
  EXPECT_EQ(noop.error(), "");
  v1::Plan off = PlanFor("postgresql", "127.0.0.1");
  off.mutable_probe()->set_disabled(true);
  absl::StatusOr<v1::Target> resolved = factory.Resolve(off);
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->host(), "127.0.0.1");
  ProbeSession disabled = factory.Start("run-2", off, resolved, [] {});
  EXPECT_FALSE(disabled.active());
  EXPECT_EQ(disabled.error(), "");
}

TEST(DatabaseProbeFactoryTest, ATargetOutsideTheAllowListIsNotProbedAndTheRunIsTold) {
  SteadyClock clock;
  std::vector<std::string> logged;
  DatabaseProbeFactory factory(clock,
                               {.allow_target = TargetAllowList::LoopbackDefault(),
                                .remedy = "the coordinator",
                                .resolver = std::make_shared<FixedResolver>("192.0.2.7"),
                                .log = [&](const std::string& line) { logged.push_back(line); }});
  v1::Plan plan = PlanFor("postgresql", "db.example.com");
  absl::StatusOr<v1::Target> resolved = factory.Resolve(plan);
  ASSERT_FALSE(resolved.ok());
  ProbeSession session = factory.Start("run-3", plan, resolved, [] {});
  EXPECT_FALSE(session.active());
  EXPECT_THAT(session.error(), HasSubstr("probe off: "));
  EXPECT_THAT(session.error(), HasSubstr("the coordinator"));
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_THAT(logged[0], HasSubstr("run run-3: probe off: "));
}

// The row check's counter goes the probe's way: nothing to count on noop, and a target outside
// the coordinator's --allow-target is not counted, with a note that names the flag.
TEST(DatabaseProbeFactoryTest, TheRowCounterNeedsARealTargetAndTheCoordinatorsConsent) {
  SteadyClock clock;
  DatabaseProbeFactory factory(clock, {.allow_target = TargetAllowList::LoopbackDefault(),
                                       .remedy = "dbload run",
                                       .resolver = std::make_shared<FixedResolver>("192.0.2.7")});
  absl::StatusOr<RowCounter> noop = factory.MakeRowCounter(PlanFor("noop", "127.0.0.1"));
  ASSERT_TRUE(noop.ok()) << noop.status();
  EXPECT_FALSE(*noop);
  absl::StatusOr<RowCounter> refused =
      factory.MakeRowCounter(PlanFor("postgresql", "db.example.com"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the coordinator refuses target db.example.com:5432 (resolved to "
                        "192.0.2.7)"));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("start dbload run with --allow-target db.example.com"));
  EXPECT_THAT(refused.status().message(), HasSubstr("to count the rows the run changes"));
  absl::StatusOr<RowCounter> allowed = factory.MakeRowCounter(PlanFor("postgresql", "127.0.0.1"));
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_TRUE(*allowed);  // it connects when it counts
}

}  // namespace
}  // namespace dbload
