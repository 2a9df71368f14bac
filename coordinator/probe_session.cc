#include "coordinator/probe_session.h"

#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "db/driver_factory.h"
#include "net/loopback.h"
#include "plan/target_secrets.h"

namespace dbload {

ProbeSession ProbeSession::Off(std::string error) {
  ProbeSession session;
  session.error_ = std::move(error);
  return session;
}

ProbeSession::ProbeSession(std::unique_ptr<DatabaseProbe> probe,
                           std::shared_ptr<ProbedServer> server)
    : probe_(std::move(probe)), server_(std::move(server)) {}

std::vector<ProbeReading> ProbeSession::TakeReadings(Nanos started) {
  if (probe_ == nullptr) return {};
  std::vector<ProbeReading> readings = probe_->TakeReadings();
  for (const ProbeReading& reading : readings) {
    record_.Add(static_cast<double>(reading.at - started) / kSecond, reading.values);
  }
  error_ = probe_->error();
  return readings;
}

bool ProbeSession::up() const { return probe_ != nullptr && probe_->up(); }

void ProbeSession::RequestReading(std::chrono::nanoseconds after) {
  if (probe_ != nullptr) probe_->RequestReading(after);
}

bool ProbeSession::LoadSessionsGone() const {
  const std::optional<double> sessions = record_.Newest(kLoadSessionsGauge);
  return !sessions || *sessions == 0;
}

bool ProbeSession::FirstReadingIn() const {
  return probe_ == nullptr || !record_.empty() || !probe_->error().empty();
}

std::optional<uint64_t> ProbeSession::MaxConnections() const {
  if (server_ == nullptr) return std::nullopt;
  std::lock_guard lock(server_->mu);
  auto it = server_->identity.settings.find("max_connections");
  uint64_t max_connections = 0;
  if (it == server_->identity.settings.end() || !absl::SimpleAtoi(it->second, &max_connections)) {
    return std::nullopt;
  }
  return max_connections;
}

void ProbeSession::FillReport(v1::RunReport& report) const {
  record_.FillReport(report);
  report.set_probe_error(error_);
}

void ProbeSession::FillManifest(v1::RunManifest& manifest) const {
  if (server_ == nullptr) return;
  std::lock_guard lock(server_->mu);
  const ServerIdentity& server = server_->identity;
  manifest.set_server_product(server.product);
  manifest.set_server_version(server.version);
  manifest.mutable_server_settings()->insert(server.settings.begin(), server.settings.end());
}

std::unique_ptr<DatabaseProbe> ProbeSession::Retire() {
  if (probe_ != nullptr) probe_->Stop();
  return std::move(probe_);
}

DatabaseProbeFactory::DatabaseProbeFactory(Clock& clock, Options options)
    : clock_(clock), options_(std::move(options)) {
  if (options_.resolver == nullptr) options_.resolver = std::make_shared<SystemResolver>();
}

absl::StatusOr<v1::Target> DatabaseProbeFactory::Resolve(const v1::Plan& plan) {
  if (plan.probe().disabled()) return plan.target();
  v1::Target dialed = plan.target();
  absl::StatusOr<std::string> endpoint = ApplyAllowTarget(options_.allow_target, *options_.resolver,
                                                          {.subject = "the coordinator's probe",
                                                           .remedy = options_.remedy,
                                                           .purpose = "to read its statistics"},
                                                          dialed);
  if (!endpoint.ok()) return endpoint.status();
  return dialed;
}

ProbeSession DatabaseProbeFactory::Start(const std::string& run_id, const v1::Plan& plan,
                                         const absl::StatusOr<v1::Target>& probe_target,
                                         std::function<void()> on_reading) {
  const v1::Target& target = plan.target();
  if (target.driver() == "noop" || plan.probe().disabled()) return ProbeSession();
  // The coordinator reads the password itself, from the same file or variable as the agents.
  absl::StatusOr<std::string> password = ReadTargetPassword(target);
  if (!password.ok()) {
    return ProbeSession::Off(absl::StrCat("probe off: ", password.status().message(),
                                          " (on the coordinator's machine)"));
  }
  // The probe connects beside the target database where it can (PostgreSQL's maintenance
  // database, MySQL without a default one), so that its statements are not counted in the
  // target's own statistics nor listed among its sessions; failing that, to the target's.
  // The probe connects to the target too: only with the coordinator's consent, like an agent
  // (Resolve). Without it the run goes on, unprobed, and the report says which flag would
  // allow it.
  if (!probe_target.ok()) {
    std::string error = absl::StrCat("probe off: ", probe_target.status().message());
    if (options_.log) options_.log(absl::StrCat("run ", run_id, ": ", error));
    return ProbeSession::Off(std::move(error));
  }
  const v1::Target& dialed = *probe_target;
  v1::Target beside = dialed;
  beside.set_database(target.driver() == "postgresql" ? "postgres" : "");
  absl::StatusOr<std::unique_ptr<db::Driver>> made = db::MakeDriver(dialed, *password, clock_);
  absl::StatusOr<std::unique_ptr<db::Driver>> made_beside =
      db::MakeDriver(beside, *password, clock_);
  if (!made.ok() || !made_beside.ok()) {
    return ProbeSession::Off(
        absl::StrCat("probe off: ", (made.ok() ? made_beside : made).status().message()));
  }
  std::shared_ptr<db::Driver> driver = *std::move(made), driver_beside = *std::move(made_beside);
  const bool local =
      !target.socket().empty() ||
      IsLoopbackHost(dialed.dial_address().empty() ? target.host() : dialed.dial_address());
  auto server = std::make_shared<ProbedServer>();
  DatabaseProbe::Opener opener = [driver, driver_beside, local, database = target.database(),
                                  server, haproxy = plan.probe().haproxy_stats()]()
      -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
    absl::StatusOr<std::unique_ptr<SqlProbeSource>> sql =
        SqlProbeSource::Open(*driver_beside, database, local);
    if (!sql.ok()) sql = SqlProbeSource::Open(*driver, database, local);
    if (!sql.ok()) return sql.status();
    const ServerIdentity identity = (*sql)->identity();
    {
      std::lock_guard lock(server->mu);
      server->identity = identity;
    }
    std::vector<std::unique_ptr<ProbeSource>> sources;
    sources.push_back(*std::move(sql));
    if (identity.pid > 0) sources.push_back(std::make_unique<ProcessProbeSource>(identity.pid));
    if (!haproxy.empty()) sources.push_back(std::make_unique<HaproxyProbeSource>(haproxy));
    return sources;
  };
  DatabaseProbe::Options options{
      .interval = plan.probe().interval_ns() > 0 ? plan.probe().interval_ns() : kSecond,
      .on_reading = std::move(on_reading),
      .thread_start = [driver] { driver->ThreadStart(); },
      .thread_end = [driver] { driver->ThreadEnd(); }};
  return ProbeSession(
      std::make_unique<DatabaseProbe>(clock_, std::move(opener), std::move(options)),
      std::move(server));
}

absl::StatusOr<std::shared_ptr<db::Driver>> DatabaseProbeFactory::TargetDriver(
    const v1::Plan& plan, absl::string_view purpose) {
  const v1::Target& target = plan.target();
  if (target.driver() == "noop") return nullptr;
  absl::StatusOr<std::string> password = ReadTargetPassword(target);
  if (!password.ok()) {
    return absl::Status(password.status().code(), absl::StrCat(password.status().message(),
                                                               " (on the coordinator's machine)"));
  }
  // Like the probe, only with the coordinator's consent; the rows are the target database's.
  v1::Target dialed = target;
  absl::StatusOr<std::string> endpoint = ApplyAllowTarget(
      options_.allow_target, *options_.resolver,
      {.subject = "the coordinator", .remedy = options_.remedy, .purpose = std::string(purpose)},
      dialed);
  if (!endpoint.ok()) return endpoint.status();
  absl::StatusOr<std::unique_ptr<db::Driver>> made = db::MakeDriver(dialed, *password, clock_);
  if (!made.ok()) return made.status();
  return std::shared_ptr<db::Driver>(*std::move(made));
}

absl::StatusOr<RowCounter> DatabaseProbeFactory::MakeRowCounter(const v1::Plan& plan) {
  absl::StatusOr<std::shared_ptr<db::Driver>> driver =
      TargetDriver(plan, "to count the rows the run changes");
  if (!driver.ok()) return driver.status();
  if (*driver == nullptr) return RowCounter();
  return RowCounter([driver = *driver](const std::set<std::string>& tables) {
    return CountRows(*driver, tables);
  });
}

absl::StatusOr<ValueReader> DatabaseProbeFactory::MakeValueReader(const v1::Plan& plan) {
  absl::StatusOr<std::shared_ptr<db::Driver>> driver =
      TargetDriver(plan, "to read the workload's invariants");
  if (!driver.ok()) return driver.status();
  if (*driver == nullptr) return ValueReader();
  return ValueReader([driver = *driver](const std::vector<std::string>& queries) {
    return ReadValues(*driver, queries);
  });
}

}  // namespace dbload
