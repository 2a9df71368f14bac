#include "coordinator/loss_bound.h"

#include <algorithm>
#include <cmath>

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace dbload {

namespace {

uint64_t CeilCount(double value) {
  return value <= 0 ? 0 : static_cast<uint64_t>(std::ceil(value - 1e-6));
}

// A PostgreSQL time setting as current_setting() shows it ("1min", "15s", "500ms", "1h", "1d"),
// in seconds; nothing when it is not one.
std::optional<double> SettingSeconds(absl::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  double value = 0;
  if (digits == 0 || !absl::SimpleAtod(text.substr(0, digits), &value)) return std::nullopt;
  const absl::string_view unit = text.substr(digits);
  for (const auto& [name, seconds] : {std::pair<absl::string_view, double>{"ms", 1e-3},
                                      {"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}}) {
    if (unit == name) return value * seconds;
  }
  return std::nullopt;
}

// The most autovacuum visits to the target database in `window_s` seconds, from the server's
// settings in the manifest: one per autovacuum_naptime (the launcher's pace per database), plus
// one at the window's edge. 0 when autovacuum is off or its settings are unknown.
int64_t AutovacuumVisitsAtMost(const v1::RunManifest& manifest, double window_s) {
  const auto& settings = manifest.server_settings();
  const auto on = settings.find("autovacuum");
  const auto naptime = settings.find("autovacuum_naptime");
  if (on == settings.end() || on->second != "on" || naptime == settings.end()) return 0;
  const std::optional<double> naptime_s = SettingSeconds(naptime->second);
  if (!naptime_s || *naptime_s <= 0) return 0;
  return static_cast<int64_t>(std::floor(std::max(0.0, window_s) / *naptime_s)) + 1;
}

}  // namespace

v1::LostAgent BoundLostAgent(const LostAgentFacts& facts) {
  v1::LostAgent lost;
  lost.set_name(facts.name);
  lost.set_why(facts.why);
  lost.set_last_report_s(facts.last_report_s);
  lost.set_lost_s(facts.lost_s);
  lost.set_dead_man_s(facts.dead_man_s);
  // The agent's clock starts once its sessions are ready, after the run's: its elapsed time
  // ends no later on the run's clock than it says, so this span is never too short.
  const double stopped_s = std::max(0.0, facts.lost_s - facts.last_report_s);
  const double cut_off_s = stopped_s + facts.dead_man_s + kDeadManSlackS;
  if (facts.open_loop) {
    lost.set_rate(facts.rate);
    // Due before its last report and not completed then: in flight, or waiting for a connection.
    const double owed = std::max(facts.wanted_arrivals - static_cast<double>(facts.completed),
                                 static_cast<double>(facts.in_flight));
    auto bound = [&](double seconds) {
      const double arrivals = facts.rate * seconds;
      const double spread = facts.poisson ? 4 * std::sqrt(arrivals) + 1 : 1;
      return CeilCount(owed + arrivals + spread);
    };
    lost.set_bound_known(true);
    lost.set_unreported_if_stopped(bound(stopped_s));
    lost.set_unreported_max(bound(cut_off_s));
    lost.set_bound_note(absl::StrFormat(
        "%.0f due and not completed at its last report (%.0f in flight) + %.6g/s × %.2f s until "
        "it was lost%s, or × %.2f s if it ran on until its dead-man timeout",
        owed, static_cast<double>(facts.in_flight), facts.rate, stopped_s,
        facts.poisson ? " (+4 standard deviations of Poisson arrivals)" : "", cut_off_s));
    return lost;
  }
  lost.set_clients(facts.clients);
  lost.set_per_client_rate(facts.per_client_rate);
  if (facts.per_client_rate <= 0) {
    lost.set_bound_known(false);
    lost.set_bound_note(
        "unknown: a closed loop runs as fast as the database answers, and no interval of the run "
        "measured a rate per client to bound it by");
    return lost;
  }
  auto bound = [&](double seconds) {
    return CeilCount(facts.clients * (facts.per_client_rate * seconds + 1));
  };
  lost.set_bound_known(true);
  lost.set_unreported_if_stopped(bound(stopped_s));
  lost.set_unreported_max(bound(cut_off_s));
  lost.set_bound_note(absl::StrFormat(
      "%d clients × (1 in flight + %.6g/s, the best per-client rate of any interval, × %.2f s "
      "until it was lost, or × %.2f s if it ran on until its dead-man timeout); an estimate: a "
      "closed loop's rate follows the database's latency",
      facts.clients, facts.per_client_rate, stopped_s, cut_off_s));
  return lost;
}

double BestPerClientRate(const v1::RunReport& report) {
  double best = 0;
  for (const v1::IntervalSample& sample : report.intervals()) {
    if (sample.clients() == 0 || sample.executed() == 0) continue;
    best = std::max(best, sample.achieved_rate() / sample.clients());
  }
  return best;
}

void ReconcileCommits(int64_t report_commits, ConnectionSetUp set_up, bool first_before_load,
                      double load_end_s, v1::RunReport& report) {
  v1::CommitReconciliation& out = *report.mutable_commit_reconciliation();
  out.Clear();
  const std::string& driver = report.plan().target().driver();
  if (driver != "postgresql") {
    out.set_note(
        driver == "mysql"
            ? "MySQL and MariaDB count no committed transactions as such: Handler_commit counts "
              "every storage engine's and the binary log's commits (several per transaction, one "
              "per autocommitted statement), Com_commit only explicit COMMIT statements"
            : "the target has no commit counter");
    return;
  }
  constexpr char kCounter[] = "postgresql/xact_commit";
  constexpr char kLoadSessions[] = "postgresql/dbload_sessions";
  out.set_counter(kCounter);
  const v1::ProbeSample* first = nullptr;
  const v1::ProbeSample* last = nullptr;
  for (const v1::ProbeSample& sample : report.probe_samples()) {
    if (!sample.values().contains(kCounter)) continue;
    if (first == nullptr) first = &sample;
    last = &sample;
  }
  if (first == nullptr) {
    out.set_note(absl::StrCat("the probe read no xact_commit",
                              report.probe_error().empty() ? "" : ": ", report.probe_error()));
    return;
  }
  if (!first_before_load) {
    out.set_note("the probe's first reading came after the load started");
    return;
  }
  if (last->elapsed_s() < load_end_s) {
    out.set_note(absl::StrFormat(
        "the probe's last reading (at %.1f s) came before the load ended (at %.1f s)",
        last->elapsed_s(), load_end_s));
    return;
  }
  out.set_available(true);
  out.set_note(absl::StrCat(
      "pg_stat_database.xact_commit of database ", report.plan().target().database(),
      " counts every transaction committed in it by any session: the agents' (one per "
      "transaction, or per statement run outside one), their connections' start-up and "
      "statement preparation (connection commits: 1 per connection opened, reconnects and the "
      "sessions that read samples and capture EXPLAIN plans included, and 2 per statement "
      "prepared; those sessions' reads and EXPLAINs are rolled back), other clients', and the "
      "server's autovacuum workers' (each visit to the database commits at least 2, one visit "
      "per autovacuum_naptime, 1 min by default, whether it vacuums anything or not); not the "
      "probe's own (it reads from database postgres). A backend publishes its counts when idle, "
      "at most once a second, and when it exits"));
  const int64_t database = static_cast<int64_t>(
      std::llround(last->values().at(kCounter) - first->values().at(kCounter)));
  out.set_database_commits(database);
  out.set_report_commits(report_commits);
  // A backend's start-up reads the catalogs in a transaction of its own; each set-up statement
  // (isolation, SET …) is one; a preparation is two (Parse + Sync, and the Describe + Sync that
  // reads the parameter count).
  const v1::Target& target = report.plan().target();
  const int64_t setup_statements =
      (target.isolation() != v1::ISOLATION_UNSPECIFIED ? 1 : 0) + target.session_size();
  out.set_setup_statements(setup_statements);
  const int64_t connection_commits =
      set_up.connections_opened * (1 + setup_statements) + 2 * set_up.statements_prepared;
  // The row check reads on sessions of its own, one per kind (row counts, invariants), before
  // the load and after it: when the probe reads relative to their start-up is not fixed.
  const int64_t row_check_sessions =
      2 * ((report.row_changes_size() > 0 ? 1 : 0) + (report.invariants_size() > 0 ? 1 : 0));
  out.set_row_check_commits_at_most(row_check_sessions * (1 + setup_statements));
  out.set_connections_opened(set_up.connections_opened);
  out.set_statements_prepared(set_up.statements_prepared);
  out.set_connection_commits(connection_commits);
  const int64_t difference = database - report_commits - connection_commits;
  out.set_difference(difference);
  bool bound_known = true;
  for (const v1::LostAgent& lost : report.lost_agents()) {
    out.set_lost_bound(out.lost_bound() + lost.unreported_max());
    out.set_lost_bound_if_stopped(out.lost_bound_if_stopped() + lost.unreported_if_stopped());
    bound_known = bound_known && lost.bound_known();
  }
  const double window_s = last->elapsed_s() - first->elapsed_s();
  const auto load_sessions = last->values().find(kLoadSessions);
  const int64_t sessions_still_open =
      load_sessions == last->values().end() ? 0 : std::llround(load_sessions->second);
  out.set_autovacuum_visits_at_most(AutovacuumVisitsAtMost(report.manifest(), window_s));
  if (difference == 0) {
    out.set_verdict("matches");
  } else if (difference > 0 && report.lost_agents_size() > 0 &&
             (!bound_known || static_cast<uint64_t>(difference) <= out.lost_bound())) {
    out.set_verdict(bound_known ? "within the lost agents' bound"
                                : "not explained: a lost agent's bound is unknown");
  } else if (difference > 0 && difference <= out.row_check_commits_at_most()) {
    out.set_verdict("within the row check's sessions");
    out.set_note(absl::StrFormat(
        "the coordinator read the row counts and invariants before and after the load on %d "
        "sessions of its own, their reads rolled back; their start-up and set-up, at most %d "
        "commits, may fall between the probe's first and last readings. %s",
        row_check_sessions, out.row_check_commits_at_most(), out.note()));
  } else if (difference > 0 &&
             difference <= 2 * out.autovacuum_visits_at_most() + out.row_check_commits_at_most()) {
    out.set_verdict("within autovacuum's visits");
    out.set_note(absl::StrFormat(
        "autovacuum is on with autovacuum_naptime %s: in the %.1f s between the probe's first "
        "and last readings its workers can have visited database %s %d times, each visit "
        "committing 2 transactions there when it vacuums nothing (measured)%s; the other "
        "commits match. %s",
        report.manifest().server_settings().at("autovacuum_naptime"), window_s,
        report.plan().target().database(), out.autovacuum_visits_at_most(),
        out.row_check_commits_at_most() == 0
            ? ""
            : absl::StrFormat(", and the row check's %d sessions at most %d", row_check_sessions,
                              out.row_check_commits_at_most()),
        out.note()));
  } else if (difference < 0 && sessions_still_open > 0) {
    out.set_verdict("incomplete: sessions still open at the last reading");
    out.set_note(absl::StrFormat(
        "the probe's last reading (at %.1f s) still listed %d of dbload's sessions in database "
        "%s: a backend publishes its last counts as it exits, so those of the sessions still "
        "open may be missing from the database's count (the coordinator waits a few seconds "
        "after the load for them to leave). %s",
        last->elapsed_s(), sessions_still_open, report.plan().target().database(), out.note()));
  } else {
    out.set_verdict("not explained");
  }
}

}  // namespace dbload
