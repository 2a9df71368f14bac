#include "coordinator/loss_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace dbload {
namespace {

using ::testing::HasSubstr;

TEST(LossBound, OpenLoopOwesWhatWasDueAndItsRateUntilItStopped) {
  // 1,500/s, last report at 4 s with 6,000 arrivals wanted and 5,990 completed (10 late, 3 of
  // them in flight), lost at 4.5 s, dead-man timeout 5 s.
  const v1::LostAgent lost = BoundLostAgent({.name = "a2",
                                             .why = "disconnected",
                                             .last_report_s = 4,
                                             .lost_s = 4.5,
                                             .dead_man_s = 5,
                                             .open_loop = true,
                                             .rate = 1500,
                                             .wanted_arrivals = 6000,
                                             .completed = 5990,
                                             .in_flight = 3});
  EXPECT_TRUE(lost.bound_known());
  EXPECT_EQ(lost.unreported_if_stopped(), 10u + 750 + 1);
  EXPECT_NEAR(static_cast<double>(lost.unreported_max()), 10 + 1500 * 5.6 + 1, 1);
  EXPECT_THAT(lost.bound_note(), HasSubstr("1500/s × 0.50 s"));
}

TEST(LossBound, PoissonArrivalsAddFourStandardDeviations) {
  const v1::LostAgent lost = BoundLostAgent(
      {.last_report_s = 1, .lost_s = 2, .open_loop = true, .poisson = true, .rate = 400});
  EXPECT_EQ(lost.unreported_if_stopped(), 400u + 4 * 20 + 1);
}

TEST(LossBound, ClosedLoopUsesTheBestPerClientRateOrSaysItIsUnknown) {
  v1::RunReport report;
  for (const auto& [rate, clients] : {std::pair{300.0, 3u}, std::pair{500.0, 4u}}) {
    v1::IntervalSample& sample = *report.add_intervals();
    sample.set_achieved_rate(rate);
    sample.set_executed(static_cast<uint64_t>(rate));
    sample.set_clients(clients);
  }
  EXPECT_DOUBLE_EQ(BestPerClientRate(report), 125);
  const v1::LostAgent lost = BoundLostAgent(
      {.last_report_s = 3, .lost_s = 5, .open_loop = false, .clients = 2, .per_client_rate = 125});
  EXPECT_TRUE(lost.bound_known());
  EXPECT_EQ(lost.unreported_if_stopped(), 2u * (250 + 1));
  const v1::LostAgent unknown =
      BoundLostAgent({.last_report_s = 0, .lost_s = 1, .open_loop = false, .clients = 2});
  EXPECT_FALSE(unknown.bound_known());
  EXPECT_THAT(unknown.bound_note(), HasSubstr("unknown"));
}

v1::RunReport ProbedReport(double first_commits, double last_commits) {
  v1::RunReport report;
  report.mutable_plan()->mutable_target()->set_driver("postgresql");
  report.mutable_plan()->mutable_target()->set_database("bench");
  v1::ProbeSample& first = *report.add_probe_samples();
  first.set_elapsed_s(-0.01);
  (*first.mutable_values())["postgresql/xact_commit"] = first_commits;
  v1::ProbeSample& last = *report.add_probe_samples();
  last.set_elapsed_s(10.2);
  (*last.mutable_values())["postgresql/xact_commit"] = last_commits;
  return report;
}

TEST(LossBound, CommitsReconcileWithinTheLostAgentsBoundOrAreNotExplained) {
  // No agent lost: the database's count is the report's plus the connections' own.
  v1::RunReport exact = ProbedReport(1000, 1000 + 9000 + 18);
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, exact);
  EXPECT_TRUE(exact.commit_reconciliation().available());
  EXPECT_EQ(exact.commit_reconciliation().connections_opened(), 6);
  EXPECT_EQ(exact.commit_reconciliation().connection_commits(), 18);
  EXPECT_EQ(exact.commit_reconciliation().difference(), 0);
  EXPECT_EQ(exact.commit_reconciliation().verdict(), "matches");

  v1::RunReport lost = ProbedReport(1000, 1000 + 9000 + 18 + 300);
  v1::LostAgent& agent = *lost.add_lost_agents();
  agent.set_bound_known(true);
  agent.set_unreported_if_stopped(400);
  agent.set_unreported_max(2000);
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, lost);
  EXPECT_EQ(lost.commit_reconciliation().database_commits(), 9318);
  EXPECT_EQ(lost.commit_reconciliation().difference(), 300);
  EXPECT_EQ(lost.commit_reconciliation().lost_bound(), 2000u);
  EXPECT_EQ(lost.commit_reconciliation().verdict(), "within the lost agents' bound");

  agent.set_unreported_max(299);
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, lost);
  EXPECT_EQ(lost.commit_reconciliation().verdict(), "not explained");
  // Fewer commits than the report counts is never explained by a loss.
  v1::RunReport fewer = ProbedReport(1000, 1000 + 8000);
  *fewer.add_lost_agents() = agent;
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, fewer);
  EXPECT_EQ(fewer.commit_reconciliation().verdict(), "not explained");
}

// Fewer commits than the report's while the last reading still lists dbload's sessions: their
// backends had not published their last counts. Not a loss, not a match: incomplete.
TEST(LossBound, FewerCommitsWithSessionsStillOpenAtTheLastReadingAreIncomplete) {
  v1::RunReport open = ProbedReport(1000, 1000 + 8000);
  (*open.mutable_probe_samples(1)->mutable_values())["postgresql/dbload_sessions"] = 5;
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, open);
  EXPECT_EQ(open.commit_reconciliation().difference(), -1018);
  EXPECT_EQ(open.commit_reconciliation().verdict(),
            "incomplete: sessions still open at the last reading");
  EXPECT_THAT(open.commit_reconciliation().note(),
              HasSubstr("still listed 5 of dbload's sessions in database bench"));

  // None left: the count is whole, and short of the report's.
  (*open.mutable_probe_samples(1)->mutable_values())["postgresql/dbload_sessions"] = 0;
  ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, open);
  EXPECT_EQ(open.commit_reconciliation().verdict(), "not explained");
}

// Every connection runs the target's set-up (isolation, session statements) as transactions of
// their own; the coordinator's row-check sessions (here: invariants, before and after) commit
// their start-up and set-up, inside the probe's window or not: a surplus up to that is theirs.
TEST(LossBound, SetUpStatementsAndTheRowChecksSessionsAreCounted) {
  const auto reconcile = [](int64_t surplus, bool invariants) {
    v1::RunReport report = ProbedReport(1000, 1000 + 9000 + 6 * 4 + 12 + surplus);
    v1::Target& target = *report.mutable_plan()->mutable_target();
    target.set_isolation(v1::SERIALIZABLE);
    target.add_session("SET work_mem = '8MB'");
    target.add_session("SET jit = off");
    if (invariants) report.add_invariants()->set_name("sum");
    ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1, report);
    return report.commit_reconciliation();
  };
  const v1::CommitReconciliation exact = reconcile(0, false);
  EXPECT_EQ(exact.setup_statements(), 3);
  EXPECT_EQ(exact.connection_commits(), 36);
  EXPECT_EQ(exact.row_check_commits_at_most(), 0);
  EXPECT_EQ(exact.verdict(), "matches");
  EXPECT_EQ(reconcile(1, false).verdict(), "not explained");
  // Two sessions (before, after), each 1 start-up + 3 set-up.
  const v1::CommitReconciliation checked = reconcile(5, true);
  EXPECT_EQ(checked.row_check_commits_at_most(), 8);
  EXPECT_EQ(checked.verdict(), "within the row check's sessions");
  EXPECT_THAT(checked.note(), HasSubstr("on 2 sessions of its own"));
  EXPECT_EQ(reconcile(8, true).verdict(), "within the row check's sessions");
  EXPECT_EQ(reconcile(9, true).verdict(), "not explained");
  EXPECT_EQ(reconcile(-1, true).verdict(), "not explained");
}

// Autovacuum's workers visit each database once per autovacuum_naptime and commit 2 there when
// they vacuum nothing: a surplus no larger than that many visits can pay is theirs.
TEST(LossBound, CommitsBeyondTheReportsWithinAutovacuumsVisitsAreItsOwn) {
  const auto reconcile = [](int64_t surplus, const std::string& autovacuum,
                            const std::string& naptime, double last_reading_s) {
    v1::RunReport report = ProbedReport(1000, 1000 + 9000 + 18 + surplus);
    report.mutable_probe_samples(1)->set_elapsed_s(last_reading_s);
    auto& settings = *report.mutable_manifest()->mutable_server_settings();
    settings["autovacuum"] = autovacuum;
    settings["autovacuum_naptime"] = naptime;
    ReconcileCommits(9000, {.connections_opened = 6, .statements_prepared = 6}, true, 10.1,
                     report);
    return report.commit_reconciliation();
  };
  // 10.21 s between the readings, one visit a minute: at most 1.
  v1::CommitReconciliation one = reconcile(2, "on", "1min", 10.2);
  EXPECT_EQ(one.autovacuum_visits_at_most(), 1);
  EXPECT_EQ(one.verdict(), "within autovacuum's visits");
  EXPECT_THAT(one.note(), HasSubstr("autovacuum_naptime 1min: in the 10.2 s between the probe's"));
  EXPECT_EQ(reconcile(3, "on", "1min", 10.2).verdict(), "not explained");
  EXPECT_EQ(reconcile(2, "off", "1min", 10.2).verdict(), "not explained");
  EXPECT_EQ(reconcile(2, "off", "1min", 10.2).autovacuum_visits_at_most(), 0);
  EXPECT_EQ(reconcile(0, "on", "1min", 10.2).verdict(), "matches");
  // 130.01 s at one visit a minute: at most 3 (6 commits); at one per 15 s, at most 9.
  EXPECT_EQ(reconcile(6, "on", "1min", 130).verdict(), "within autovacuum's visits");
  EXPECT_EQ(reconcile(8, "on", "1min", 130).verdict(), "not explained");
  EXPECT_EQ(reconcile(8, "on", "15s", 130).autovacuum_visits_at_most(), 9);
  EXPECT_EQ(reconcile(8, "on", "15s", 130).verdict(), "within autovacuum's visits");
  EXPECT_EQ(reconcile(2, "on", "soon", 10.2).verdict(), "not explained");
  // Fewer commits than the report counts are never autovacuum's.
  EXPECT_EQ(reconcile(-2, "on", "1min", 10.2).verdict(), "not explained");
}

TEST(LossBound, NoReconciliationWithoutReadingsAroundTheLoadOrOnMySql) {
  v1::RunReport early = ProbedReport(0, 10);
  ReconcileCommits(10, {}, true, 11, early);  // the last reading (10.2 s) is before the load's end
  EXPECT_FALSE(early.commit_reconciliation().available());
  EXPECT_THAT(early.commit_reconciliation().note(), HasSubstr("before the load ended"));
  v1::RunReport mysql = ProbedReport(0, 10);
  mysql.mutable_plan()->mutable_target()->set_driver("mysql");
  ReconcileCommits(10, {}, true, 10, mysql);
  v1::RunReport late = ProbedReport(0, 10);
  ReconcileCommits(10, {}, /*first_before_load=*/false, 10, late);
  EXPECT_FALSE(late.commit_reconciliation().available());
  EXPECT_THAT(late.commit_reconciliation().note(), HasSubstr("after the load started"));
  EXPECT_FALSE(mysql.commit_reconciliation().available());
  EXPECT_THAT(mysql.commit_reconciliation().note(), HasSubstr("Handler_commit"));
}

}  // namespace
}  // namespace dbload
