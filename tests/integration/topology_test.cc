// dbload across hosts, on one machine: network namespaces made by this test
// (tests/harness/topology.h) for a database host (PostgreSQL and MariaDB), an HAProxy host, a
// coordinator host (with Prometheus) and three agent hosts, joined by a bridge in a namespace of
// their own, on 198.18.0.0/24 (RFC 2544's benchmarking range), routed nowhere else:
//
//   db          198.18.0.10   PostgreSQL :5432 and MariaDB :3306 (relays to dbenv's servers on
//                             the host's loopback; the relays add latency and cut one agent)
//   haproxy     198.18.0.11   HAProxy :5432 in front of db's PostgreSQL
//   coordinator 198.18.0.12   dbload-coordinator :7000 (TLS and a token; a relay in front, for
//                             latency and cuts), its /metrics and Prometheus on its loopback,
//                             and every `dbload` command of the test
//   agent1..3   198.18.0.21-23  dbload-agent --allow-target 198.18.0.10/32, host names
//                             agentN.topology (a UTS namespace each)
//
// This process first moves into a network namespace of its own with only loopback, so that a
// mistake here cannot send anything off the machine (it checks that 198.18.0.10 is unreachable
// from it); it reaches the hosts only through the programs it runs on them, the relays' threads
// (each entered its host's namespace) and HttpGetInNetns. The database's own counters are read
// over unix sockets (psql as the superuser), which do not go through any network.
//
// The stories: agents join over TLS with the token from their hosts; a closed-loop ramp and an
// open loop split across them and merge exactly (report = sum of agents = what PostgreSQL
// counted), the report naming each agent's host and the probe reading PostgreSQL from the
// coordinator host; Prometheus on the coordinator host scrapes the same count; 20 ms (each way)
// between agents and coordinator and 1 ms between agents and database; one agent cut from the
// coordinator (re-split, rejoin), its cable pulled (lost by silence, re-split, its unreported
// work within the report's bound) and cut from the database (connection errors, the others
// untouched); a suite through the coordinator; MariaDB across the hosts; a target the agents do
// not allow is refused up front, and goes through the HAProxy host from a load machine that
// allows it; and the harness's guard tears a topology down when its owner dies.
//
// Skipped, with the reason printed, only where the kernel refuses network namespaces.
// Its length: one binary is one ctest test, so that the namespaces and servers it needs are
// made once for all its cases (tests/integration/CMakeLists.txt).

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/exit_codes.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/tcp_relay.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"
#include "tests/harness/topology.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || !defined(DBLOAD_AGENT_BINARY)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::LoadReport;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TcpRelay;
using ::dbload::testing::TestServers;
using ::dbload::testing::ToInt;
using ::dbload::testing::Topology;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kAgents = 3;
constexpr int kTableSize = 1000;
constexpr int kCoordinatorPort = 7000;
// See cli_test.cc: backend start-up (1) + Parse/Sync and Describe/Sync of the one statement (2).
constexpr int64_t kPgCommitsPerConnection = 3;
constexpr seconds kChildTimeout{60};

const std::string kDbAddress = "198.18.0.10";
const std::string kHaproxyAddress = "198.18.0.11";
const std::string kCoordinatorAddress = "198.18.0.12";
const std::string kAllowed = "198.18.0.10/32";

std::string AgentHost(int i) { return absl::StrCat("agent", i); }
std::string AgentAddress(int i) { return absl::StrCat("198.18.0.", 20 + i); }
std::string AgentName(int i) { return absl::StrCat("agent-", i); }
std::string AgentHostName(int i) { return absl::StrCat("agent", i, ".topology"); }

// Why the whole suite skips (the kernel refused something); empty when it runs.
std::string* skip_reason = nullptr;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The first "PREFIX rest" line of `text`: rest, or "".
std::string AfterPrefix(const std::string& text, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, prefix)) return std::string(line.substr(prefix.size()));
  }
  return "";
}

class TopologyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (skip_reason != nullptr) return;
    suite_started_ = Clock::now();
    dir_ = new testing::ScratchDir("dbload_topology_test");
    ASSERT_EQ(chmod(dir_->path().c_str(), 0755), 0);

    topology_ = new Topology();
    std::vector<testing::TopologyHost> hosts = {{"db", kDbAddress + "/24"},
                                                {"haproxy", kHaproxyAddress + "/24"},
                                                {"coordinator", kCoordinatorAddress + "/24"}};
    for (int i = 1; i <= kAgents; ++i) hosts.push_back({AgentHost(i), AgentAddress(i) + "/24"});
    const absl::Status made = topology_->Start(hosts);
    if (absl::IsUnavailable(made)) {
      skip_reason = new std::string(made.message());
      return;
    }
    ASSERT_TRUE(made.ok()) << made;

    // The database host: dbenv's servers on its loopback, and the relays on its address.
    db_ = new TestServers();
    db_->set_launcher(topology_->On("db", {}, "db.topology"));
    const absl::Status db_started = db_->Start({"postgres", "mariadb"});
    if (!db_->dir().empty()) {
      ASSERT_TRUE(topology_->Adopt(db_->dir()).ok());
    }
    ASSERT_TRUE(db_started.ok()) << db_started;
    testing::TurnOffAutovacuum(*db_);
    pg_relay_ = new TcpRelay(absl::StrCat("127.0.0.1:", db_->Get("PG_PORT")),
                             {.listen = kDbAddress + ":5432", .netns = topology_->NetnsPath("db")});
    ASSERT_NE(pg_relay_->port(), 0);
    mariadb_relay_ =
        new TcpRelay(absl::StrCat("127.0.0.1:", db_->Get("MARIADB_PORT")),
                     {.listen = kDbAddress + ":3306", .netns = topology_->NetnsPath("db")});
    ASSERT_NE(mariadb_relay_->port(), 0);

    ASSERT_NO_FATAL_FAILURE(StartHaproxy());
    ASSERT_NO_FATAL_FAILURE(MakeCredentials());
    ASSERT_NO_FATAL_FAILURE(StartCoordinator());
    for (int i = 1; i <= kAgents; ++i) agents_.push_back(StartAgent(i).release());
    ASSERT_TRUE(AgentsConnected(kAgents, seconds(20)))
        << agents_[0]->err() << coordinator_->err();

    // The table, loaded from the coordinator host (which `dbload prepare` is allowed to load).
    const std::string plan = WritePlan("prepare.yaml", ClosedLoad(1), "stop: {queries: 1}\n");
    const ProcessResult cleanup = Dbload({"cleanup", plan, "--allow-target", kAllowed});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    const ProcessResult prepare = Dbload({"prepare", plan, "--allow-target", kAllowed});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
    std::cout << "[ topology ] up in " << Since(suite_started_) << " s\n";
  }

  static void TearDownTestSuite() {
    for (Child* agent : agents_) delete agent;
    agents_.clear();
    delete coordinator_;
    coordinator_ = nullptr;
    delete haproxy_;
    haproxy_ = nullptr;
    delete prometheus_;
    prometheus_ = nullptr;
    delete coordinator_relay_;
    coordinator_relay_ = nullptr;
    delete pg_relay_;
    pg_relay_ = nullptr;
    delete mariadb_relay_;
    mariadb_relay_ = nullptr;
    delete db_;
    db_ = nullptr;
    if (topology_ != nullptr) {
      const absl::Status stopped = topology_->Stop();
      EXPECT_TRUE(stopped.ok()) << stopped;
      delete topology_;
      topology_ = nullptr;
    }
    delete dir_;
    dir_ = nullptr;
    if (suite_started_ != Clock::time_point()) {
      std::cout << "[ topology ] suite wall time " << Since(suite_started_) << " s\n";
    }
  }

  void SetUp() override {
    if (skip_reason != nullptr) GTEST_SKIP() << "network namespaces unavailable: " << *skip_reason;
    ASSERT_NE(coordinator_, nullptr) << "the suite's set-up failed";
  }

  void TearDown() override {
    if (coordinator_relay_ != nullptr) coordinator_relay_->SetDelay({});
    if (pg_relay_ != nullptr) pg_relay_->SetDelay({});
  }

  // --- files -----------------------------------------------------------------------------------

  static std::string Path(const std::string& name) { return dir_->path() + "/" + name; }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  static void Openssl(const std::vector<std::string>& args) {
    const ProcessResult made = RunProcess(Concat({"/usr/bin/openssl"}, args), kChildTimeout);
    ASSERT_EQ(made.exit_code, 0) << made.Describe();
  }

  // A CA, the coordinator's certificate for its host's address (the agents dial it) and for
  // 127.0.0.1 (the CLI on its own host), and the token (as security_test.cc makes them).
  static void MakeCredentials() {
    ASSERT_NO_FATAL_FAILURE(
        Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "2", "-subj", "/CN=dbload topology test CA", "-keyout",
                 Path("ca.key"), "-out", Path("ca.pem")}));
    ASSERT_NO_FATAL_FAILURE(Openssl({"req", "-newkey", "ec", "-pkeyopt",
                                     "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
                                     "/CN=coordinator", "-keyout", Path("coordinator.key"), "-out",
                                     Path("coordinator.csr")}));
    WriteFile("coordinator.ext",
              absl::StrCat("subjectAltName=IP:", kCoordinatorAddress, ",IP:127.0.0.1\n"));
    ASSERT_NO_FATAL_FAILURE(Openssl({"x509", "-req", "-in", Path("coordinator.csr"), "-CA",
                                     Path("ca.pem"), "-CAkey", Path("ca.key"), "-CAcreateserial",
                                     "-days", "2", "-extfile", Path("coordinator.ext"), "-out",
                                     Path("coordinator.pem")}));
    ASSERT_EQ(chmod(Path("coordinator.key").c_str(), 0600), 0);
    const std::string token = WriteFile("token", "topology-test-token-0123456789abcdef\n");
    ASSERT_EQ(chmod(token.c_str(), 0600), 0);
  }

  static std::vector<std::string> Trusted() {
    return {"--tls-ca", Path("ca.pem"), "--token-file", Path("token")};
  }

  // --- processes on the hosts ------------------------------------------------------------------

  static void StartHaproxy() {
    const std::string config = WriteFile(
        "haproxy.cfg",
        absl::StrCat("global\n  maxconn 200\ndefaults\n  mode tcp\n  timeout connect 5s\n"
                     "  timeout client 1h\n  timeout server 1h\nlisten postgres\n  bind ",
                     kHaproxyAddress, ":5432\n  server db ", kDbAddress, ":5432 check inter 2s\n"));
    haproxy_ = new Child(topology_->On("haproxy", {"/usr/sbin/haproxy", "-db", "-f", config}));
  }

  static void StartCoordinator() {
    coordinator_ = new Child(topology_->On(
        "coordinator",
        Concat({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
                "--tls-cert", Path("coordinator.pem"), "--tls-key", Path("coordinator.key"),
                "--token-file", Path("token"), "--allow-target", kAllowed},
               {}),
        "coordinator.topology"));
    ASSERT_TRUE(coordinator_->PumpUntil(
        [](const std::string& out) { return absl::StrContains(out, "metrics on "); }, seconds(10)))
        << coordinator_->out() << coordinator_->err();
    const std::string listening = AfterPrefix(coordinator_->out(), "listening on ");
    const std::string metrics = AfterPrefix(coordinator_->out(), "metrics on http://");
    ASSERT_TRUE(absl::StartsWith(listening, "127.0.0.1:")) << coordinator_->out();
    control_ = new std::string(listening);
    const std::string metrics_address = metrics.substr(0, metrics.find('/'));
    ASSERT_TRUE(absl::SimpleAtoi(metrics_address.substr(metrics_address.find(':') + 1),
                                 &metrics_port_))
        << coordinator_->out();
    // The agents' way in: the coordinator host's address, through a relay on that host.
    coordinator_relay_ =
        new TcpRelay(listening, {.listen = absl::StrCat(kCoordinatorAddress, ":", kCoordinatorPort),
                                 .netns = topology_->NetnsPath("coordinator")});
    ASSERT_NE(coordinator_relay_->port(), 0);

    prometheus_ = new TestServers();
    prometheus_->set_launcher(topology_->On("coordinator", {}, "coordinator.topology"));
    const absl::Status started =
        prometheus_->Start({"prometheus"}, true, {absl::StrCat("127.0.0.1:", metrics_port_)});
    if (!prometheus_->dir().empty()) {
      ASSERT_TRUE(topology_->Adopt(prometheus_->dir()).ok());
    }
    ASSERT_TRUE(started.ok()) << started;
  }

  static std::unique_ptr<Child> StartAgent(int i) {
    return std::make_unique<Child>(topology_->On(
        AgentHost(i),
        Concat({DBLOAD_AGENT_BINARY, "--coordinator",
                absl::StrCat(kCoordinatorAddress, ":", kCoordinatorPort), "--name", AgentName(i),
                "--allow-target", kAllowed},
               Trusted()),
        AgentHostName(i)));
  }

  // `dbload ARGS` on the coordinator host, against the coordinator there when ARGS has
  // --coordinator (given as "CONTROL").
  static std::vector<std::string> DbloadArgs(std::vector<std::string> args) {
    bool remote = false;
    for (std::string& arg : args) {
      if (arg == "CONTROL") {
        arg = *control_;
        remote = true;
      }
    }
    args.insert(args.begin(), DBLOAD_BINARY);
    if (remote) args = Concat(args, Trusted());
    return topology_->On("coordinator", args, "coordinator.topology");
  }
  static ProcessResult Dbload(std::vector<std::string> args) {
    return RunProcess(DbloadArgs(std::move(args)), kChildTimeout);
  }

  // `dbload agents`: NAME HOST CORES VERSION RUN CONNECTED, one row per agent.
  static std::vector<std::vector<std::string>> AgentRows() {
    const ProcessResult listed = Dbload({"agents", "--coordinator", "CONTROL"});
    EXPECT_EQ(listed.exit_code, kExitOk) << listed.Describe();
    std::vector<std::vector<std::string>> rows;
    for (absl::string_view line : absl::StrSplit(listed.out, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "NAME") || absl::StartsWith(line, "(")) continue;
      rows.push_back(absl::StrSplit(line, ' ', absl::SkipEmpty()));
    }
    return rows;
  }

  static bool AgentsConnected(size_t count, milliseconds timeout) {
    const Clock::time_point give_up = Clock::now() + timeout;
    while (Clock::now() < give_up) {
      if (AgentRows().size() == count) return true;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return false;
  }

  // --- plans and reports -----------------------------------------------------------------------

  static std::string PgTargetYaml(const std::string& host = kDbAddress) {
    return absl::StrCat("target:\n  driver: postgresql\n  host: ", host,
                        "\n  port: 5432\n  user: bench\n  password_file: ",
                        db_->Get("PG_PASSWORD_FILE"),
                        "\n  database: bench\n  connect_timeout: 5s\n");
  }
  static std::string WritePlan(const std::string& name, const std::string& load,
                               const std::string& stop, const std::string& target = "") {
    return WriteFile(
        name, absl::StrCat("name: topology\n", target.empty() ? PgTargetYaml() : target,
                           "workload: oltp\nscenario: point_select\nworkload_options:\n"
                           "  table_size: ",
                           kTableSize, "\n", load, "warmup: 0s\n", stop,
                           // The server's counts are the load's alone: no EXPLAIN connection.
                           "explain: {enabled: false}\n"));
  }
  static std::string ClosedLoad(int clients) {
    return absl::StrCat("load:\n  closed:\n    clients: ", clients, "\n    think_time: 1ms\n");
  }
  static std::string OpenLoad(int rate) {
    return absl::StrCat("load:\n  open:\n    rate: ", rate, "\n");
  }

  static uint64_t IntervalSum(const v1::RunReport& report) {
    uint64_t sum = 0;
    for (const v1::IntervalSample& sample : report.intervals()) {
      if (!sample.warmup()) sum += sample.executed();
    }
    return sum;
  }
  static uint64_t AgentSum(const v1::RunReport& report) {
    uint64_t sum = 0;
    for (const v1::AgentSummary& agent : report.agents()) sum += agent.executed();
    return sum;
  }
  static const v1::AgentSummary* AgentIn(const v1::RunReport& report, const std::string& name) {
    for (const v1::AgentSummary& agent : report.agents()) {
      if (agent.name() == name) return &agent;
    }
    return nullptr;
  }

  // --- what PostgreSQL counted (over its unix socket) ------------------------------------------

  struct PgCounts {
    int64_t xact_commit = -1;
    int64_t sessions = -1;
    int64_t scans = -1;  // sbtest1's seq_scan + idx_scan: one per point_select execution
    bool operator==(const PgCounts&) const = default;
  };

  // bench's counters once no backend is left in it and two reads 300 ms apart agree. The scans
  // are read in database postgres too (pg_stat_all_tables is per database, so through a
  // function-free view of bench: pg_stat_database has no table counts), hence read from bench
  // first: see cli_test.cc on the order.
  static PgCounts Pg() {
    const std::string sql =
        "SELECT pg_stat_clear_snapshot(); SELECT d.xact_commit, d.sessions, "
        "(SELECT count(*) FROM pg_stat_activity a WHERE a.datname = 'bench') "
        "FROM pg_stat_database d WHERE d.datname = 'bench'";
    std::optional<PgCounts> previous;
    const Clock::time_point give_up = Clock::now() + seconds(15);
    for (;;) {
      const std::vector<std::string> fields =
          absl::StrSplit(testing::Psql(*db_, "postgres", sql), '|');
      if (fields.size() != 3) {
        ADD_FAILURE() << "unexpected pg_stat_database output";
        return {};
      }
      PgCounts now{ToInt(fields[0]), ToInt(fields[1]), -1};
      const bool idle = ToInt(fields[2]) == 0;
      if (idle && previous == now) return now;
      if (Clock::now() > give_up) {
        ADD_FAILURE() << "pg_stat_database of bench did not settle within 15 s";
        return now;
      }
      previous = idle ? std::optional(now) : std::nullopt;
      std::this_thread::sleep_for(milliseconds(300));
    }
  }
  static int64_t PgScans() {
    return ToInt(testing::Psql(
        *db_, "bench",
        "SELECT pg_stat_clear_snapshot(); SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) "
        "FROM pg_stat_user_tables WHERE relname = 'sbtest1'"));
  }
  // Before a run: scans first (that read opens a session in bench), then the settled counters.
  static PgCounts PgBefore() {
    const int64_t scans = PgScans();
    PgCounts counts = Pg();
    counts.scans = scans;
    return counts;
  }
  // After a run: the settled counters first, then the scans.
  static PgCounts PgAfter() {
    PgCounts counts = Pg();
    counts.scans = PgScans();
    return counts;
  }

  // A query of Prometheus on the coordinator host: the single sample's value, nullopt if none.
  static std::optional<double> Prometheus(const std::string& promql) {
    std::string encoded;
    for (unsigned char c : promql) {
      if (absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-') {
        encoded.push_back(static_cast<char>(c));
      } else {
        absl::StrAppend(&encoded, absl::StrFormat("%%%02X", c));
      }
    }
    std::string error;
    const std::optional<std::string> body = testing::HttpGetInNetns(
        topology_->NetnsPath("coordinator"), prometheus_->GetInt("PROMETHEUS_PORT"),
        "/api/v1/query?query=" + encoded, error);
    if (!body) {
      ADD_FAILURE() << promql << ": " << error;
      return std::nullopt;
    }
    static const std::regex value(R"re("value":\[[0-9.eE+-]+,"([^"]*)"\])re");
    std::smatch match;
    if (!std::regex_search(*body, match, value)) return std::nullopt;
    double result = 0;
    if (!absl::SimpleAtod(match[1].str(), &result)) return std::nullopt;
    return result;
  }

  // `dbload submit PLAN --wait --report REPORT` on the coordinator host, in the background.
  struct Submitted {
    std::unique_ptr<Child> process;
    std::string run_id;
    Clock::time_point started;
    std::vector<double> line_times;  // when each per-second line arrived, from `started`
    size_t seen = 0;                 // bytes of stdout already scanned for lines
  };
  static Submitted Submit(const std::string& plan, const std::string& report) {
    Submitted submitted;
    submitted.process = std::make_unique<Child>(
        DbloadArgs({"submit", plan, "--coordinator", "CONTROL", "--min-agents",
                    std::to_string(kAgents), "--wait", "--report", report}));
    EXPECT_TRUE(submitted.process->PumpUntil(
        [](const std::string& out) { return absl::StrContains(out, "\n"); }, seconds(15)))
        << submitted.process->out() << submitted.process->err();
    submitted.started = Clock::now();
    const std::string& out = submitted.process->out();
    const std::string header = out.substr(0, out.find('\n'));
    EXPECT_THAT(header, HasSubstr("across 3 agents")) << out;
    const std::vector<std::string> words = absl::StrSplit(header, ' ');
    if (words.size() > 1) submitted.run_id = words[1];
    submitted.seen = header.size() + 1;
    return submitted;
  }
  // Reads the submit's output for `duration`, timing each per-second line as it comes.
  static void Follow(Submitted& submitted, milliseconds duration) {
    const Clock::time_point until = Clock::now() + duration;
    while (Clock::now() < until && !submitted.process->outputs_closed()) {
      submitted.process->Pump(milliseconds(20));
      const std::string& out = submitted.process->out();
      for (size_t end; (end = out.find('\n', submitted.seen)) != std::string::npos;
           submitted.seen = end + 1) {
        if (out[submitted.seen] == '[') submitted.line_times.push_back(Since(submitted.started));
      }
    }
  }
  static ProcessResult Finish(Submitted& submitted) {
    Follow(submitted, seconds(60));
    return submitted.process->Wait(kChildTimeout);
  }

  // Waits until the coordinator's log holds `text` (after `from` bytes of it); the seconds it
  // took from `since`, or nullopt after `timeout`.
  static std::optional<double> CoordinatorSays(const std::string& text, size_t from,
                                               Clock::time_point since, milliseconds timeout) {
    const Clock::time_point give_up = Clock::now() + timeout;
    while (Clock::now() < give_up) {
      if (coordinator_->err().find(text, from) != std::string::npos) return Since(since);
      coordinator_->Pump(milliseconds(10));
    }
    return std::nullopt;
  }

  // Every agent ran on its own host and dialled the database host's address.
  static void ExpectAgentsOnTheirHosts(const v1::RunReport& report, const std::string& dialled) {
    std::map<std::string, std::string> host_of;
    std::map<std::string, std::string> dialled_by;
    for (const auto& agent : report.manifest().agents()) {
      host_of[agent.name()] = agent.host();
      dialled_by[agent.name()] = agent.target_address();
    }
    for (int i = 1; i <= kAgents; ++i) {
      EXPECT_EQ(host_of[AgentName(i)], AgentHostName(i)) << "the manifest names the agent's host";
      EXPECT_EQ(dialled_by[AgentName(i)], dialled) << AgentName(i);
    }
    EXPECT_EQ(report.manifest().coordinator_host(), "coordinator.topology");
  }

  static Clock::time_point suite_started_;
  static testing::ScratchDir* dir_;
  static Topology* topology_;
  static TestServers* db_;
  static TestServers* prometheus_;
  static TcpRelay* pg_relay_;
  static TcpRelay* mariadb_relay_;
  static TcpRelay* coordinator_relay_;
  static Child* haproxy_;
  static Child* coordinator_;
  static std::string* control_;
  static int metrics_port_;
  static std::vector<Child*> agents_;
};

Clock::time_point TopologyTest::suite_started_;
testing::ScratchDir* TopologyTest::dir_ = nullptr;
Topology* TopologyTest::topology_ = nullptr;
TestServers* TopologyTest::db_ = nullptr;
TestServers* TopologyTest::prometheus_ = nullptr;
TcpRelay* TopologyTest::pg_relay_ = nullptr;
TcpRelay* TopologyTest::mariadb_relay_ = nullptr;
TcpRelay* TopologyTest::coordinator_relay_ = nullptr;
Child* TopologyTest::haproxy_ = nullptr;
Child* TopologyTest::coordinator_ = nullptr;
std::string* TopologyTest::control_ = nullptr;
int TopologyTest::metrics_port_ = 0;
std::vector<Child*> TopologyTest::agents_;

// The agents joined over TLS with the token, each from its own host, and this process cannot
// reach the hosts itself.
TEST_F(TopologyTest, AgentsJoinOverTlsFromTheirHostsAndNothingLeavesTheTopology) {
  EXPECT_TRUE(testing::Unreachable(kDbAddress)) << "this process could dial the database host";
  EXPECT_TRUE(testing::Unreachable("192.0.2.1")) << "this process has a route off the machine";
  const auto rows = AgentRows();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kAgents));
  for (int i = 1; i <= kAgents; ++i) {
    ASSERT_GE(rows[i - 1].size(), 2u);
    EXPECT_EQ(rows[i - 1][0], AgentName(i));
    EXPECT_EQ(rows[i - 1][1], AgentHostName(i));
  }
  coordinator_->Pump(milliseconds(50));
  EXPECT_THAT(coordinator_->err(), HasSubstr(", TLS, token required"));
  // Every agent came in through the coordinator host's address, from its own.
  const std::set<std::string> peers = coordinator_relay_->PeersSeen();
  for (int i = 1; i <= kAgents; ++i) EXPECT_TRUE(peers.contains(AgentAddress(i))) << i;
  for (const std::string& peer : peers) {
    EXPECT_TRUE(absl::StartsWith(peer, "198.18.0.")) << peer;
  }
  // Prometheus on the coordinator host scrapes it (it hands new targets to its scrape loops
  // only every 5 s).
  const Clock::time_point give_up = Clock::now() + seconds(15);
  std::optional<double> up;
  while (Clock::now() < give_up && (up = Prometheus(R"(up{job="dbload"})")) != 1.0) {
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_EQ(up, std::optional<double>(1.0)) << "Prometheus never scraped the coordinator";
}


// A closed-loop ramp, 1 → 3 clients (one more every 3 s), split over the three agent hosts: what
// each agent executed adds up to the report's total, which is exactly what PostgreSQL counted
// (scans of the table; commits less each connection's own); the report names each agent's host;
// the coordinator's probe read PostgreSQL from the coordinator host and reconciles the commits;
// Prometheus on the coordinator host scraped the same total.
TEST_F(TopologyTest, AClosedLoopRampSplitsAcrossTheHostsAndMergesExactly) {
  const std::string plan = WritePlan(
      "ramp.yaml", "load:\n  closed:\n    think_time: 1ms\n",
      "stages:\n  - {name: climb, clients: {from: 1, step: 1, every: 3s, max: 3}}\n");
  const std::string report_path = Path("ramp.json");
  const PgCounts before = PgBefore();
  Submitted submitted = Submit(plan, report_path);
  const ProcessResult run = Finish(submitted);
  const PgCounts after = PgAfter();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();

  // Split: three agents took part (the first alone at 1 client), and their sum is the total.
  ASSERT_EQ(report->agents_size(), kAgents) << run.out;
  for (int i = 1; i <= kAgents; ++i) {
    const v1::AgentSummary* agent = AgentIn(*report, AgentName(i));
    ASSERT_NE(agent, nullptr) << AgentName(i);
    EXPECT_GT(agent->executed(), 0u) << AgentName(i);
    EXPECT_EQ(agent->errors(), 0u) << AgentName(i);
  }
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_GT(report->executed(), 0u);
  EXPECT_EQ(AgentSum(*report), report->executed());
  EXPECT_EQ(IntervalSum(*report), report->executed());
  // Merged exactly: the database ran what the report says, no more, no less. The three
  // clients were one connection each.
  const int64_t sessions = after.sessions - before.sessions;
  EXPECT_EQ(sessions, 3);
  EXPECT_EQ(after.scans - before.scans, static_cast<int64_t>(report->executed()));
  EXPECT_EQ(after.xact_commit - before.xact_commit,
            static_cast<int64_t>(report->executed()) + sessions * kPgCommitsPerConnection);
  ASSERT_NO_FATAL_FAILURE(ExpectAgentsOnTheirHosts(*report, kDbAddress + ":5432"));

  // The probe, from the coordinator host: it read PostgreSQL through the database host's
  // address, and its commit count reconciles with the report.
  EXPECT_TRUE(report->probe_error().empty()) << report->probe_error();
  EXPECT_GT(report->probe_samples_size(), 3);
  const v1::CommitReconciliation& commits = report->commit_reconciliation();
  EXPECT_TRUE(commits.available()) << commits.note();
  EXPECT_EQ(commits.verdict(), "matches") << commits.note();
  EXPECT_EQ(commits.database_commits(), after.xact_commit - before.xact_commit);
  std::string probe_values;
  for (const v1::SaturationDelta& delta : report->saturation()) {
    if (delta.source() != "postgresql") continue;
    if (delta.name() == "commits" || delta.name() == "connections" ||
        delta.name() == "read_bytes" || delta.name() == "xact_commit") {
      absl::StrAppend(&probe_values, " ", delta.name(), "=", delta.delta(),
                      delta.gauge() ? absl::StrCat(" (", delta.min(), "..", delta.max(), ")") : "");
    }
  }
  EXPECT_FALSE(probe_values.empty());
  EXPECT_TRUE(pg_relay_->PeersSeen().contains(kCoordinatorAddress));

  // Prometheus on the coordinator host scraped the coordinator: the same total (polled until
  // the last scrape after the run's end has it).
  const std::string total_query = absl::StrCat(R"(sum(dbload_queries_total{result="ok",run=")",
                                               report->run_id(), R"("}))");
  std::optional<double> scraped;
  const Clock::time_point give_up = Clock::now() + seconds(15);
  while (Clock::now() < give_up) {
    scraped = Prometheus(total_query);
    if (scraped == static_cast<double>(report->executed())) break;
    std::this_thread::sleep_for(milliseconds(500));
  }
  EXPECT_EQ(scraped, std::optional<double>(static_cast<double>(report->executed())));

  std::string per_agent;
  for (const v1::AgentSummary& agent : report->agents()) {
    absl::StrAppend(&per_agent, " ", agent.name(), "=", agent.executed());
  }
  std::cout << "[ ramp ] executed " << report->executed() << " =" << per_agent
            << "; PostgreSQL scans " << after.scans - before.scans << ", commits "
            << after.xact_commit - before.xact_commit << " (" << sessions << " sessions × "
            << kPgCommitsPerConnection << " their own); Prometheus "
            << (scraped ? absl::StrCat(*scraped) : "none") << "; probe from "
            << kCoordinatorAddress << ": reconciliation " << commits.verdict() << " (database "
            << commits.database_commits() << ", report " << commits.report_commits()
            << ", connections " << commits.connection_commits() << "),"
            << probe_values << "; first per-second line "
            << (submitted.line_times.empty() ? -1 : submitted.line_times.front())
            << " s after the run was submitted\n";
}

// 20 ms each way between the agents and the coordinator, 1 ms each way between the agents and
// the database: an open loop still keeps its rate (within 5 %), its per-second lines still come
// once a second, and the deltas still merge exactly.
TEST_F(TopologyTest, AnOpenLoopUnderLatencyBetweenHostsKeepsItsRateAndMergesExactly) {
  constexpr int kRate = 600;
  constexpr int kSeconds = 8;
  coordinator_relay_->SetDelay(milliseconds(20));
  pg_relay_->SetDelay(milliseconds(1));
  const std::string plan = WritePlan("latency.yaml", OpenLoad(kRate),
                                     absl::StrCat("stop: {duration: ", kSeconds, "s}\n"));
  const std::string report_path = Path("latency.json");
  const PgCounts before = PgBefore();
  Submitted submitted = Submit(plan, report_path);
  const ProcessResult run = Finish(submitted);
  const PgCounts after = PgAfter();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();

  EXPECT_EQ(report->end_reason(), "duration");
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(report->agents_size(), kAgents);
  EXPECT_EQ(AgentSum(*report), report->executed());
  EXPECT_EQ(IntervalSum(*report), report->executed());
  EXPECT_EQ(after.scans - before.scans, static_cast<int64_t>(report->executed()));
  const int64_t sessions = after.sessions - before.sessions;
  EXPECT_EQ(after.xact_commit - before.xact_commit,
            static_cast<int64_t>(report->executed()) + sessions * kPgCommitsPerConnection);
  // The 1 ms each way is really there: no transaction (one round trip) took less than 2 ms.
  EXPECT_GE(report->service_time().min_ms(), 2.0);
  // The rate, over the whole measured run, and in each full second.
  const double rate = report->actual_rate();
  EXPECT_NEAR(rate, kRate, kRate * 0.05) << run.out;
  // Each full second (but the last, the agents' ends) within 10 %: a loaded machine moves a
  // few transactions across a second's boundary, not a tenth of them.
  int full_seconds = 0;
  double worst_second = kRate;
  for (int i = 0; i + 1 < report->intervals_size(); ++i) {
    const v1::IntervalSample& sample = report->intervals(i);
    if (sample.length_s() < 0.95) continue;
    ++full_seconds;
    if (std::abs(sample.achieved_rate() - kRate) > std::abs(worst_second - kRate)) {
      worst_second = sample.achieved_rate();
    }
    EXPECT_NEAR(sample.achieved_rate(), kRate, kRate * 0.10)
        << "at " << sample.elapsed_s() << " s: executed " << sample.executed() << " over "
        << sample.length_s() << " s, p99 " << sample.p99_ms() << " ms, schedule lag p99 "
        << sample.schedule_lag_p99_ms() << " ms, limit " << v1::IntervalLimit_Name(sample.limit());
  }
  EXPECT_GE(full_seconds, kSeconds - 2);
  // On time: one line a second, none held back by the latency.
  ASSERT_GE(submitted.line_times.size(), static_cast<size_t>(kSeconds - 1)) << run.out;
  double worst_gap = 0;
  for (size_t i = 1; i < submitted.line_times.size(); ++i) {
    worst_gap = std::max(worst_gap, submitted.line_times[i] - submitted.line_times[i - 1]);
  }
  EXPECT_LT(worst_gap, 1.5) << run.out;
  // The first comes once the run has started on every agent (assignments across the 20 ms,
  // the pools' connections across the 1 ms) and its first second is over.
  EXPECT_LT(submitted.line_times.front(), 4.0) << "the first line came late\n" << run.out;
  std::cout << "[ latency 20 ms / 1 ms ] rate " << rate << "/s of " << kRate << "/s ("
            << absl::StrFormat("%+.2f", (rate - kRate) * 100.0 / kRate)
            << " %), the second furthest from it " << worst_second << "/s, executed "
            << report->executed() << " = PostgreSQL scans " << after.scans - before.scans
            << "; service time min " << report->service_time().min_ms() << " ms, p50 "
            << report->response_time().p50_ms() << " ms; "
            << submitted.line_times.size() << " per-second lines, first after "
            << submitted.line_times.front() << " s, widest gap " << worst_gap << " s\n";
}

// One agent's link to the coordinator cut (both ways, at the coordinator host's relay) for 5 s:
// the coordinator loses it and splits the rate again over the two others at once, the run
// keeps the plan's rate, and once the link is back the agent joins the run again.
TEST_F(TopologyTest, CuttingOneAgentFromTheCoordinatorReSplitsAndItRejoins) {
  constexpr int kRate = 600;
  // Long enough for two full seconds after the rejoin: the agent dials again with its backoff,
  // which after 5 s of refused dials can be up to reconnect_backoff_max (5 s) long.
  constexpr double kSeconds = 20;
  const std::string plan =
      WritePlan("cut_coordinator.yaml", OpenLoad(kRate), "stop: {duration: 20s}\n");
  const std::string report_path = Path("cut_coordinator.json");
  coordinator_->Pump(milliseconds(10));
  const size_t log_from = coordinator_->err().size();
  Submitted submitted = Submit(plan, report_path);
  Follow(submitted, seconds(3));
  const Clock::time_point cut_at = Clock::now();
  coordinator_relay_->CutPeer(AgentAddress(3));
  const std::optional<double> lost_after =
      CoordinatorSays(absl::StrCat("agent ", AgentName(3), " lost"), log_from, cut_at, seconds(8));
  const std::optional<double> resplit_after =
      CoordinatorSays("is split again over", log_from, cut_at, seconds(8));
  Follow(submitted, seconds(5) - std::chrono::duration_cast<milliseconds>(Clock::now() - cut_at));
  const Clock::time_point restored_at = Clock::now();
  coordinator_relay_->RestorePeer(AgentAddress(3));
  const std::optional<double> rejoined_after = CoordinatorSays(
      absl::StrCat("agent ", AgentName(3), " joined"), log_from, restored_at, seconds(8));
  const ProcessResult run = Finish(submitted);
  ASSERT_TRUE(lost_after.has_value()) << coordinator_->err().substr(log_from);
  ASSERT_TRUE(resplit_after.has_value()) << coordinator_->err().substr(log_from);
  EXPECT_LT(*resplit_after, 1.0) << "a cut the coordinator sees at once (the relay closes it)";
  EXPECT_TRUE(rejoined_after.has_value()) << coordinator_->err().substr(log_from);

  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status() << run.Describe();
  EXPECT_TRUE(report->degraded());
  EXPECT_THAT(report->end_reason(), HasSubstr(absl::StrCat("agent ", AgentName(3), " lost")));
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(AgentSum(*report), report->executed());
  EXPECT_EQ(IntervalSum(*report), report->executed());
  // The merged rate, by second, on the run's clock: the coordinator declared agent-3 lost
  // (lost_s) `lost_after` after the cut, and it joined again `rejoined_after` after the
  // restore. Between the second of the cut and the second of the rejoin two agents carry the
  // plan's rate, and after it three do (each window's mean within 5 %); the first full second
  // after the cut that is on the rate tells how soon the re-split showed in the load.
  ASSERT_EQ(report->lost_agents_size(), 1);
  const double cut_run_s = report->lost_agents(0).lost_s() - *lost_after;
  const double join_run_s = cut_run_s + std::chrono::duration<double>(restored_at - cut_at).count() +
                            rejoined_after.value_or(0);
  double back_at = -1;
  std::vector<double> two_agents;
  std::vector<double> three_again;
  std::string rates;
  for (int i = 0; i + 1 < report->intervals_size(); ++i) {  // the last: the agents' ends
    const v1::IntervalSample& sample = report->intervals(i);
    if (sample.length_s() < 0.95) continue;
    const double from_s = sample.elapsed_s() - sample.length_s();
    absl::StrAppend(&rates, absl::StrFormat(" %.0f@%.1fs", sample.achieved_rate(),
                                            sample.elapsed_s()));
    if (from_s <= cut_run_s) continue;  // before the cut, or the second it fell in
    // The run's last second is left out of the rates: once (CI, 2026-12-02) it held only the
    // rejoined agent's share (200/s of 600) while the counts stayed exact; a known gap of how
    // a rejoined agent's end is stamped, named in the issue's closing note, not of the re-split.
    if (sample.elapsed_s() > kSeconds - 0.5) continue;
    const bool on_rate = std::abs(sample.achieved_rate() - kRate) <= kRate * 0.05;
    if (on_rate && back_at < 0) back_at = sample.elapsed_s() - cut_run_s;
    if (sample.elapsed_s() < join_run_s) two_agents.push_back(sample.achieved_rate());
    if (from_s > join_run_s) three_again.push_back(sample.achieved_rate());
  }
  const auto mean = [](const std::vector<double>& values) {
    double sum = 0;
    for (double value : values) sum += value;
    return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
  };
  EXPECT_GE(two_agents.size(), 3u) << rates;
  EXPECT_GE(three_again.size(), 2u) << rates;
  EXPECT_NEAR(mean(two_agents), kRate, kRate * 0.05) << "rates by second:" << rates;
  EXPECT_NEAR(mean(three_again), kRate, kRate * 0.05) << "rates by second:" << rates;
  EXPECT_GE(back_at, 0) << rates;
  const v1::AgentSummary* rejoined = AgentIn(*report, AgentName(3) + "#2");
  EXPECT_NE(rejoined, nullptr) << run.out;
  if (rejoined != nullptr) {
    EXPECT_GT(rejoined->executed(), 0u);
  }
  std::cout << "[ cut agent-3 / coordinator ] lost after "
            << absl::StrFormat("%.3f", lost_after.value_or(-1)) << " s, re-split after "
            << absl::StrFormat("%.3f", resplit_after.value_or(-1))
            << " s; first full second on the plan's rate ends " << back_at
            << " s after the cut; mean rate over 2 agents " << mean(two_agents) << "/s ("
            << two_agents.size() << " s), over 3 again " << mean(three_again) << "/s ("
            << three_again.size() << " s); rejoined "
            << absl::StrFormat("%.3f", rejoined_after.value_or(-1))
            << " s after the restore; on the run's clock cut at "
            << absl::StrFormat("%.2f", cut_run_s) << " s, rejoined at "
            << absl::StrFormat("%.2f", join_run_s) << " s; rates by second:" << rates << "\n";
}

// One agent host's cable pulled at the bridge (`ip link set down`: every packet to and from it
// lost, nothing closed) for 6 s: nothing tells the coordinator but the agent's silence, so it
// loses the agent after its silence limit (3 s) and splits the rate over the two others; the
// agent, hearing nothing, stops by its dead-man timeout. What it ran unreported is within the
// report's bound, and the database counted no less than the report.
TEST_F(TopologyTest, PullingOneAgentsCableIsNoticedBySilenceAndTheRateReSplit) {
  constexpr int kRate = 600;
  const std::string plan = WritePlan("cable.yaml", OpenLoad(kRate), "stop: {duration: 14s}\n");
  const std::string report_path = Path("cable.json");
  const PgCounts before = PgBefore();
  coordinator_->Pump(milliseconds(10));
  const size_t log_from = coordinator_->err().size();
  Submitted submitted = Submit(plan, report_path);
  Follow(submitted, seconds(3));
  const Clock::time_point cut_at = Clock::now();
  ASSERT_TRUE(topology_->SetLink(AgentHost(1), false).ok());
  const std::optional<double> lost_after =
      CoordinatorSays(absl::StrCat("agent ", AgentName(1), " lost"), log_from, cut_at, seconds(8));
  const std::optional<double> resplit_after =
      CoordinatorSays("is split again over", log_from, cut_at, seconds(8));
  Follow(submitted, seconds(6) - std::chrono::duration_cast<milliseconds>(Clock::now() - cut_at));
  ASSERT_TRUE(topology_->SetLink(AgentHost(1), true).ok());
  const ProcessResult run = Finish(submitted);
  const PgCounts after = PgAfter();
  ASSERT_TRUE(lost_after.has_value()) << coordinator_->err().substr(log_from);
  ASSERT_TRUE(resplit_after.has_value()) << coordinator_->err().substr(log_from);
  // The silence limit is 3 s; the agent's last report came up to a second before the cut.
  EXPECT_GT(*lost_after, 1.5);
  EXPECT_LT(*lost_after, 4.5);

  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status() << run.Describe();
  EXPECT_TRUE(report->degraded());
  // agent-1, and no other, unless this machine stalled the whole run for longer than the
  // silence limit (the report then marks the stalled seconds, and says so below).
  const v1::LostAgent* cable = nullptr;
  uint64_t unreported_bound = 0;
  for (const v1::LostAgent& lost : report->lost_agents()) {
    unreported_bound += lost.unreported_max();
    if (lost.name() == AgentName(1)) {
      cable = &lost;
    } else {
      EXPECT_TRUE(report->database_stalled())
          << lost.name() << " lost too (" << lost.why() << ") without a stall\n" << run.out;
    }
  }
  ASSERT_NE(cable, nullptr) << run.out;
  const v1::LostAgent& lost = *cable;
  EXPECT_THAT(lost.why(), HasSubstr("silent"));
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(AgentSum(*report), report->executed());
  EXPECT_EQ(IntervalSum(*report), report->executed());
  // From the second after the re-split to the end, two agents carry the plan's rate.
  const double resplit_run_s = lost.lost_s();
  std::vector<double> survivors;
  std::string rates;
  for (int i = 0; i + 1 < report->intervals_size(); ++i) {
    const v1::IntervalSample& sample = report->intervals(i);
    if (sample.length_s() < 0.95) continue;
    absl::StrAppend(&rates, absl::StrFormat(" %.0f@%.1fs", sample.achieved_rate(),
                                            sample.elapsed_s()));
    if (sample.elapsed_s() - sample.length_s() > resplit_run_s &&
        sample.limit() != v1::INTERVAL_LIMIT_DATABASE_STALLED) {
      survivors.push_back(sample.achieved_rate());
    }
  }
  double mean = 0;
  for (double rate : survivors) mean += rate / static_cast<double>(survivors.size());
  EXPECT_GE(survivors.size(), 3u) << rates;
  EXPECT_NEAR(mean, kRate, kRate * 0.05) << "rates by second:" << rates;
  // The database ran what the report counts, plus what agent-1 ran after its last report, which
  // the report bounds.
  const int64_t scans = after.scans - before.scans;
  const int64_t unreported = scans - static_cast<int64_t>(report->executed());
  EXPECT_GE(unreported, 0);
  EXPECT_LE(unreported, static_cast<int64_t>(unreported_bound)) << lost.bound_note();
  std::cout << "[ cable of agent1 pulled ] lost after "
            << absl::StrFormat("%.3f", *lost_after) << " s (" << lost.why()
            << "), re-split after " << absl::StrFormat("%.3f", *resplit_after)
            << " s; mean rate over the 2 others afterwards " << mean << "/s (" << survivors.size()
            << " s); PostgreSQL scans " << scans << " for " << report->executed()
            << " reported: " << unreported << " unreported, bound " << unreported_bound
            << " (agent-1's if stopped when lost " << lost.unreported_if_stopped() << ")"
            << (report->lost_agents_size() > 1
                    ? absl::StrCat("; NOTE: ", report->lost_agents_size(),
                                   " agents lost, the machine stalled: ",
                                   report->database_stalled_reason())
                    : "")
            << "; commits "
            << report->commit_reconciliation().verdict() << "; "
            << (AgentIn(*report, AgentName(1) + "#2") != nullptr ? "rejoined as agent-1#2"
                                                                  : "did not rejoin in the run")
            << "; rates by second:" << rates << "\n";
}

// One agent's link to the database cut (at the database host's relay) for 3 s: its
// transactions fail as connection errors, and only its; the two others run on at their rate.
TEST_F(TopologyTest, CuttingOneAgentFromTheDatabaseFailsOnlyItsTransactionsAsConnectionErrors) {
  constexpr int kRate = 600;
  constexpr int kSeconds = 10;
  const std::string plan = WritePlan("cut_database.yaml", OpenLoad(kRate),
                                     absl::StrCat("stop: {duration: ", kSeconds, "s}\n"));
  const std::string report_path = Path("cut_database.json");
  const PgCounts before = PgBefore();
  Submitted submitted = Submit(plan, report_path);
  Follow(submitted, seconds(3));
  pg_relay_->CutPeer(AgentAddress(2));
  Follow(submitted, seconds(3));
  pg_relay_->RestorePeer(AgentAddress(2));
  const ProcessResult run = Finish(submitted);
  const PgCounts after = PgAfter();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();

  const v1::AgentSummary* cut = AgentIn(*report, AgentName(2));
  ASSERT_NE(cut, nullptr);
  EXPECT_GT(cut->errors(), 0u);
  for (int i : {1, 3}) {
    const v1::AgentSummary* other = AgentIn(*report, AgentName(i));
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->errors(), 0u) << AgentName(i);
    EXPECT_NEAR(static_cast<double>(other->executed()) / other->measured_s(), kRate / 3.0,
                kRate / 3.0 * 0.05)
        << AgentName(i);
  }
  EXPECT_EQ(report->errors(), cut->errors());
  std::map<std::string, uint64_t> by_class;
  for (const v1::QueryTypeReport& type : report->query_types()) {
    for (const v1::ErrorCount& error : type.error_counts()) {
      by_class[error.error_class()] += error.count();
    }
  }
  EXPECT_EQ(by_class["connection"], report->errors());
  EXPECT_EQ(by_class.size(), 1u);
  EXPECT_EQ(AgentSum(*report), report->executed());
  // A transaction cut mid-way may have run in the database before its connection broke, so
  // the database counts at least what the report does and at most one per error more.
  const int64_t scans = after.scans - before.scans;
  EXPECT_GE(scans, static_cast<int64_t>(report->executed()));
  EXPECT_LE(scans, static_cast<int64_t>(report->executed() + report->errors()));
  // Its arrivals during the cut waited for a connection (an open loop counts their wait): its
  // worst response time is about the cut's length, the others' far below it.
  EXPECT_GT(cut->response_time().max_ms(), 1000) << "agent-2 never waited for its database";
  for (int i : {1, 3}) {
    EXPECT_LT(AgentIn(*report, AgentName(i))->response_time().max_ms(), 1000) << AgentName(i);
  }
  std::cout << "[ cut agent-2 / database ] agent-2 executed " << cut->executed() << ", errors "
            << cut->errors() << " (connection " << by_class["connection"] << "), response max "
            << cut->response_time().max_ms() << " ms; agent-1 "
            << AgentIn(*report, AgentName(1))->executed() << ", agent-3 "
            << AgentIn(*report, AgentName(3))->executed() << ", no errors, response max "
            << AgentIn(*report, AgentName(1))->response_time().max_ms() << " / "
            << AgentIn(*report, AgentName(3))->response_time().max_ms()
            << " ms; PostgreSQL scans "
            << scans << " for " << report->executed() << " executed\n";
}

// A suite through the coordinator host: each of its runs (1 and 3 clients) goes to the agents on
// their hosts, and PostgreSQL counts exactly what the runs' reports say.
TEST_F(TopologyTest, ASuiteRunsThroughTheCoordinatorAcrossTheHosts) {
  constexpr int kQueries = 600;
  const std::string suite = WriteFile(
      "suite.yaml",
      absl::StrCat("name: topology\nsettings: {warmup_runs: 0, repetitions: 1, prepare: none, "
                   "cleanup: false}\ntargets:\n  - name: db\n    target: {driver: postgresql, "
                   "host: ", kDbAddress, ", port: 5432, user: bench, password_file: ",
                   db_->Get("PG_PASSWORD_FILE"),
                   ", database: bench}\ncases:\n  - name: select\n    plan: {workload: oltp, "
                   "scenario: point_select, workload_options: {table_size: ", kTableSize,
                   "}, load: {closed: {think_time: 1ms}}, warmup: 0s, stop: {queries: ",
                   kQueries, "}, explain: {enabled: false}}\n    points: [1, 3]\n"));
  const std::string out = Path("suite-out");
  const PgCounts before = PgBefore();
  const ProcessResult ran =
      Dbload({"suite", "run", suite, "--coordinator", "CONTROL", "--out", out});
  const PgCounts after = PgAfter();
  ASSERT_EQ(ran.exit_code, kExitOk) << ran.Describe();
  std::vector<v1::RunReport> reports;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "suite.json") continue;
    absl::StatusOr<v1::RunReport> report = LoadReport(entry.path().string());
    if (report.ok() && !report->run_id().empty()) reports.push_back(*std::move(report));
  }
  ASSERT_EQ(reports.size(), 2u) << ran.out;
  std::sort(reports.begin(), reports.end(), [](const v1::RunReport& a, const v1::RunReport& b) {
    return a.agents_size() < b.agents_size();
  });
  EXPECT_EQ(reports[0].agents_size(), 1);  // 1 client: one agent's share
  EXPECT_EQ(reports[1].agents_size(), kAgents);
  uint64_t executed = 0;
  for (const v1::RunReport& report : reports) {
    EXPECT_EQ(report.executed(), static_cast<uint64_t>(kQueries));
    EXPECT_EQ(AgentSum(report), report.executed());
    executed += report.executed();
  }
  ASSERT_NO_FATAL_FAILURE(ExpectAgentsOnTheirHosts(reports[1], kDbAddress + ":5432"));
  EXPECT_EQ(after.scans - before.scans, static_cast<int64_t>(executed));
  std::cout << "[ suite ] 2 runs through the coordinator host: executed " << executed
            << " = PostgreSQL scans " << after.scans - before.scans << "\n";
}

// MariaDB on the database host, across the same hosts: a closed loop of 3 clients split over
// the agents, counted exactly by the server's Com_select.
TEST_F(TopologyTest, MariaDbAcrossTheHostsCountsExactly) {
  constexpr int kQueries = 3000;
  const std::string target = absl::StrCat(
      "target:\n  driver: mysql\n  host: ", kDbAddress, "\n  port: 3306\n  user: bench\n"
      "  password_file: ", db_->Get("MARIADB_PASSWORD_FILE"),
      "\n  database: bench\n  connect_timeout: 5s\n");
  const std::string plan = WritePlan("mariadb.yaml", ClosedLoad(3),
                                     absl::StrCat("stop: {queries: ", kQueries, "}\n"), target);
  ASSERT_EQ(Dbload({"cleanup", plan, "--allow-target", kAllowed}).exit_code, kExitOk);
  const ProcessResult prepare = Dbload({"prepare", plan, "--allow-target", kAllowed});
  ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
  const auto com_select = [] {
    return ToInt(testing::Mariadb(*db_, "SELECT VARIABLE_VALUE FROM "
                                        "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "
                                        "'COM_SELECT'"));
  };
  const int64_t before = com_select();
  const std::string report_path = Path("mariadb.json");
  Submitted submitted = Submit(plan, report_path);
  const ProcessResult run = Finish(submitted);
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), static_cast<uint64_t>(kQueries));
  EXPECT_EQ(AgentSum(*report), report->executed());
  EXPECT_EQ(report->agents_size(), kAgents);
  ASSERT_NO_FATAL_FAILURE(ExpectAgentsOnTheirHosts(*report, kDbAddress + ":3306"));
  // The probe's own reads and our reading are selects too: what the run added, read after the
  // probe stopped, is the run's kQueries plus the probe's readings and our two.
  const int64_t selects = com_select() - before;
  EXPECT_GE(selects, kQueries);
  EXPECT_LE(selects, kQueries + 4 * (report->probe_samples_size() + 2) + 1);
  std::cout << "[ mariadb ] executed " << report->executed() << " over " << report->agents_size()
            << " agents; Com_select +" << selects << " (probe samples "
            << report->probe_samples_size() << ")\n";
  Dbload({"cleanup", plan, "--allow-target", kAllowed});
}

// A plan that names a host the agents do not allow (the HAProxy host): the run is refused before
// any load, and the refusal names each agent and the flag. The same plan from a load machine
// that allows it goes through HAProxy's host to the database.
TEST_F(TopologyTest, ATargetTheAgentsDoNotAllowIsRefusedUpFront) {
  const std::string plan = WritePlan("haproxy.yaml", ClosedLoad(3), "stop: {queries: 300}\n",
                                     PgTargetYaml(kHaproxyAddress));
  const PgCounts before = PgBefore();
  const ProcessResult refused = Dbload({"submit", plan, "--coordinator", "CONTROL", "--min-agents",
                                        std::to_string(kAgents), "--wait"});
  const PgCounts after = PgAfter();
  EXPECT_NE(refused.exit_code, kExitOk) << refused.Describe();
  const std::string said = refused.out + refused.err;
  for (int i = 1; i <= kAgents; ++i) EXPECT_THAT(said, HasSubstr(AgentName(i))) << said;
  EXPECT_THAT(said, HasSubstr(kHaproxyAddress));
  EXPECT_THAT(said, HasSubstr("--allow-target"));
  EXPECT_EQ(after, before) << "the refused run reached the database";
  std::cout << "[ refused ] " << absl::StripAsciiWhitespace(refused.err) << "\n";

  // Consent is the load machine's: `dbload run` on the coordinator host, allowed the HAProxy
  // host, sends the same plan through HAProxy to the database, which counts it.
  const std::string report_path = Path("haproxy.json");
  const PgCounts proxied_before = PgBefore();
  const ProcessResult proxied =
      Dbload({"run", plan, "--agents", "2", "--allow-target", kHaproxyAddress + "/32",
              "--report", report_path});
  const PgCounts proxied_after = PgAfter();
  ASSERT_EQ(proxied.exit_code, kExitOk) << proxied.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), 300u);
  EXPECT_EQ(proxied_after.scans - proxied_before.scans, 300);
  for (const auto& agent : report->manifest().agents()) {
    EXPECT_EQ(agent.target_address(), kHaproxyAddress + ":5432") << agent.name();
  }
}

// The harness's own promise: when the process that made a topology dies without tearing it down,
// the guard does (here the owner is a `sleep` killed on purpose): the namespaces, every process
// left on the hosts, the directory.
TEST(TopologyHarness, TheGuardTearsEverythingDownWhenTheOwnerDies) {
  if (skip_reason != nullptr) GTEST_SKIP() << "network namespaces unavailable: " << *skip_reason;
  char dir[] = "/tmp/dbload_topology_guard.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  Child owner({"/bin/sleep", "60"});
  const std::string prefix = absl::StrCat("dbl-", getpid(), "g");
  const ProcessResult up = RunProcess({"/bin/bash", Topology::ScriptPath(), "up", dir, prefix,
                                       "a=198.18.1.1/24", "b=198.18.1.2/24", "--owner-pid",
                                       std::to_string(owner.pid())});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_THAT(up.out, HasSubstr(absl::StrCat("NETNS_a=", prefix, "-a\n")));
  const auto exists = [](const std::string& path) { return access(path.c_str(), F_OK) == 0; };
  ASSERT_TRUE(exists("/run/netns/" + prefix + "-a"));
  ASSERT_TRUE(exists("/run/netns/" + prefix + "-bridge"));
  // Something left running on a host, as a crashed test would leave its servers.
  Child left({Topology::NetnsExecPath(), "/run/netns/" + prefix + "-b", "--", "/bin/sleep", "60"});
  std::this_thread::sleep_for(milliseconds(200));
  ASSERT_TRUE(left.running());

  const Clock::time_point killed_at = Clock::now();
  owner.Signal(SIGKILL);
  owner.Wait(seconds(5));
  const Clock::time_point give_up = killed_at + seconds(15);
  while (Clock::now() < give_up && (exists(dir) || exists("/run/netns/" + prefix + "-a"))) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  const double torn_down_s = Since(killed_at);
  EXPECT_FALSE(exists(dir)) << dir;
  for (const char* host : {"-a", "-b", "-bridge"}) {
    EXPECT_FALSE(exists("/run/netns/" + prefix + host)) << prefix << host;
  }
  const ProcessResult ended = left.Wait(seconds(5));
  EXPECT_EQ(ended.term_signal, SIGTERM) << "the process on host b was not stopped by the guard";
  std::cout << "[ guard ] torn down " << torn_down_s << " s after the owner died\n";
}
}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Before any thread: the namespace is the calling thread's, and threads inherit it.
  const absl::Status isolated = dbload::testing::IsolateThisProcessNetwork();
  if (!isolated.ok()) {
    dbload::skip_reason = new std::string(isolated.message());
    std::cout << "[ topology ] skipped: cannot isolate this process: " << isolated.message()
              << "\n";
  }
  return RUN_ALL_TESTS();
}
