#ifndef DBLOAD_COORDINATOR_DB_PROBE_H_
#define DBLOAD_COORDINATOR_DB_PROBE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/clock.h"
#include "db/driver.h"

namespace dbload {

// The database probe: what the server itself says about the load a run puts on it, read once a
// second on a connection of its own, next to the latency the agents measure. The published
// comparisons explained their results this way (buffer reads per query, WAL per insert, lock
// waits), and a saturated database looks different from a saturated generator.
//
// Values are named by their source ("postgresql", "mysql", "haproxy", "process") and either the
// server's own name (xact_commit, Innodb_data_read) or one of the common names. A common name
// has one meaning on every server that gives it, so that one dashboard panel and one column of
// a suite report serve both; a server with no counter of that meaning does not give the name
// (its own counters stay, under their own names):
//   commits, rollbacks (counters): transactions committed / rolled back, one each however many
//       statements they had (an autocommit statement is one). PostgreSQL only (xact_commit,
//       xact_rollback of the target database). MySQL/MariaDB count no such thing (see the
//       measurements in db_probe.cc): Handler_commit, Com_commit and Handler_rollback keep
//       their own names.
//   read_bytes (counter): bytes the server read from its data files. PostgreSQL: blks_read ×
//       block size (blocks not found in shared buffers, of the target database); MySQL:
//       Innodb_data_read (whole server).
//   written_bytes (counter): bytes the server wrote to its data files. PostgreSQL: buffers
//       written by checkpoints, the background writer and backends × block size
//       (pg_stat_bgwriter, whole server); MySQL: Innodb_data_written (whole server).
//   deadlocks (counter): deadlocks the server detected (PostgreSQL: in the target database;
//       MySQL: Innodb_deadlocks, whole server).
//   connections, connections_active (gauges): client sessions, and those running a statement
//       (PostgreSQL: of the target database, the probe's not among them; MySQL:
//       Threads_connected / Threads_running, whole server, the probe's included).
//   lock_waiting (gauge): sessions waiting for a lock now (PostgreSQL: wait_event_type Lock;
//       MySQL: Innodb_row_lock_current_waits).
//   database_size_bytes (gauge): the target database's size (PostgreSQL: pg_database_size;
//       MySQL: data + index length of its tables).
// Rows inserted, updated and deleted are not common names: no counter of one server means what
// one of the other does (measured, db_probe.cc: PostgreSQL counts the rows a foreign key's
// ON DELETE CASCADE / SET NULL / ON UPDATE CASCADE changes, an update that changes nothing and
// the TOAST chunks of a large value; MariaDB's handler counters count none of these). Read
// PostgreSQL's tup_inserted / tup_updated / tup_deleted and MySQL's Handler_write /
// Handler_update / Handler_delete (Innodb_rows_* on MySQL 8) for what each server counts.
// The process source (a server on this machine): cpu_seconds (counter: user + system time of
// the server's processes, including exited children PostgreSQL reaped) and rss_bytes (gauge:
// their proportional resident memory, Pss, so that PostgreSQL's shared buffers count once;
// read only in some readings, see ProcessProbeSource).
struct ProbeValue {
  std::string source;
  std::string name;
  double value = 0;
  bool gauge = false;
};

// Whether a cumulative counter read as `previous` and then `value` was reset (its server restarted
// and counts from zero again): it fell below half. Such a value is counted from zero, as
// Prometheus' rate() does. A smaller dip is not a reset and counts nothing: the process source's
// CPU time dips when a child is reaped between reading the parent and the child, and counting
// the whole value again would add the server's lifetime CPU.
inline bool CounterWasReset(double previous, double value) { return value < previous / 2; }

// What the server says it is, for the report's manifest.
struct ServerIdentity {
  std::string product;  // "PostgreSQL", "MariaDB", "MySQL"
  std::string version;  // its version() as it reports it
  std::map<std::string, std::string> settings;  // the settings that shape results
  // The server's main process on this machine (PostgreSQL's postmaster, mysqld/mariadbd), when
  // the server runs here and its PID could be read; 0 otherwise.
  int pid = 0;
};

// One place values are read from. Implementations are not thread-safe: the probe's own thread
// is their only user.
class ProbeSource {
 public:
  virtual ~ProbeSource() = default;
  virtual std::string name() const = 0;
  // Appends this source's values. An error leaves `out` as it was.
  virtual absl::Status Read(std::vector<ProbeValue>& out) = 0;
};

// PostgreSQL or MySQL/MariaDB through the project's own driver (one session). Every Read is one
// statement, so that the probe's cost is one query per second.
class SqlProbeSource final : public ProbeSource {
 public:
  // Connects, names the session (PostgreSQL: application_name 'dbload probe'), and reads the
  // server's identity. `database` is the target database the values are about; the driver may
  // connect to another one (PostgreSQL's "postgres", or none for MySQL), so that the probe's
  // own statements do not count among the target's. `server_is_local`: the target's address is
  // on this machine, so that the server's PID may be looked up (PostgreSQL: the parent of the
  // probe's backend; MySQL: the server's pid_file).
  static absl::StatusOr<std::unique_ptr<SqlProbeSource>> Open(db::Driver& driver,
                                                              const std::string& database,
                                                              bool server_is_local);
  std::string name() const override { return source_; }
  absl::Status Read(std::vector<ProbeValue>& out) override;
  const ServerIdentity& identity() const { return identity_; }
  uint64_t statements() const { return statements_; }

 private:
  SqlProbeSource(std::unique_ptr<db::Session> session, db::Dialect dialect,
                 const std::string& database);
  std::unique_ptr<db::Session> session_;
  db::Dialect dialect_;
  std::string source_;
  std::string reading_, fallback_reading_;  // the statement, and MySQL 8's variant
  std::string sessions_reading_;            // PostgreSQL: the sessions, read first
  ServerIdentity identity_;
  double block_size_ = 8192;
  uint64_t statements_ = 0;
};

// A server's processes on this machine, from /proc: the process `pid` and its children.
// CPU time comes from each process's stat, cheaply, in every reading. Pss does not: the kernel
// walks each process's page tables for smaps_rollup, and under load that took from 116 ms to
// 3.3 s a reading (64 PostgreSQL backends sharing 256 MB of buffers, 2 cores, measured), so
// with larger buffers a probe that read it every time read every half minute instead of every
// second. rss_bytes is therefore read only when the reading's share of the time since the
// previous one stays under kMemoryShare: after a read that took d, not again until 1/share × d
// later. Readings without it lack rss_bytes (no stale value is repeated). The share is 1 %, not
// more, because the walk runs on the load's own cores when the coordinator and the agent share a
// process (`dbload run`): at 10 % it cost 6 % of the client's CPU and doubled its dispatch lag
// p99 (128 PostgreSQL backends, bench/RESULTS.md section 30).
class ProcessProbeSource final : public ProbeSource {
 public:
  static constexpr double kMemoryShare = 0.01;
  // `proc_root` is "/proc" except in tests; `clock` times the memory reads (a SteadyClock of
  // its own when null).
  ProcessProbeSource(int pid, std::string proc_root = "/proc", Clock* clock = nullptr);
  std::string name() const override { return "process"; }
  absl::Status Read(std::vector<ProbeValue>& out) override;

 private:
  int pid_;
  std::string proc_root_;
  long ticks_per_second_;
  SteadyClock own_clock_;
  Clock& clock_;
  Nanos next_memory_read_ = 0;  // on clock_; 0: read at the first Read
};

// HAProxy's runtime API ("show stat") on its stats socket: frontends' sessions and request
// errors, backends' queue and connection/response errors, servers up.
class HaproxyProbeSource final : public ProbeSource {
 public:
  explicit HaproxyProbeSource(std::string socket_path);
  std::string name() const override { return "haproxy"; }
  absl::Status Read(std::vector<ProbeValue>& out) override;

 private:
  std::string socket_path_;
};

// Parsers, exposed for tests. Both fail with an error naming what was malformed.
// "name=value" lines (the probe's SQL returns one such text column per row).
absl::Status ParseNameValueRows(const std::vector<std::string>& rows, const std::string& source,
                                std::vector<ProbeValue>& out);
// HAProxy's "show stat" CSV.
absl::Status ParseHaproxyStat(const std::string& csv, std::vector<ProbeValue>& out);
// /proc/PID/stat: parent PID, user + system + reaped children's ticks.
struct ProcStat {
  int ppid = 0;
  uint64_t own_ticks = 0;       // utime + stime
  uint64_t children_ticks = 0;  // cutime + cstime
};
absl::StatusOr<ProcStat> ParseProcStat(const std::string& text);

// PostgreSQL's gauge of the sessions dbload's drivers opened in the target's database
// (db::PostgresSessionsQuery): the run's, once its load is over, until their backends exited.
inline constexpr char kLoadSessionsGauge[] = "dbload_sessions";

// One reading of every source, stamped with the probe's clock.
struct ProbeReading {
  Nanos at = 0;
  std::vector<ProbeValue> values;
};

// Reads its sources every `interval` on a thread of its own, so that a slow or stalled database
// never holds up the coordinator: the coordinator takes what was read (TakeReadings) on its tick.
// A reading is stamped when its first source (the database's, which the opener puts first)
// answered: the sources after it (the server's processes, HAProxy) must not move the time the
// database's counters are attributed to (a 3.3-s /proc read stamped them 3.3 s late).
// Opening the sources (connecting) happens on that thread too; after any failure all sources are
// opened again at the next interval. A server restarted meanwhile starts its counters (and its
// processes' CPU time) from zero: Prometheus sees a counter reset, and a report's delta across
// the restart is not the server's work.
class DatabaseProbe {
 public:
  // Opens the sources; called on the probe's thread, again after a failure (every interval).
  using Opener = std::function<absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>>()>;
  struct Options {
    Nanos interval = kSecond;
    // Called on the probe's thread after each reading (and after each failure), with no lock of
    // the probe's held: lets the owner react at once (a run waiting for its final reading).
    std::function<void()> on_reading;
    // Called on the probe's thread around its life (Connector/C++ per-thread set-up).
    std::function<void()> thread_start;
    std::function<void()> thread_end;
  };
  DatabaseProbe(Clock& clock, Opener opener, Options options);
  // Stops and joins the thread (a statement in flight is awaited).
  ~DatabaseProbe();
  DatabaseProbe(const DatabaseProbe&) = delete;
  DatabaseProbe& operator=(const DatabaseProbe&) = delete;

  // Readings since the previous call, oldest first.
  std::vector<ProbeReading> TakeReadings();
  // Asks for a reading `after` from now (real time) rather than at the next interval (the load
  // just ended: at once; the run's sessions are still leaving the database: a little later). An
  // earlier request still pending stands.
  void RequestReading(std::chrono::nanoseconds after = std::chrono::nanoseconds(0));
  // Tells the thread to end after its current statement; does not wait.
  void Stop();
  // The last error (connecting or reading); empty after a successful reading.
  std::string error() const;
  // Whether the last attempt succeeded.
  bool up() const;

 private:
  void Loop();

  Clock& clock_;
  Opener opener_;
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ProbeReading> readings_;
  std::string error_;
  bool up_ = false;
  std::optional<std::chrono::steady_clock::time_point> reading_requested_at_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_DB_PROBE_H_
