// Who may talk to whom, with the real programs: dbload-coordinator, dbload-agent and the dbload
// CLI over TLS (certificates made here with openssl: a CA, the coordinator's and a client's
// certificate, and an impostor signed by another CA) and the shared token; plain text refused
// off this machine; and the database password absent from everything a run shows (outputs,
// reports, the state dir, metrics, the process list), against a real PostgreSQL from
// tests/harness/dbenv.
//
// Every process started here is stopped by its PID (the Child destructor), also when a case
// fails.

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/exit_codes.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/http_get.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || !defined(DBLOAD_AGENT_BINARY)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::dbload::testing::Child;
using ::dbload::testing::HttpGet;
using ::dbload::testing::ListeningAddress;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunDbload;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kChildTimeout{30};
constexpr int kTableSize = 1000;

TestServers& servers() { return TestServersEnvironment::Servers(); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
}

std::string RandomHex(size_t length) {
  std::random_device entropy;
  std::string text;
  while (text.size() < length) absl::StrAppend(&text, absl::Hex(entropy(), absl::kZeroPad8));
  return text.substr(0, length);
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A coordinator with `flags`, and the address it reports on stdout ("listening on ...").
struct Coordinator {
  std::unique_ptr<Child> process;
  std::string address;
};

Coordinator StartCoordinator(const std::vector<std::string>& flags) {
  Coordinator coordinator;
  coordinator.process = std::make_unique<Child>(
      Concat({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0"}, flags));
  coordinator.address = ListeningAddress(*coordinator.process);
  EXPECT_FALSE(coordinator.address.empty())
      << "the coordinator did not say where it listens\n"
      << coordinator.process->out() << coordinator.process->err();
  return coordinator;
}

// The agent names `dbload agents` lists (header and notes left out); empty when the call fails.
std::vector<std::string> AgentNames(const std::string& address,
                                    const std::vector<std::string>& credentials) {
  const ProcessResult listed = RunDbload(Concat({"agents", "--coordinator", address}, credentials));
  std::vector<std::string> names;
  if (listed.exit_code != kExitOk) return names;
  for (absl::string_view line : absl::StrSplit(listed.out, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "NAME") || absl::StartsWith(line, "(")) continue;
    names.emplace_back(line.substr(0, line.find(' ')));
  }
  return names;
}

// Whether `name` is listed within `timeout` (polled).
bool AgentListed(const std::string& address, const std::vector<std::string>& credentials,
                 const std::string& name, std::chrono::milliseconds timeout) {
  const Clock::time_point give_up = Clock::now() + timeout;
  do {
    for (const std::string& listed : AgentNames(address, credentials)) {
      if (listed == name) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (Clock::now() < give_up);
  return false;
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_security_test");
    // CA "ca" signs the coordinator's certificate (for 127.0.0.1 and localhost) and a client's;
    // CA "other-ca" signs an impostor's certificate for the same addresses.
    MakeCa("ca");
    MakeCa("other-ca");
    MakeCertificate("ca", "coordinator", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    MakeCertificate("ca", "client", "extendedKeyUsage=clientAuth");
    MakeCertificate("other-ca", "impostor", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    WriteAll(Path("token"), RandomHex(40) + "\n");
    WriteAll(Path("wrong-token"), RandomHex(40) + "\n");

    const std::string plan = WritePlan("prepare.yaml", servers().Get("PG_PASSWORD_FILE"));
    ASSERT_EQ(RunDbload({"cleanup", plan}).exit_code, kExitOk);
    const ProcessResult prepare = RunDbload({"prepare", plan});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
  }

  static void TearDownTestSuite() {
    RunDbload({"cleanup", Path("prepare.yaml")});
    delete dir_;
    dir_ = nullptr;
  }

  static std::string Path(const std::string& name) { return dir_->path() + "/" + name; }

  static void Openssl(const std::vector<std::string>& args) {
    const ProcessResult made = RunProcess(Concat({"/usr/bin/openssl"}, args), kChildTimeout);  // scripts/setup installs it
    ASSERT_EQ(made.exit_code, 0) << made.Describe();
  }
  static void MakeCa(const std::string& name) {
    Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", "/CN=dbload test " + name, "-keyout",
             Path(name + ".key"), "-out", Path(name + ".pem")});
  }
  static void MakeCertificate(const std::string& ca, const std::string& name,
                              const std::string& extension) {
    Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", "/CN=" + name, "-keyout", Path(name + ".key"), "-out",
             Path(name + ".csr")});
    WriteAll(Path(name + ".ext"), extension + "\n");
    Openssl({"x509", "-req", "-in", Path(name + ".csr"), "-CA", Path(ca + ".pem"), "-CAkey",
             Path(ca + ".key"), "-CAcreateserial", "-days", "2", "-extfile", Path(name + ".ext"),
             "-out", Path(name + ".pem")});
    ASSERT_EQ(chmod(Path(name + ".key").c_str(), 0600), 0);
  }

  // A point-select plan against the suite's PostgreSQL with the given password file.
  static std::string WritePlan(const std::string& name, const std::string& password_file,
                               int queries = 1) {
    return dir_->Write(
        name,
        absl::StrCat("name: security\ntarget:\n  driver: postgresql\n  host: 127.0.0.1\n",
                     "  port: ", servers().Get("PG_PORT"), "\n  user: bench\n  password_file: ",
                     password_file, "\n  database: bench\n  connect_timeout: 5s\n  pool: 2\n",
                     "workload: oltp\nscenario: point_select\nworkload_options:\n",
                     "  table_size: ", kTableSize, "\n",
                     "load:\n  closed:\n    clients: 2\nwarmup: 0s\nstop:\n  queries: ", queries,
                     "\n"));
  }

  // What a client of the TLS coordinator passes: its CA and the token.
  static std::vector<std::string> Trusted() {
    return {"--tls-ca", Path("ca.pem"), "--token-file", Path("token")};
  }
  static std::vector<std::string> TlsCoordinatorFlags() {
    return {"--tls-cert", Path("coordinator.pem"), "--tls-key", Path("coordinator.key"),
            "--token-file", Path("token")};
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* SecurityTest::dir_ = nullptr;

// The whole path over TLS with the token: an agent joins, `dbload submit --wait` runs a plan on
// it, and the report counts every query.
TEST_F(SecurityTest, TlsAndTheTokenCarryARunEndToEnd) {
  Coordinator coordinator = StartCoordinator(TlsCoordinatorFlags());
  ASSERT_FALSE(coordinator.address.empty());
  Child agent(Concat({DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name",
                      "tls-agent"},
                     Trusted()));
  ASSERT_TRUE(AgentListed(coordinator.address, Trusted(), "tls-agent", std::chrono::seconds(10)))
      << agent.err();

  const std::string plan = WritePlan("tls.yaml", servers().Get("PG_PASSWORD_FILE"), 300);
  const std::string report = Path("tls-report.json");
  const ProcessResult run = RunDbload(
      Concat({"submit", plan, "--coordinator", coordinator.address, "--wait", "--report", report},
             Trusted()));
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(ReadAll(report));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->executed(), 300u);
  coordinator.process->Pump(std::chrono::milliseconds(50));
  EXPECT_THAT(coordinator.process->err(), HasSubstr(", TLS, token required"));
}

// Without the token, with another token, or without TLS, nothing gets in: the CLI says why, an
// agent with the wrong token is never listed, and the coordinator logs each refusal.
TEST_F(SecurityTest, CallsWithoutTheRightTokenOrTlsAreRefused) {
  Coordinator coordinator = StartCoordinator(TlsCoordinatorFlags());
  ASSERT_FALSE(coordinator.address.empty());

  const ProcessResult no_token =
      RunDbload({"agents", "--coordinator", coordinator.address, "--tls-ca", Path("ca.pem")});
  EXPECT_EQ(no_token.exit_code, kExitUsage) << no_token.Describe();
  EXPECT_THAT(no_token.err, HasSubstr("this coordinator requires its token"));

  const ProcessResult wrong_token =
      RunDbload({"agents", "--coordinator", coordinator.address, "--tls-ca", Path("ca.pem"),
                 "--token-file", Path("wrong-token")});
  EXPECT_EQ(wrong_token.exit_code, kExitUsage) << wrong_token.Describe();
  EXPECT_THAT(wrong_token.err, HasSubstr("the token sent is not this coordinator's"));

  const ProcessResult plain_text =
      RunDbload({"agents", "--coordinator", coordinator.address, "--token-file", Path("token")});
  EXPECT_EQ(plain_text.exit_code, kExitUsage) << plain_text.Describe();
  EXPECT_THAT(plain_text.err, HasSubstr("cannot reach the coordinator"));

  const ProcessResult stop = RunDbload({"stop", "--coordinator", coordinator.address, "--tls-ca",
                                        Path("ca.pem"), "--token-file", Path("wrong-token")});
  EXPECT_EQ(stop.exit_code, kExitUsage) << stop.Describe();
  EXPECT_THAT(stop.err, HasSubstr("the token sent is not this coordinator's"));

  Child intruder({DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name", "intruder",
                  "--tls-ca", Path("ca.pem"), "--token-file", Path("wrong-token")});
  Child honest(Concat(
      {DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name", "honest"},
      Trusted()));
  ASSERT_TRUE(AgentListed(coordinator.address, Trusted(), "honest", std::chrono::seconds(10)));
  // The intruder has had as long as the honest agent and more.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_THAT(AgentNames(coordinator.address, Trusted()),
              ::testing::ElementsAre("honest"));
  intruder.Pump(std::chrono::milliseconds(100));
  EXPECT_THAT(intruder.err(), HasSubstr("the token sent is not this coordinator's"));
  coordinator.process->Pump(std::chrono::milliseconds(100));
  EXPECT_THAT(coordinator.process->err(), HasSubstr("refused a call from"));
}

// Occurrences of `needle` in `text`.
int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// An agent whose token the coordinator refuses (a wrong one, or none) would be refused on every
// try: it exits with status 2 and the reason, said once, instead of retrying forever.
TEST_F(SecurityTest, AnAgentWithAWrongOrMissingTokenExitsWithTheReason) {
  Coordinator coordinator = StartCoordinator(TlsCoordinatorFlags());
  ASSERT_FALSE(coordinator.address.empty());
  struct Case {
    const char* name;
    std::vector<std::string> credentials;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"wrong-token",
       {"--tls-ca", Path("ca.pem"), "--token-file", Path("wrong-token")},
       "the token sent is not this coordinator's"},
      {"no-token", {"--tls-ca", Path("ca.pem")}, "this coordinator requires its token"},
  };
  for (const Case& c : cases) {
    Child agent(
        Concat({DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name", c.name},
               c.credentials));
    // One try and a TLS handshake: well under a second on a quiet machine.
    const ProcessResult ended = agent.Wait(std::chrono::seconds(20));
    EXPECT_FALSE(ended.timed_out) << c.name << ": still retrying\n" << ended.Describe();
    EXPECT_EQ(ended.exit_code, kExitUsage) << c.name << ": " << ended.Describe();
    EXPECT_THAT(ended.err,
                HasSubstr(absl::StrCat("coordinator ", coordinator.address,
                                       " refused this agent (UNAUTHENTICATED): ", c.reason)))
        << c.name;
    EXPECT_EQ(Count(ended.err, c.reason), 1) << c.name << ": said once\n" << ended.err;
    EXPECT_THAT(ended.err, Not(HasSubstr("reconnecting"))) << c.name;
  }
  // The coordinator refused each once.
  coordinator.process->Pump(std::chrono::milliseconds(100));
  EXPECT_EQ(Count(coordinator.process->err(), "refused a call from"), 2)
      << coordinator.process->err();
}

// An agent trusts one CA: a coordinator whose certificate another CA signed never gets it as an
// agent, so it cannot hand it a run. The same agent trusting that other CA does join (so the
// refusal is the certificate's, not the set-up's).
TEST_F(SecurityTest, AnAgentTakesNoRunFromACoordinatorItCannotAuthenticate) {
  Coordinator impostor = StartCoordinator(
      {"--tls-cert", Path("impostor.pem"), "--tls-key", Path("impostor.key")});
  ASSERT_FALSE(impostor.address.empty());
  const std::vector<std::string> impostor_client = {"--tls-ca", Path("other-ca.pem")};

  Child careful({DBLOAD_AGENT_BINARY, "--coordinator", impostor.address, "--name", "careful",
                 "--tls-ca", Path("ca.pem"), "--token-file", Path("token")});
  EXPECT_FALSE(AgentListed(impostor.address, impostor_client, "careful", std::chrono::seconds(3)));
  const ProcessResult submitted = RunDbload(
      Concat({"submit", WritePlan("impostor.yaml", servers().Get("PG_PASSWORD_FILE"), 100),
              "--coordinator", impostor.address, "--wait-for-agents", "1s"},
             impostor_client));
  EXPECT_EQ(submitted.exit_code, kExitUsage) << submitted.Describe();
  careful.Pump(std::chrono::milliseconds(100));
  EXPECT_THAT(careful.err(), HasSubstr("reconnecting to"));
  EXPECT_THAT(careful.err(), Not(HasSubstr("run ")));

  Child trusting({DBLOAD_AGENT_BINARY, "--coordinator", impostor.address, "--name", "trusting",
                  "--tls-ca", Path("other-ca.pem")});
  EXPECT_TRUE(AgentListed(impostor.address, impostor_client, "trusting", std::chrono::seconds(10)))
      << trusting.err();
}

// Mutual TLS: with --tls-ca on the coordinator, an agent without a client certificate signed by
// that CA is not let in; one with it is.
TEST_F(SecurityTest, MutualTlsLetsInOnlyAgentsWithACertificate) {
  Coordinator coordinator =
      StartCoordinator({"--tls-cert", Path("coordinator.pem"), "--tls-key",
                        Path("coordinator.key"), "--tls-ca", Path("ca.pem")});
  ASSERT_FALSE(coordinator.address.empty());
  const std::vector<std::string> with_certificate = {"--tls-ca", Path("ca.pem"), "--tls-cert",
                                                     Path("client.pem"), "--tls-key",
                                                     Path("client.key")};
  Child anonymous({DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name",
                   "anonymous", "--tls-ca", Path("ca.pem")});
  Child known(Concat(
      {DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name", "known"},
      with_certificate));
  ASSERT_TRUE(AgentListed(coordinator.address, with_certificate, "known", std::chrono::seconds(10)))
      << known.err();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_THAT(AgentNames(coordinator.address, with_certificate), ::testing::ElementsAre("known"));
  const ProcessResult without =
      RunDbload({"agents", "--coordinator", coordinator.address, "--tls-ca", Path("ca.pem")});
  EXPECT_EQ(without.exit_code, kExitUsage) << without.Describe();
  coordinator.process->Pump(std::chrono::milliseconds(50));
  EXPECT_THAT(coordinator.process->err(), HasSubstr(", mutual TLS"));
}

// Refused before anything is sent or bound: plain text off this machine, and bad TLS or token
// files, each naming the flag and the file.
TEST_F(SecurityTest, BadSecuritySettingsAreRefusedBeforeAnyConnection) {
  const ProcessResult listen_any =
      RunProcess({DBLOAD_COORDINATOR_BINARY, "--listen", "0.0.0.0:0"}, kChildTimeout);
  EXPECT_EQ(listen_any.exit_code, kExitUsage) << listen_any.Describe();
  EXPECT_THAT(listen_any.err, HasSubstr("--listen '0.0.0.0:0': not on this machine, and the link "
                                        "would be plain text"));
  // The metrics page has no TLS or token: off loopback only when asked for.
  const ProcessResult metrics_any = RunProcess(
      {DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--metrics", "0.0.0.0:0"},
      kChildTimeout);
  EXPECT_EQ(metrics_any.exit_code, kExitUsage) << metrics_any.Describe();
  EXPECT_THAT(metrics_any.err, HasSubstr("--metrics '0.0.0.0:0': not a loopback address"));
  EXPECT_THAT(metrics_any.err, HasSubstr("--allow-insecure-remote"));
  {
    Child allowed({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--metrics",
                   "0.0.0.0:0", "--allow-insecure-remote"});
    ASSERT_TRUE(allowed.PumpUntil(
        [](const std::string& out) { return absl::StrContains(out, "/metrics\n"); },
        std::chrono::seconds(10)))
        << allowed.out() << allowed.err();
    const size_t at = allowed.out().find("metrics on http://0.0.0.0:");
    ASSERT_NE(at, std::string::npos) << allowed.out();
    int port = 0;
    const std::string rest = allowed.out().substr(at + std::strlen("metrics on http://0.0.0.0:"));
    ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, rest.find('/')), &port)) << allowed.out();
    std::string error;
    const std::optional<std::string> page = HttpGet(port, "/metrics", error);
    ASSERT_TRUE(page.has_value()) << error;
    EXPECT_THAT(*page, HasSubstr("dbload_agents_connected"));
  }
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never dialled, the address alone is refused.
  const ProcessResult agent_remote =
      RunProcess({DBLOAD_AGENT_BINARY, "--coordinator", "192.0.2.1:7000"}, kChildTimeout);
  EXPECT_EQ(agent_remote.exit_code, kExitUsage) << agent_remote.Describe();
  EXPECT_THAT(agent_remote.err, HasSubstr("would be plain text"));
  const ProcessResult cli_remote = RunDbload({"agents", "--coordinator", "192.0.2.1:7000"});
  EXPECT_EQ(cli_remote.exit_code, kExitUsage) << cli_remote.Describe();
  EXPECT_THAT(cli_remote.err, HasSubstr("would be plain text"));

  WriteAll(Path("open-token"), RandomHex(40), 0644);
  const ProcessResult open_token = RunProcess(
      {DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--token-file", Path("open-token")},
      kChildTimeout);
  EXPECT_EQ(open_token.exit_code, kExitUsage) << open_token.Describe();
  EXPECT_THAT(open_token.err,
              HasSubstr(absl::StrCat("--token-file ", Path("open-token"),
                                     ": other users may read or change it (mode 644)")));
  WriteAll(Path("short-token"), "abc\n");
  const ProcessResult short_token = RunProcess(
      {DBLOAD_AGENT_BINARY, "--coordinator", "127.0.0.1:1", "--token-file", Path("short-token")},
      kChildTimeout);
  EXPECT_EQ(short_token.exit_code, kExitUsage) << short_token.Describe();
  EXPECT_THAT(short_token.err, HasSubstr("the token must be one line of 16 to 4096 characters"));

  const ProcessResult no_key = RunProcess(
      {DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--tls-cert", Path("coordinator.pem")},
      kChildTimeout);
  EXPECT_EQ(no_key.exit_code, kExitUsage) << no_key.Describe();
  EXPECT_THAT(no_key.err, HasSubstr("--tls-cert needs --tls-key"));
  const ProcessResult not_pem =
      RunDbload({"agents", "--coordinator", "127.0.0.1:1", "--tls-ca", Path("token")});
  EXPECT_EQ(not_pem.exit_code, kExitUsage) << not_pem.Describe();
  EXPECT_THAT(not_pem.err, HasSubstr(absl::StrCat("--tls-ca ", Path("token"),
                                                  ": not a PEM file")));
  const ProcessResult missing =
      RunDbload({"agents", "--coordinator", "127.0.0.1:1", "--token-file", Path("no-such-file")});
  EXPECT_EQ(missing.exit_code, kExitUsage) << missing.Describe();
  EXPECT_THAT(missing.err, HasSubstr("--token-file " + Path("no-such-file") + ": cannot be read"));
}

// The database password never shows: a distributed run (coordinator with metrics and a state
// dir, two agents, the CLI) and a run refused for a wrong password; then every output, report,
// saved state, the metrics page and the processes' command lines and environments are searched
// for both passwords.
TEST_F(SecurityTest, ThePasswordAppearsInNoOutputReportMetricOrProcessList) {
  absl::StatusOr<std::string> password = servers().PostgresPassword();
  ASSERT_TRUE(password.ok()) << password.status();
  ASSERT_GE(password->size(), 8u);
  const std::string wrong_password = "wrong-" + RandomHex(20);
  WriteAll(Path("wrong-password"), wrong_password + "\n");

  Coordinator coordinator = StartCoordinator(
      {"--metrics", "127.0.0.1:0", "--state-dir", Path("state"), "--token-file", Path("token")});
  ASSERT_FALSE(coordinator.address.empty());
  const std::vector<std::string> token = {"--token-file", Path("token")};
  std::vector<std::unique_ptr<Child>> agents;
  for (const char* name : {"agent-a", "agent-b"}) {
    agents.push_back(std::make_unique<Child>(
        Concat({DBLOAD_AGENT_BINARY, "--coordinator", coordinator.address, "--name", name},
               token)));
  }
  ASSERT_TRUE(AgentListed(coordinator.address, token, "agent-b", std::chrono::seconds(10)));
  ASSERT_TRUE(AgentListed(coordinator.address, token, "agent-a", std::chrono::seconds(10)));

  std::string seen;  // everything a user or another user of the machine could read
  const std::string report = Path("report.json");
  const ProcessResult good = RunDbload(Concat(
      {"submit", WritePlan("good.yaml", servers().Get("PG_PASSWORD_FILE"), 2000), "--coordinator",
       coordinator.address, "--min-agents", "2", "--wait", "--report", report},
      token));
  EXPECT_EQ(good.exit_code, kExitOk) << good.Describe();
  const ProcessResult refused =
      RunDbload(Concat({"submit", WritePlan("wrong.yaml", Path("wrong-password"), 100),
                        "--coordinator", coordinator.address, "--min-agents", "2", "--wait"},
                       token));
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Describe();
  EXPECT_THAT(refused.err, HasSubstr("password authentication failed"));
  const ProcessResult printed = RunDbload(
      Concat({"report", "--coordinator", coordinator.address, "--format", "json"}, token));
  const ProcessResult local = RunDbload({"run", Path("good.yaml"), "--agents", "2"});
  EXPECT_EQ(local.exit_code, kExitOk) << local.Describe();
  for (const ProcessResult* result : {&good, &refused, &printed, &local}) {
    absl::StrAppend(&seen, result->out, result->err);
  }
  absl::StrAppend(&seen, ReadAll(report));

  // Metrics, and what the process list shows of the daemons while they run.
  ASSERT_TRUE(coordinator.process->PumpUntil(
      [](const std::string& out) { return absl::StrContains(out, "/metrics\n"); },
      std::chrono::seconds(5)));
  const std::string& coordinator_out = coordinator.process->out();
  const size_t at = coordinator_out.find("metrics on http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << coordinator_out;
  int metrics_port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      coordinator_out.substr(at + std::strlen("metrics on http://127.0.0.1:"),
                             coordinator_out.find('/', at + 20) -
                                 (at + std::strlen("metrics on http://127.0.0.1:"))),
      &metrics_port));
  std::string error;
  const std::optional<std::string> metrics = HttpGet(metrics_port, "/metrics", error);
  ASSERT_TRUE(metrics.has_value()) << error;
  EXPECT_THAT(*metrics, HasSubstr("dbload_queries_total"));
  absl::StrAppend(&seen, *metrics);
  std::vector<Child*> daemons = {coordinator.process.get()};
  for (auto& agent : agents) daemons.push_back(agent.get());
  for (Child* daemon : daemons) {
    for (const char* file : {"cmdline", "environ"}) {
      absl::StrAppend(&seen, ReadAll(absl::StrCat("/proc/", daemon->pid(), "/", file)));
    }
  }
  // Their logs, whole (they exit on SIGTERM), and the coordinator's saved reports.
  for (auto& agent : agents) {
    agent->Signal(SIGTERM);
    const ProcessResult ended = agent->Wait(std::chrono::seconds(10));
    absl::StrAppend(&seen, ended.out, ended.err);
  }
  coordinator.process->Signal(SIGTERM);
  const ProcessResult ended = coordinator.process->Wait(std::chrono::seconds(10));
  absl::StrAppend(&seen, ended.out, ended.err);
  int saved = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(Path("state"))) {
    if (!entry.is_regular_file()) continue;
    absl::StrAppend(&seen, ReadAll(entry.path()));
    ++saved;
  }
  EXPECT_GE(saved, 2);

  // The search can find things: what was searched holds the runs and the refusal.
  EXPECT_THAT(seen, HasSubstr("point_select"));
  EXPECT_THAT(seen, HasSubstr("password authentication failed"));
  EXPECT_THAT(seen, HasSubstr("agent-b"));
  EXPECT_THAT(seen, Not(HasSubstr(*password)));
  EXPECT_THAT(seen, Not(HasSubstr(wrong_password)));
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres"});
}
