#include "tests/harness/test_servers.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#ifndef DBLOAD_SOURCE_DIR
#error "DBLOAD_SOURCE_DIR must be defined (the repository root, where tests/harness/dbenv lives)"
#endif

namespace dbload::testing {

namespace {

constexpr int64_t kConnectTimeoutNs = 5'000'000'000;

// Single-quoted for /bin/sh.
std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

// Runs `command` through /bin/sh, collecting stdout (dbenv keeps messages on stderr, which the
// command line redirects as it likes).
absl::StatusOr<CommandResult> Run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return absl::InternalError("popen(" + command + "): " + std::strerror(errno));
  }
  CommandResult result;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.out.append(buffer, read);
  const int status = pclose(pipe);
  if (status == -1) return absl::InternalError("pclose: " + std::string(std::strerror(errno)));
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::map<std::string, std::string, std::less<>> ParseKeyValues(std::string_view text) {
  std::map<std::string, std::string, std::less<>> values;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    values[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return values;
}

std::string Tail(const std::string& text, size_t max) {
  return text.size() <= max ? text : "…" + text.substr(text.size() - max);
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

absl::StatusOr<std::string> PasswordOf(const dbload::v1::Target& target) {
  std::string password;
  if (!target.password_file().empty()) {
    absl::StatusOr<std::string> content = ReadFile(target.password_file());
    if (!content.ok()) return content.status();
    password = *std::move(content);
  } else if (!target.password_env().empty()) {
    const char* value = getenv(target.password_env().c_str());
    if (value == nullptr) {
      return absl::NotFoundError("environment variable " + target.password_env() + " is not set");
    }
    password = value;
  }
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  return password;
}

std::string TestServers::DbenvPath() {
  return std::string(DBLOAD_SOURCE_DIR) + "/tests/harness/dbenv";
}

TestServers::~TestServers() {
  absl::Status status = Stop();
  if (!status.ok()) std::cerr << "TestServers: " << status << "\n";
}

absl::Status TestServers::LoadEnvFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) return content.status();
  values_ = ParseKeyValues(*content);
  if (values_.empty()) return absl::FailedPreconditionError(path + " holds no KEY=VALUE line");
  return absl::OkStatus();
}

absl::Status TestServers::Start(const std::vector<std::string>& services, bool fast,
                                const std::vector<std::string>& scrape) {
  if (started()) return absl::FailedPreconditionError("TestServers already started in " + dir_);
  if (const char* existing = getenv("DBLOAD_DBENV_DIR"); existing != nullptr && *existing &&
                                                         scrape.empty() && launcher_.empty() &&
                                                         !native_histograms_) {
    dir_ = existing;
    owned_ = false;
    return LoadEnvFile(dir_ + "/env");
  }

  char parent[] = "/tmp/dbload-test.XXXXXX";
  if (mkdtemp(parent) == nullptr) {
    return absl::InternalError(std::string("mkdtemp: ") + std::strerror(errno));
  }
  parent_ = parent;
  // PostgreSQL runs as the postgres user, which must reach the sockets inside.
  if (chmod(parent_.c_str(), 0755) != 0) {
    return absl::InternalError("chmod " + parent_ + ": " + std::strerror(errno));
  }
  dir_ = parent_ + "/env";
  const std::string log = parent_ + "/dbenv.log";
  std::string command;
  for (const std::string& word : launcher_) command += ShellQuote(word) + " ";
  command += "bash " + ShellQuote(DbenvPath()) + " start " + ShellQuote(dir_);
  for (const std::string& service : services) command += " " + ShellQuote(service);
  command += " --owner-pid " + std::to_string(getpid());
  if (fast) command += " --fast";
  if (native_histograms_) command += " --native-histograms";
  for (const std::string& target : scrape) command += " --scrape " + ShellQuote(target);
  command += " 2>" + ShellQuote(log) + " </dev/null";

  absl::StatusOr<CommandResult> result = Run(command);
  owned_ = true;  // even a failed start may have left something to stop
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    absl::StatusOr<std::string> errors = ReadFile(log);
    return absl::UnavailableError("dbenv start failed (exit " + std::to_string(result->exit_code) +
                                  "): " + Tail(errors.ok() ? *errors : "", 4000));
  }
  values_ = ParseKeyValues(result->out);
  if (values_.empty()) return absl::InternalError("dbenv start printed no KEY=VALUE line");
  return absl::OkStatus();
}

absl::Status TestServers::Stop() {
  values_.clear();
  if (!owned_) return absl::OkStatus();
  owned_ = false;
  const std::string log = parent_ + "/dbenv.log";
  absl::StatusOr<CommandResult> result =
      Run("bash " + ShellQuote(DbenvPath()) + " stop " + ShellQuote(dir_) + " 2>>" +
          ShellQuote(log) + " </dev/null");
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    absl::StatusOr<std::string> errors = ReadFile(log);
    return absl::InternalError("dbenv stop " + dir_ +
                               " failed: " + Tail(errors.ok() ? *errors : "", 2000));
  }
  unlink(log.c_str());
  rmdir(parent_.c_str());
  return absl::OkStatus();
}

std::string TestServers::Get(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::string() : it->second;
}

int TestServers::GetInt(std::string_view key) const {
  const std::string value = Get(key);
  int number = 0;
  std::from_chars(value.data(), value.data() + value.size(), number);
  return number;
}

absl::StatusOr<std::string> TestServers::ReadPasswordFile(std::string_view key) const {
  const std::string path = Get(key);
  if (path.empty())
    return absl::NotFoundError(std::string(key) + " is not set (service not started?)");
  dbload::v1::Target target;
  target.set_password_file(path);
  return PasswordOf(target);
}

absl::StatusOr<std::vector<int>> TestServers::Pids(std::string_view service) const {
  absl::StatusOr<CommandResult> result =
      Run("bash " + ShellQuote(DbenvPath()) + " pids " + ShellQuote(dir_) + " " +
          ShellQuote(service) + " </dev/null");
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::NotFoundError("dbenv pids " + std::string(service) + " failed");
  }
  std::vector<int> pids;
  std::istringstream lines(result->out);
  for (int pid; lines >> pid;) pids.push_back(pid);
  return pids;
}

namespace {

dbload::v1::Target MakeTarget(const std::string& driver, const std::string& host, int port,
                              const std::string& user, const std::string& database,
                              const std::string& password_file) {
  dbload::v1::Target target;
  target.set_driver(driver);
  target.set_host(host);
  target.set_port(static_cast<uint32_t>(port));
  target.set_user(user);
  target.set_database(database);
  target.set_password_file(password_file);
  target.set_connect_timeout_ns(kConnectTimeoutNs);
  return target;
}

}  // namespace

dbload::v1::Target TestServers::PostgresTarget() const {
  return MakeTarget("postgresql", Get("PG_HOST"), GetInt("PG_PORT"), Get("PG_USER"),
                    Get("PG_DATABASE"), Get("PG_PASSWORD_FILE"));
}

dbload::v1::Target TestServers::PostgresSocketTarget() const {
  dbload::v1::Target target = PostgresTarget();
  target.clear_host();
  target.set_socket(Get("PG_SOCKET_DIR"));
  return target;
}

dbload::v1::Target TestServers::MariaDbTarget() const {
  return MakeTarget("mysql", Get("MARIADB_HOST"), GetInt("MARIADB_PORT"), Get("MARIADB_USER"),
                    Get("MARIADB_DATABASE"), Get("MARIADB_PASSWORD_FILE"));
}

dbload::v1::Target TestServers::MariaDbSocketTarget() const {
  dbload::v1::Target target = MariaDbTarget();
  target.clear_host();
  target.clear_port();
  target.set_socket(Get("MARIADB_SOCKET"));
  return target;
}

dbload::v1::Target TestServers::HaproxyPostgresTarget() const {
  dbload::v1::Target target = PostgresTarget();
  const std::string host = Get("HAPROXY_HOST");
  target.set_host(host.empty() ? "127.0.0.1" : host);
  target.set_port(static_cast<uint32_t>(GetInt("HAPROXY_PG_PORT")));
  return target;
}

dbload::v1::Target TestServers::HaproxyMariaDbTarget() const {
  dbload::v1::Target target = MariaDbTarget();
  const std::string host = Get("HAPROXY_HOST");
  target.set_host(host.empty() ? "127.0.0.1" : host);
  target.set_port(static_cast<uint32_t>(GetInt("HAPROXY_MARIADB_PORT")));
  return target;
}

namespace {
TestServersEnvironment* registered_environment = nullptr;
}  // namespace

TestServersEnvironment::TestServersEnvironment(std::vector<std::string> services)
    : services_(std::move(services)) {
  registered_environment = this;
}

void TestServersEnvironment::SetUp() {
  const absl::Status status = servers_.Start(services_);
  ASSERT_TRUE(status.ok()) << "cannot start test servers: " << status;
}

void TestServersEnvironment::TearDown() {
  const absl::Status status = servers_.Stop();
  EXPECT_TRUE(status.ok()) << status;
}

TestServersEnvironment* TestServersEnvironment::Register(std::vector<std::string> services) {
  auto* environment = new TestServersEnvironment(std::move(services));
  ::testing::AddGlobalTestEnvironment(environment);
  return environment;
}

int RunTestsWithServers(int argc, char** argv, std::vector<std::string> services) {
  ::testing::InitGoogleTest(&argc, argv);
  TestServersEnvironment::Register(std::move(services));
  return RUN_ALL_TESTS();
}

TestServers& TestServersEnvironment::Servers() {
  if (registered_environment == nullptr) {
    std::cerr << "TestServersEnvironment::Servers() called before Register()\n";
    abort();
  }
  return registered_environment->servers_;
}

}  // namespace dbload::testing
