// --allow-target end to end, on this machine's loopback addresses: a real PostgreSQL 15 (dbenv)
// listening on 127.0.0.1 and 127.0.0.2 (DBENV_PG_ALSO_LISTEN), the real dbload-coordinator,
// dbload-agent and dbload CLI. A target outside a process's list is refused before any
// connection, which the server's own count of sessions (pg_stat_database.sessions of bench)
// confirms; a target inside is reached at the address checked, which the report's manifest
// records (RunManifest.AgentHost.target_address).
//
// Every process started here is stopped by its PID (the Child destructor), also on failure.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/exit_codes.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || !defined(DBLOAD_AGENT_BINARY)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::ListeningAddress;
using ::dbload::testing::LoadReport;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunDbload;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// The second loopback address PostgreSQL listens on: a target that is not 127.0.0.1.
constexpr char kOtherAddress[] = "127.0.0.2";

class AllowTargetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new testing::ScratchDir("dbload_allow_target_test"); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (servers().Get("PG_ALSO_LISTEN") != kOtherAddress) {
      GTEST_SKIP() << "the PostgreSQL of DBLOAD_DBENV_DIR does not listen on " << kOtherAddress
                   << " (start it with DBENV_PG_ALSO_LISTEN=" << kOtherAddress << ")";
    }
  }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }
  static std::string Port() { return servers().Get("PG_PORT"); }

  static std::string WritePlan(const std::string& name, const std::string& host) {
    return dir_->Write(
        absl::StrCat(name, ".yaml"),
        absl::StrCat(
            "name: ", name, "\ntarget:\n  driver: postgresql\n  host: ", host, "\n  port: ", Port(),
            "\n  user: bench\n  password_file: ", servers().Get("PG_PASSWORD_FILE"),
            "\n  database: bench\n  connect_timeout: 5s\n"
            "workload: oltp\nscenario: point_select\nworkload_options:\n  table_size: 100\n"
            "load:\n  closed:\n    clients: 1\nwarmup: 0s\nstop:\n  queries: 50\n"
            "explain: {enabled: false}\n"));
  }

  // Sessions ever opened in database bench, once none is open and two reads 300 ms apart agree
  // (a backend's statistics reach the counters when it ends).
  static int64_t BenchSessions() { return testing::SettledPgDatabaseCounters(servers()).sessions; }

  // The tables of the plans (one schema for all): prepared once, through an allowed target.
  static void Prepare() {
    static bool prepared = false;
    if (prepared) return;
    const std::string plan = WritePlan("prepare", kOtherAddress);
    const ProcessResult cleanup = RunDbload({"cleanup", plan, "--allow-target", "127.0.0.0/8"});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    const ProcessResult prepare = RunDbload({"prepare", plan, "--allow-target", "127.0.0.2"});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
    prepared = true;
  }

  // A coordinator whose probe may read 127.0.0.1 only; its address in `address`.
  static std::unique_ptr<Child> StartCoordinator(std::string& address) {
    auto coordinator = std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--allow-target", "127.0.0.1/32"});
    address = ListeningAddress(*coordinator);
    EXPECT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
    return coordinator;
  }

  // An agent named `name` with `allow`, connected (listed by `dbload agents`) within 10 s.
  static std::unique_ptr<Child> StartAgent(const std::string& address, const std::string& name,
                                           const std::string& allow) {
    auto agent = std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", name, "--allow-target", allow});
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < give_up) {
      const ProcessResult listed = RunDbload({"agents", "--coordinator", address});
      if (absl::StrContains(listed.out, name)) return agent;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "agent " << name << " did not connect within 10 s";
    return agent;
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* AllowTargetTest::dir_ = nullptr;

TEST_F(AllowTargetTest, CommandsThatConnectHereRefuseBeforeConnectingAndDialWhatTheyChecked) {
  Prepare();
  const std::string plan = WritePlan("other_address", kOtherAddress);
  const int64_t sessions_before = BenchSessions();
  for (const std::string command : {"run", "prepare", "cleanup"}) {
    const ProcessResult refused = RunDbload({command, plan, "--allow-target", "127.0.0.1/32"});
    EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Describe();
    EXPECT_THAT(refused.err,
                HasSubstr(absl::StrCat("dbload ", command, " refuses target 127.0.0.2:", Port(),
                                       ": not in its --allow-target (127.0.0.1/32); start dbload ",
                                       command,
                                       " with --allow-target 127.0.0.2 (or a CIDR that holds it) "
                                       "to send load there")))
        << refused.Describe();
  }
  // A host name is resolved once and judged by the address it resolved to.
  const ProcessResult by_name =
      RunDbload({"run", WritePlan("by_name", "localhost"), "--allow-target", "127.0.0.2"});
  EXPECT_EQ(by_name.exit_code, kExitUsage) << by_name.Describe();
  EXPECT_THAT(by_name.err, HasSubstr(absl::StrCat("dbload run refuses target localhost:", Port(),
                                                  " (resolved to 127.0.0.1")))
      << by_name.Describe();
  EXPECT_EQ(BenchSessions(), sessions_before) << "a refused command reached the database";

  const std::string report_path = dir_->path() + "/run.json";
  const ProcessResult allowed = RunDbload({"run", plan, "--allow-target",
                                           absl::StrCat("127.0.0.2:", Port()), "--report",
                                           report_path});
  ASSERT_EQ(allowed.exit_code, kExitOk) << allowed.Describe();
  EXPECT_THAT(allowed.out, HasSubstr(absl::StrCat("Dialed: 127.0.0.2:", Port(), " (every agent)")));
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), 50u);
  ASSERT_EQ(report->manifest().agents_size(), 1);
  EXPECT_EQ(report->manifest().agents(0).target_address(), absl::StrCat("127.0.0.2:", Port()));
  EXPECT_GT(BenchSessions(), sessions_before);
}

TEST_F(AllowTargetTest, AgentsRefuseOutsideTheirListAndTheCoordinatorSaysWhichAndWhy) {
  Prepare();
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(address);
  ASSERT_FALSE(address.empty());
  const std::string other = WritePlan("agent_other", kOtherAddress);
  const std::string localhost = WritePlan("agent_localhost", "localhost");
  const int64_t sessions_before = BenchSessions();
  {
    // Up front: the coordinator knows the agent's list from its hello.
    std::unique_ptr<Child> agent = StartAgent(address, "narrow", "127.0.0.1/32");
    const ProcessResult refused = RunDbload({"submit", other, "--coordinator", address, "--wait"});
    EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Describe();
    EXPECT_THAT(refused.err,
                HasSubstr(absl::StrCat("agent 'narrow' refuses target 127.0.0.2:", Port(),
                                       ": not in its --allow-target (127.0.0.1/32); start the agent "
                                       "with --allow-target 127.0.0.2 (or a CIDR that holds it) to "
                                       "send load there")))
        << refused.Describe();
    EXPECT_EQ(BenchSessions(), sessions_before) << "a refused run reached the database";

    // A host name resolving inside the list: allowed, and the address it resolved to dialed.
    const std::string report_path = dir_->path() + "/localhost.json";
    const ProcessResult ran = RunDbload(
        {"submit", localhost, "--coordinator", address, "--wait", "--report", report_path});
    ASSERT_EQ(ran.exit_code, kExitOk) << ran.Describe();
    absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_EQ(report->manifest().agents_size(), 1);
    EXPECT_EQ(report->manifest().agents(0).target_address(), absl::StrCat("127.0.0.1:", Port()));
    EXPECT_EQ(report->executed(), 50u);
  }
  const int64_t sessions_after_localhost = BenchSessions();
  EXPECT_GT(sessions_after_localhost, sessions_before);
  {
    // Only the agent can resolve a name: it refuses, and the run fails with its reason.
    std::unique_ptr<Child> agent = StartAgent(address, "other-only", "127.0.0.2");
    const ProcessResult refused =
        RunDbload({"submit", localhost, "--coordinator", address, "--wait"});
    EXPECT_EQ(refused.exit_code, kExitRunFailed) << refused.Describe();
    EXPECT_THAT(refused.out + refused.err,
                HasSubstr(absl::StrCat("agent 'other-only' refuses target localhost:", Port(),
                                       " (resolved to 127.0.0.1")))
        << refused.Describe();
    EXPECT_EQ(BenchSessions(), sessions_after_localhost) << "a refusing agent connected";
  }
  {
    // Allowed on the agent, not for the coordinator's probe: the run goes on, unprobed.
    std::unique_ptr<Child> agent = StartAgent(address, "wide", "127.0.0.0/8");
    const std::string report_path = dir_->path() + "/other.json";
    const ProcessResult ran =
        RunDbload({"submit", other, "--coordinator", address, "--wait", "--report", report_path});
    ASSERT_EQ(ran.exit_code, kExitOk) << ran.Describe();
    absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->executed(), 50u);
    ASSERT_EQ(report->manifest().agents_size(), 1);
    EXPECT_EQ(report->manifest().agents(0).target_address(), absl::StrCat("127.0.0.2:", Port()));
    EXPECT_EQ(report->probe_error(),
              absl::StrCat("probe off: the coordinator's probe refuses target 127.0.0.2:", Port(),
                           ": not in its --allow-target (127.0.0.1/32); start the coordinator "
                           "with --allow-target 127.0.0.2 (or a CIDR that holds it) to read its "
                           "statistics"));
  }
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  // Before the servers start (dbenv reads it): PostgreSQL listens on 127.0.0.2 too.
  setenv("DBENV_PG_ALSO_LISTEN", dbload::kOtherAddress, /*overwrite=*/1);
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres"});
}
