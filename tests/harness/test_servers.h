#ifndef DBLOAD_TESTS_HARNESS_TEST_SERVERS_H_
#define DBLOAD_TESTS_HARNESS_TEST_SERVERS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"
#include "gtest/gtest.h"

namespace dbload::testing {

// Real, throwaway PostgreSQL / MariaDB / HAProxy / Prometheus servers for tests, started by the
// bash harness tests/harness/dbenv in a fresh temporary directory and stopped again (by the PIDs
// dbenv recorded) in Stop() or the destructor. dbenv's guard also stops them if this process
// dies without stopping them.
//
// Setting DBLOAD_DBENV_DIR to the DIR of an environment that is already running (from
// `dbenv start DIR …`) makes Start() use it as is and Stop() leave it running: quick iterations
// on one set of servers, or one set shared by many test processes.
class TestServers {
 public:
  TestServers() = default;
  ~TestServers();
  TestServers(const TestServers&) = delete;
  TestServers& operator=(const TestServers&) = delete;

  // `services`: any of "postgres", "mariadb", "haproxy", "prometheus" (haproxy fronts the
  // databases started with it). `fast` turns off fsync and friends (throwaway data).
  // `scrape`: HOST:PORT targets Prometheus scrapes besides itself (dbenv's --scrape, job
  // dbload); with targets, Start() always starts its own servers, even under DBLOAD_DBENV_DIR,
  // because an existing environment's Prometheus would not scrape them.
  absl::Status Start(const std::vector<std::string>& services, bool fast = true,
                     const std::vector<std::string>& scrape = {});
  // Idempotent; also called by the destructor.
  absl::Status Stop();
  // Runs `dbenv start` through `launcher`, e.g. Topology::On("db", {}) (tests/harness/
  // topology.h): the servers then run on that host, on its loopback, and Start() always starts
  // servers of its own (DBLOAD_DBENV_DIR is not used). Set before Start().
  void set_launcher(std::vector<std::string> launcher) { launcher_ = std::move(launcher); }
  // Prometheus with native histograms enabled (dbenv's --native-histograms). Set before Start().
  void set_native_histograms(bool on) { native_histograms_ = on; }
  bool started() const { return !values_.empty(); }

  // A KEY=VALUE of dbenv's env (PG_PORT, MARIADB_SOCKET, HAPROXY_PG_PORT …); "" when absent.
  std::string Get(std::string_view key) const;
  // Get() as a number; 0 when absent or not a number.
  int GetInt(std::string_view key) const;
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }
  // The environment's directory (dbenv's DIR).
  const std::string& dir() const { return dir_; }

  // The content of the file a *_PASSWORD_FILE key names, without the trailing newline.
  absl::StatusOr<std::string> ReadPasswordFile(std::string_view key) const;
  absl::StatusOr<std::string> PostgresPassword() const {
    return ReadPasswordFile("PG_PASSWORD_FILE");
  }
  absl::StatusOr<std::string> MariaDbPassword() const {
    return ReadPasswordFile("MARIADB_PASSWORD_FILE");
  }

  // `dbenv pids DIR SERVICE`: the server's PIDs (postgres: the postmaster first).
  absl::StatusOr<std::vector<int>> Pids(std::string_view service) const;

  // Plan targets with password_file set (user bench, database bench, 5 s connect timeout).
  dbload::v1::Target PostgresTarget() const;        // TCP
  dbload::v1::Target PostgresSocketTarget() const;  // unix socket directory
  dbload::v1::Target MariaDbTarget() const;         // TCP
  dbload::v1::Target MariaDbSocketTarget() const;   // unix socket file
  dbload::v1::Target HaproxyPostgresTarget() const;
  dbload::v1::Target HaproxyMariaDbTarget() const;

  // The path of the dbenv script this binary was built against.
  static std::string DbenvPath();

 private:
  absl::Status LoadEnvFile(const std::string& path);

  std::string parent_;  // our mkdtemp directory holding dir_ and dbenv's stderr log
  std::string dir_;
  bool owned_ = false;  // we started it, so we stop it
  std::vector<std::string> launcher_;
  bool native_histograms_ = false;
  std::map<std::string, std::string, std::less<>> values_;
};

// Reads a whole file; the error names the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// The password a target names through password_file (trailing newline removed) or password_env.
absl::StatusOr<std::string> PasswordOf(const dbload::v1::Target& target);

// Starts the servers once per test binary:
//   ::testing::AddGlobalTestEnvironment(new TestServersEnvironment({"postgres", "mariadb"}));
// (or call TestServersEnvironment::Register from main / a static initializer) and reach them in
// tests through TestServersEnvironment::Servers(). A failed start fails the run and no test
// runs.
class TestServersEnvironment : public ::testing::Environment {
 public:
  // The newest environment constructed is the one Servers() returns.
  explicit TestServersEnvironment(std::vector<std::string> services);
  void SetUp() override;
  void TearDown() override;

  // Registers a new environment with gtest (which owns it) and returns it.
  static TestServersEnvironment* Register(std::vector<std::string> services);
  // The servers of the registered environment; the process aborts if none was registered.
  static TestServers& Servers();

 private:
  std::vector<std::string> services_;
  TestServers servers_;
};

// The main() of an integration test binary whose cases share one set of servers:
//   int main(int argc, char** argv) { return RunTestsWithServers(argc, argv, {"postgres"}); }
// initialises GoogleTest, registers a TestServersEnvironment of `services` and runs every test.
int RunTestsWithServers(int argc, char** argv, std::vector<std::string> services);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_TEST_SERVERS_H_
