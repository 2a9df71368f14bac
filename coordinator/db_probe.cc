#include "coordinator/db_probe.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/background_thread.h"
#include "base/thread_name.h"
#include "db/probe_sql.h"

namespace dbload {
namespace {

constexpr char kPostgresSource[] = "postgresql";
constexpr char kMySqlSource[] = "mysql";

// Rows of "name=value" into a map.
absl::StatusOr<std::map<std::string, std::string>> SplitRows(const std::vector<std::string>& rows,
                                                            absl::string_view what) {
  std::map<std::string, std::string> out;
  for (const std::string& row : rows) {
    const size_t eq = row.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InternalError(absl::StrCat(what, ": malformed row \"", row, "\""));
    }
    out[row.substr(0, eq)] = row.substr(eq + 1);
  }
  return out;
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The command name of a process (/proc/PID/comm), empty when there is none.
std::string CommandOf(const std::string& proc_root, int pid) {
  absl::StatusOr<std::string> comm = ReadSmallFile(absl::StrCat(proc_root, "/", pid, "/comm"));
  return comm.ok() ? std::string(absl::StripTrailingAsciiWhitespace(*comm)) : std::string();
}

}  // namespace

// ----- parsers -----

absl::Status ParseNameValueRows(const std::vector<std::string>& rows, const std::string& source,
                                std::vector<ProbeValue>& out) {
  std::vector<ProbeValue> parsed;
  for (const std::string& row : rows) {
    const size_t eq = row.find('=');
    double value = 0;
    if (eq == std::string::npos || eq == 0 ||
        !absl::SimpleAtod(absl::string_view(row).substr(eq + 1), &value)) {
      return absl::InternalError(
          absl::StrCat(source, " probe: expected name=number, got \"", row, "\""));
    }
    std::string name = source == kMySqlSource ? db::CanonicalMySqlStatusName(row.substr(0, eq))
                                              : row.substr(0, eq);
    const bool gauge = db::IsStatusGauge(
        source == kMySqlSource ? db::Dialect::kMySql : db::Dialect::kPostgreSql, name);
    parsed.push_back({.source = source, .name = std::move(name), .value = value, .gauge = gauge});
  }
  out.insert(out.end(), parsed.begin(), parsed.end());
  return absl::OkStatus();
}

absl::Status ParseHaproxyStat(const std::string& csv, std::vector<ProbeValue>& out) {
  std::vector<absl::string_view> lines = absl::StrSplit(csv, '\n', absl::SkipWhitespace());
  if (lines.empty() || !absl::StartsWith(lines[0], "# ")) {
    return absl::InternalError("haproxy probe: \"show stat\" did not start with its CSV header");
  }
  std::vector<absl::string_view> header = absl::StrSplit(lines[0].substr(2), ',');
  auto column = [&](absl::string_view name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int svname = column("svname"), scur = column("scur"), stot = column("stot"),
            qcur = column("qcur"), econ = column("econ"), eresp = column("eresp"),
            ereq = column("ereq"), status = column("status");
  for (int index : {svname, scur, stot, qcur, econ, eresp, ereq, status}) {
    if (index < 0) {
      return absl::InternalError(
          "haproxy probe: \"show stat\" lacks one of svname, scur, stot, qcur, econ, eresp, "
          "ereq, status");
    }
  }
  double sessions = 0, current = 0, queue = 0, connection_errors = 0, response_errors = 0,
         request_errors = 0, servers_up = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> fields = absl::StrSplit(lines[i], ',');
    if (fields.size() < header.size()) {
      return absl::InternalError(absl::StrCat("haproxy probe: line ", i + 1, " of \"show stat\" has ",
                                              fields.size(), " fields, the header ",
                                              header.size()));
    }
    auto number = [&](int index) {
      double value = 0;
      return absl::SimpleAtod(fields[index], &value) ? value : 0.0;  // empty: not applicable
    };
    if (fields[svname] == "FRONTEND") {
      sessions += number(stot);
      current += number(scur);
      request_errors += number(ereq);
    } else if (fields[svname] == "BACKEND") {
      queue += number(qcur);
      connection_errors += number(econ);
      response_errors += number(eresp);
    } else if (absl::StartsWith(fields[status], "UP")) {
      servers_up += 1;
    }
  }
  const std::string source = "haproxy";
  out.push_back({source, "sessions", sessions, false});
  out.push_back({source, "request_errors", request_errors, false});
  out.push_back({source, "connection_errors", connection_errors, false});
  out.push_back({source, "response_errors", response_errors, false});
  out.push_back({source, "current_sessions", current, true});
  out.push_back({source, "queue", queue, true});
  out.push_back({source, "servers_up", servers_up, true});
  return absl::OkStatus();
}

absl::StatusOr<ProcStat> ParseProcStat(const std::string& text) {
  // "PID (comm) state ppid …": comm may hold spaces and parentheses, so fields are counted from
  // the last ')'. After it: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17).
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return absl::InternalError("/proc stat: no command name");
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(text).substr(close + 1), ' ', absl::SkipEmpty());
  if (fields.size() < 15) return absl::InternalError("/proc stat: too few fields");
  ProcStat stat;
  uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (!absl::SimpleAtoi(fields[1], &stat.ppid) || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime) || !absl::SimpleAtoi(fields[13], &cutime) ||
      !absl::SimpleAtoi(fields[14], &cstime)) {
    return absl::InternalError("/proc stat: malformed number");
  }
  stat.own_ticks = utime + stime;
  stat.children_ticks = cutime + cstime;
  return stat;
}

// ----- SQL -----

SqlProbeSource::SqlProbeSource(std::unique_ptr<db::Session> session, db::Dialect dialect,
                               const std::string& database)
    : session_(std::move(session)),
      dialect_(dialect),
      source_(dialect == db::Dialect::kPostgreSql ? kPostgresSource : kMySqlSource) {
  if (dialect == db::Dialect::kMySql) {
    reading_ = db::MySqlStatisticsQuery(database, db::MySqlStatusTable::kInformationSchema);
    fallback_reading_ =
        db::MySqlStatisticsQuery(database, db::MySqlStatusTable::kPerformanceSchema);
  } else {
    sessions_reading_ = db::PostgresSessionsQuery(database);
    reading_ = db::PostgresStatisticsQuery(database);
  }
}

absl::StatusOr<std::unique_ptr<SqlProbeSource>> SqlProbeSource::Open(db::Driver& driver,
                                                                     const std::string& database,
                                                                     bool server_is_local) {
  if (driver.dialect() == db::Dialect::kNoop) {
    return absl::InvalidArgumentError("the noop driver has no server to probe");
  }
  absl::StatusOr<std::unique_ptr<db::Session>> session = driver.Connect();
  if (!session.ok()) return session.status();
  std::unique_ptr<SqlProbeSource> source(
      new SqlProbeSource(*std::move(session), driver.dialect(), database));
  const bool postgres = driver.dialect() == db::Dialect::kPostgreSql;
  if (postgres) {
    // Tells the probe's session apart from the load's in pg_stat_activity.
    db::ExecOutcome named = source->session_->ExecuteSql(db::kPostgresNameProbeSession);
    if (!named.ok()) return absl::InternalError(named.error->message);
  }
  absl::StatusOr<std::vector<std::string>> rows =
      source->session_->FetchColumn(
          postgres ? db::kPostgresIdentityQuery : db::kMySqlIdentityQuery, 100);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<std::map<std::string, std::string>> identity = SplitRows(*rows, "identity");
  if (!identity.ok()) return identity.status();
  ServerIdentity& id = source->identity_;
  id.version = (*identity)["version"];
  id.product = postgres ? "PostgreSQL"
               : absl::StrContains(id.version, "MariaDB") ? "MariaDB"
                                                          : "MySQL";
  if (!postgres) {
    absl::StatusOr<std::vector<std::string>> isolation = source->session_->FetchColumn(
        id.product == "MariaDB" ? db::kMariaDbIsolationQuery : db::kMySqlIsolationQuery, 1);
    if (!isolation.ok()) return isolation.status();
    absl::StatusOr<std::map<std::string, std::string>> level = SplitRows(*isolation, "isolation");
    if (!level.ok()) return level.status();
    identity->insert(level->begin(), level->end());
  }
  for (const auto& [name, value] : *identity) {
    if (name != "version" && name != "pid" && name != "pid_file") id.settings[name] = value;
  }
  if (postgres) {
    double block_size = 0;
    if (absl::SimpleAtod(id.settings["block_size"], &block_size) && block_size > 0) {
      source->block_size_ = block_size;
    }
  }
  if (server_is_local) {
    // The server's main process, checked to be one by its command name, so that a server in a
    // container (its PIDs are not ours) is not confused with whatever has that PID here.
    int pid = 0;
    if (postgres) {
      int backend = 0;
      if (absl::SimpleAtoi((*identity)["pid"], &backend)) {
        absl::StatusOr<std::string> stat = ReadSmallFile(absl::StrCat("/proc/", backend, "/stat"));
        absl::StatusOr<ProcStat> parsed = stat.ok() ? ParseProcStat(*stat)
                                                    : absl::StatusOr<ProcStat>(stat.status());
        if (parsed.ok() && CommandOf("/proc", backend) == "postgres" &&
            CommandOf("/proc", parsed->ppid) == "postgres") {
          pid = parsed->ppid;
        }
      }
    } else {
      absl::StatusOr<std::string> pid_text = ReadSmallFile((*identity)["pid_file"]);
      int candidate = 0;
      if (pid_text.ok() &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(*pid_text), &candidate)) {
        const std::string command = CommandOf("/proc", candidate);
        if (command == "mariadbd" || command == "mysqld") pid = candidate;
      }
    }
    id.pid = pid;
  }
  return source;
}

absl::Status SqlProbeSource::Read(std::vector<ProbeValue>& out) {
  const bool postgres = dialect_ == db::Dialect::kPostgreSql;
  std::vector<std::string> sessions;
  if (postgres) {
    ++statements_;
    absl::StatusOr<std::vector<std::string>> counted = session_->FetchColumn(sessions_reading_, 2);
    if (!counted.ok()) return counted.status();
    sessions = *std::move(counted);
  }
  ++statements_;
  absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(reading_, 200);
  if (!rows.ok() && !postgres) {
    // MySQL 8 moved the status table to performance_schema (MariaDB keeps both).
    ++statements_;
    rows = session_->FetchColumn(fallback_reading_, 200);
  }
  if (!rows.ok()) return rows.status();
  rows->insert(rows->end(), sessions.begin(), sessions.end());
  std::vector<ProbeValue> values;
  if (absl::Status parsed = ParseNameValueRows(*rows, source_, values); !parsed.ok()) {
    return parsed;
  }
  std::map<std::string, double> by_name;
  for (const ProbeValue& value : values) by_name[value.name] = value.value;
  auto common = [&](const char* name, double value, bool gauge) {
    values.push_back({.source = source_, .name = name, .value = value, .gauge = gauge});
  };
  if (postgres) {
    common("commits", by_name["xact_commit"], false);
    common("rollbacks", by_name["xact_rollback"], false);
    common("read_bytes", by_name["blks_read"] * block_size_, false);
    common("written_bytes",
           (by_name["buffers_checkpoint"] + by_name["buffers_clean"] + by_name["buffers_backend"]) *
               block_size_,
           false);
  } else {
    // No commits, rollbacks or rows_*: none of MySQL's counters means what PostgreSQL's do.
    // Measured on MariaDB 10.11.19 and PostgreSQL 15 (harness servers; each figure the counter's
    // change over the statement(s), read before and after from another session):
    //                                   PostgreSQL          MariaDB
    //   DELETE of 1 parent row whose    tup_deleted 4,      Handler_delete 1 (Innodb_rows_*
    //   3 children go by ON DELETE      n_tup_del parent 1  and INNODB_METRICS dml_* do not
    //   CASCADE                         + child 3           exist in 10.11)
    //   ... with ON DELETE SET NULL     tup_deleted 1,      Handler_delete 1, Handler_update 0
    //     (2 children)                  tup_updated 2
    //   UPDATE parent key, ON UPDATE    tup_updated 3       Handler_update 1
    //     CASCADE to 2 children
    //   UPDATE t SET id = id (1 row)    tup_updated 1       Handler_update 0
    //   INSERT of one 32 kB text        tup_inserted 18     Handler_write 1
    //   autocommit UPDATE               xact_commit 1       Handler_commit 1, Com_commit 0
    //   autocommit SELECT 1 / SELECT    xact_commit 1       Handler_commit 1, Com_commit 0
    //   BEGIN; SELECT; UPDATE; SELECT;  xact_commit 1       Handler_commit 4, Com_commit 1
    //     COMMIT
    //   START TRANSACTION READ ONLY;    xact_commit 1       Handler_commit 4, Com_commit 1
    //     3 SELECTs; COMMIT
    //   BEGIN; COMMIT                   xact_commit 1       Com_commit 1, Handler_commit 0
    //   BEGIN; UPDATE; ROLLBACK         xact_rollback 1     Com_rollback 1, Handler_rollback 1,
    //                                                       Handler_commit 1
    // INNODB_METRICS trx_rw_commits / trx_ro_commits / trx_nl_ro_commits / trx_rollbacks are
    // disabled by default (ENABLED 0); enabled, they counted 1 for each transaction above that
    // touched InnoDB, 0 for BEGIN; COMMIT, and the rolled-back one as trx_rw_commits 1 and
    // trx_rollbacks 1: not transactions committed either.
    common("read_bytes", by_name["Innodb_data_read"], false);
    common("written_bytes", by_name["Innodb_data_written"], false);
    common("deadlocks", by_name["Innodb_deadlocks"], false);
    common("connections", by_name["Threads_connected"], true);
    common("connections_active", by_name["Threads_running"], true);
    common("lock_waiting", by_name["Innodb_row_lock_current_waits"], true);
    common("database_size_bytes", by_name["data_bytes"] + by_name["index_bytes"], true);
  }
  out.insert(out.end(), values.begin(), values.end());
  return absl::OkStatus();
}

// ----- /proc -----

ProcessProbeSource::ProcessProbeSource(int pid, std::string proc_root, Clock* clock)
    : pid_(pid),
      proc_root_(std::move(proc_root)),
      ticks_per_second_(sysconf(_SC_CLK_TCK)),
      clock_(clock != nullptr ? *clock : own_clock_) {
  if (ticks_per_second_ <= 0) ticks_per_second_ = 100;
}

absl::Status ProcessProbeSource::Read(std::vector<ProbeValue>& out) {
  absl::StatusOr<std::string> root_text = ReadSmallFile(absl::StrCat(proc_root_, "/", pid_, "/stat"));
  if (!root_text.ok()) return root_text.status();
  absl::StatusOr<ProcStat> root = ParseProcStat(*root_text);
  if (!root.ok()) return root.status();
  // The main process's own time, its reaped children's (PostgreSQL's ended backends), and the
  // live children's own.
  uint64_t ticks = root->own_ticks + root->children_ticks;
  std::vector<int> pids = {pid_};
  DIR* dir = opendir(proc_root_.c_str());
  if (dir == nullptr) {
    return absl::InternalError(absl::StrCat("cannot list ", proc_root_, ": ", std::strerror(errno)));
  }
  while (dirent* entry = readdir(dir)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid) || pid == pid_) continue;
    absl::StatusOr<std::string> text = ReadSmallFile(absl::StrCat(proc_root_, "/", pid, "/stat"));
    if (!text.ok()) continue;  // ended meanwhile
    absl::StatusOr<ProcStat> stat = ParseProcStat(*text);
    if (!stat.ok() || stat->ppid != pid_) continue;
    ticks += stat->own_ticks;
    pids.push_back(pid);
  }
  closedir(dir);
  const Nanos memory_start = clock_.Now();
  const bool read_memory = memory_start >= next_memory_read_;
  double pss_bytes = 0;
  for (int pid : read_memory ? pids : std::vector<int>{}) {
    absl::StatusOr<std::string> rollup =
        ReadSmallFile(absl::StrCat(proc_root_, "/", pid, "/smaps_rollup"));
    if (!rollup.ok()) continue;  // ended meanwhile, or a kernel without smaps_rollup
    for (absl::string_view line : absl::StrSplit(*rollup, '\n')) {
      if (!absl::ConsumePrefix(&line, "Pss:")) continue;
      double kilobytes = 0;
      line = absl::StripAsciiWhitespace(line);
      absl::ConsumeSuffix(&line, "kB");
      if (absl::SimpleAtod(absl::StripAsciiWhitespace(line), &kilobytes)) {
        pss_bytes += kilobytes * 1024;
      }
      break;
    }
  }
  out.push_back({.source = "process",
                 .name = "cpu_seconds",
                 .value = static_cast<double>(ticks) / static_cast<double>(ticks_per_second_),
                 .gauge = false});
  if (read_memory) {
    const Nanos took = clock_.Now() - memory_start;
    next_memory_read_ =
        memory_start + static_cast<Nanos>(static_cast<double>(took) / kMemoryShare);
    out.push_back({.source = "process", .name = "rss_bytes", .value = pss_bytes, .gauge = true});
  }
  out.push_back({.source = "process",
                 .name = "processes",
                 .value = static_cast<double>(pids.size()),
                 .gauge = true});
  return absl::OkStatus();
}

// ----- HAProxy -----

HaproxyProbeSource::HaproxyProbeSource(std::string socket_path)
    : socket_path_(std::move(socket_path)) {}

absl::Status HaproxyProbeSource::Read(std::vector<ProbeValue>& out) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("probe.haproxy_stats: socket path too long: ", socket_path_));
  }
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  // HAProxy answers at once; a stuck one must not stall the probe for long.
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string answer;
  absl::Status status = absl::OkStatus();
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    status = absl::UnavailableError(absl::StrCat("probe.haproxy_stats: cannot connect to ",
                                                 socket_path_, ": ", std::strerror(errno)));
  } else {
    static constexpr char kCommand[] = "show stat\n";
    if (write(fd, kCommand, sizeof(kCommand) - 1) != static_cast<ssize_t>(sizeof(kCommand) - 1)) {
      status = absl::UnavailableError(absl::StrCat("probe.haproxy_stats: write to ", socket_path_,
                                                   ": ", std::strerror(errno)));
    }
    char buffer[8192];
    while (status.ok() && answer.size() < (1 << 20)) {
      const ssize_t got = read(fd, buffer, sizeof(buffer));
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        status = absl::UnavailableError(absl::StrCat("probe.haproxy_stats: read from ",
                                                     socket_path_, ": ", std::strerror(errno)));
        break;
      }
      answer.append(buffer, static_cast<size_t>(got));
    }
  }
  close(fd);
  if (!status.ok()) return status;
  return ParseHaproxyStat(answer, out);
}

// ----- the probe's thread -----

DatabaseProbe::DatabaseProbe(Clock& clock, Opener opener, Options options)
    : clock_(clock), opener_(std::move(opener)), options_(std::move(options)) {
  if (options_.interval <= 0) options_.interval = kSecond;
  thread_ = std::thread([this] {
    NameThisThread("dbload-probe");
    MakeThisThreadBackground();
    Loop();
  });
}

DatabaseProbe::~DatabaseProbe() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void DatabaseProbe::Stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

void DatabaseProbe::RequestReading(std::chrono::nanoseconds after) {
  std::lock_guard lock(mu_);
  const auto at = std::chrono::steady_clock::now() + after;
  if (!reading_requested_at_ || at < *reading_requested_at_) reading_requested_at_ = at;
  cv_.notify_all();
}

std::vector<ProbeReading> DatabaseProbe::TakeReadings() {
  std::lock_guard lock(mu_);
  return std::exchange(readings_, {});
}

std::string DatabaseProbe::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

bool DatabaseProbe::up() const {
  std::lock_guard lock(mu_);
  return up_;
}

void DatabaseProbe::Loop() {
  if (options_.thread_start) options_.thread_start();
  std::vector<std::unique_ptr<ProbeSource>> sources;
  // Real time: the probe waits for a database, not for the run's simulated events.
  auto next = std::chrono::steady_clock::now();
  while (true) {
    {
      std::unique_lock lock(mu_);
      for (;;) {
        const auto due = reading_requested_at_ ? std::min(next, *reading_requested_at_) : next;
        if (stopping_ || std::chrono::steady_clock::now() >= due) break;
        cv_.wait_until(lock, due);
      }
      if (stopping_) break;
      reading_requested_at_.reset();
    }
    next = std::chrono::steady_clock::now() + std::chrono::nanoseconds(options_.interval);
    std::string error;
    ProbeReading reading;
    if (sources.empty()) {
      absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> opened = opener_();
      if (opened.ok()) {
        sources = *std::move(opened);
      } else {
        error = std::string(opened.status().message());
      }
    }
    if (!sources.empty()) {
      for (size_t i = 0; i < sources.size(); ++i) {
        if (absl::Status read = sources[i]->Read(reading.values); !read.ok()) {
          error = absl::StrCat(sources[i]->name(), ": ", read.message());
          break;
        }
        if (i == 0) reading.at = clock_.Now();
      }
      // After a failure everything is opened again: a new connection, named as the probe's, and
      // the server's PID anew (a restarted server has a new one).
      if (!error.empty()) sources.clear();
    }
    {
      std::lock_guard lock(mu_);
      up_ = error.empty();
      error_ = error;
      if (error.empty()) readings_.push_back(std::move(reading));
    }
    if (options_.on_reading) options_.on_reading();
  }
  sources.clear();  // closes the connection on this thread (Connector/C++ wants that)
  if (options_.thread_end) options_.thread_end();
}

}  // namespace dbload
