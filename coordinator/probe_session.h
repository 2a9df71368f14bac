#ifndef DBLOAD_COORDINATOR_PROBE_SESSION_H_
#define DBLOAD_COORDINATOR_PROBE_SESSION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "coordinator/db_probe.h"
#include "coordinator/row_changes.h"
#include "coordinator/saturation.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"
#include "net/target_allow_list.h"

namespace dbload {

// What the probed server said it is; filled on the probe's thread, hence the lock.
struct ProbedServer {
  std::mutex mu;
  ServerIdentity identity;
};

// One run's database probe, from before its load to after it: the DatabaseProbe, its readings
// on the run's clock, its error, and what the server said it is. A run without a probe (the noop
// driver, a plan that turns it off, a probe that could not be made: then error() says why) has
// an inactive session. Not thread-safe: the coordinator calls it under its own lock; the probe's
// thread touches only the ProbedServer, under that one's lock.
class ProbeSession {
 public:
  ProbeSession() = default;  // no probe, nothing to say
  // No probe, and why ("probe off: …").
  static ProbeSession Off(std::string error);
  // `server`: what the probe's opener fills in once connected (may be null).
  ProbeSession(std::unique_ptr<DatabaseProbe> probe, std::shared_ptr<ProbedServer> server);

  bool active() const { return probe_ != nullptr; }
  // The readings since the previous call, kept at their time since `started` (the run's clock:
  // a reading before the load is negative), and returned for whoever publishes them. The error
  // follows the probe's state: a reading after an outage (a restarted server) clears it, so
  // that the report does not blame a probe that recovered.
  std::vector<ProbeReading> TakeReadings(Nanos started);
  // The run's clock now starts `by_s` later than it did: the readings kept so far move back.
  void MoveClockStart(double by_s) { record_.ShiftElapsed(-by_s); }
  // Whether the last attempt succeeded (false without a probe).
  bool up() const;
  const std::string& error() const { return error_; }
  // Asks for a reading `after` from now (real time; DatabaseProbe::RequestReading).
  void RequestReading(std::chrono::nanoseconds after = std::chrono::nanoseconds(0));
  bool has_readings() const { return !record_.empty(); }
  // The time of the newest reading on the run's clock (-1 when none).
  double last_reading_s() const { return record_.last_elapsed_s(); }
  // Whether the newest reading lists no session of dbload's in the target's database
  // (kLoadSessionsGauge; true when it lacks the count: MySQL).
  bool LoadSessionsGone() const;
  // Whether a new run may stop waiting for the first reading: it has one, the probe failed, or
  // there is no probe.
  bool FirstReadingIn() const;
  // The server's max_connections, once it said so.
  std::optional<uint64_t> MaxConnections() const;

  // The probe's samples and saturation (ProbeRecord::FillReport) and its error, into a report.
  void FillReport(dbload::v1::RunReport& report) const;
  // The server's product, version and settings, into a report's manifest.
  void FillManifest(dbload::v1::RunManifest& manifest) const;

  // Stops the probe and hands it over, to be destroyed outside the coordinator's lock (its
  // thread may be in a statement, and calls back into the coordinator). Null without a probe.
  std::unique_ptr<DatabaseProbe> Retire();

 private:
  std::unique_ptr<DatabaseProbe> probe_;
  std::shared_ptr<ProbedServer> server_;
  ProbeRecord record_;
  std::string error_;
};

// Makes runs' probe sessions, and the counters of their row checks: the coordinator's own
// connections to a run's target. The coordinator takes one through its options
// (CoordinatorOptions::probe_factory), so that a test can hand runs probes of its own making.
class ProbeFactory {
 public:
  virtual ~ProbeFactory() = default;
  // The plan's target as the probe would dial it (its host name resolved once), or why it may
  // not be probed. Called at Submit outside the coordinator's lock: a resolver can take seconds.
  virtual absl::StatusOr<dbload::v1::Target> Resolve(const dbload::v1::Plan& plan) = 0;
  // The run's probe session, dialing `dialed` (what Resolve said). `on_reading` is called on
  // the probe's thread after each reading or failure.
  virtual ProbeSession Start(const std::string& run_id, const dbload::v1::Plan& plan,
                             const absl::StatusOr<dbload::v1::Target>& dialed,
                             std::function<void()> on_reading) = 0;
  // What counts the rows of the plan's tables for its row check (row_check.h): on the target's
  // own database, with the driver and the password the probe uses and only with the same
  // consent; or why it may not. An empty counter: the target has no rows to count (noop).
  // Called at Submit outside the coordinator's lock (it resolves the target's host name).
  virtual absl::StatusOr<RowCounter> MakeRowCounter(const dbload::v1::Plan& plan) = 0;
  // Likewise, what reads the values of the workload's invariants (an empty reader, the default:
  // nothing to read them on).
  virtual absl::StatusOr<ValueReader> MakeValueReader(const dbload::v1::Plan& plan) {
    (void)plan;
    return ValueReader();
  }
};

// The coordinator's own probe: the server's statistics over SQL (SqlProbeSource), its processes
// when it runs on this machine, HAProxy's stats socket when the plan names one; on the driver of
// the plan's target, with the password the agents read, and only with the consent of the
// coordinator's --allow-target (like an agent's): otherwise the run goes on unprobed and the
// report says which flag would allow it.
class DatabaseProbeFactory final : public ProbeFactory {
 public:
  struct Options {
    TargetAllowList allow_target = TargetAllowList::LoopbackDefault();
    std::string remedy = "the coordinator";  // whom the note tells to start with the flag
    std::shared_ptr<Resolver> resolver;      // null: SystemResolver
    std::function<void(const std::string&)> log;
  };
  DatabaseProbeFactory(Clock& clock, Options options);

  absl::StatusOr<dbload::v1::Target> Resolve(const dbload::v1::Plan& plan) override;
  ProbeSession Start(const std::string& run_id, const dbload::v1::Plan& plan,
                     const absl::StatusOr<dbload::v1::Target>& dialed,
                     std::function<void()> on_reading) override;
  absl::StatusOr<RowCounter> MakeRowCounter(const dbload::v1::Plan& plan) override;
  absl::StatusOr<ValueReader> MakeValueReader(const dbload::v1::Plan& plan) override;

 private:
  // A driver for the plan's target on the coordinator's machine, with its consent (`purpose`
  // says for what, in a refusal); null for a target without rows (noop).
  absl::StatusOr<std::shared_ptr<db::Driver>> TargetDriver(const dbload::v1::Plan& plan,
                                                           absl::string_view purpose);
  Clock& clock_;
  Options options_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_PROBE_SESSION_H_
