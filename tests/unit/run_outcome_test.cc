// The run's outcome as code decides on it: the enums from the words of files and peers written
// before them (proto/run_outcome.h), and the exit code `dbload` gives each (cli/control_client.h).
#include "proto/run_outcome.h"

#include <gtest/gtest.h>

#include "cli/control_client.h"
#include "process/exit_codes.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

TEST(RunOutcomeTest, RunStateFromTheWordsOfOlderFiles) {
  EXPECT_EQ(RunStateFromText("running"), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(RunStateFromText("finished"), v1::RUN_STATE_FINISHED);
  EXPECT_EQ(RunStateFromText("stopped"), v1::RUN_STATE_STOPPED);
  EXPECT_EQ(RunStateFromText("interrupted"), v1::RUN_STATE_INTERRUPTED);
  EXPECT_EQ(RunStateFromText("aborted"), v1::RUN_STATE_ABORTED);
  EXPECT_EQ(RunStateFromText("failed"), v1::RUN_STATE_FAILED);
  EXPECT_EQ(RunStateFromText(""), v1::RUN_STATE_UNSPECIFIED);
  EXPECT_EQ(RunStateFromText("Finished"), v1::RUN_STATE_UNSPECIFIED);
}

TEST(RunOutcomeTest, RunStateWordsRoundTrip) {
  for (int value = v1::RunState_MIN; value <= v1::RunState_MAX; ++value) {
    const auto state = static_cast<v1::RunState>(value);
    EXPECT_EQ(RunStateFromText(RunStateText(state)), state) << value;
  }
  for (int value = v1::SuiteRunState_MIN; value <= v1::SuiteRunState_MAX; ++value) {
    const auto state = static_cast<v1::SuiteRunState>(value);
    EXPECT_EQ(SuiteRunStateFromText(SuiteRunStateText(state)), state) << value;
  }
}

TEST(RunOutcomeTest, EndReasonKindFromHowTheWordsBegin) {
  EXPECT_EQ(EndReasonKindFromText("duration"), v1::END_REASON_DURATION);
  EXPECT_EQ(EndReasonKindFromText("duration, queries"), v1::END_REASON_DURATION);
  EXPECT_EQ(EndReasonKindFromText("queries; degraded: agent a lost (disconnected)"),
            v1::END_REASON_QUERIES);
  EXPECT_EQ(EndReasonKindFromText("knee"), v1::END_REASON_KNEE);
  EXPECT_EQ(EndReasonKindFromText("stopped"), v1::END_REASON_STOPPED);
  EXPECT_EQ(EndReasonKindFromText("stopped: stop requested"), v1::END_REASON_STOPPED);
  EXPECT_EQ(EndReasonKindFromText("interrupted"), v1::END_REASON_INTERRUPTED);
  EXPECT_EQ(EndReasonKindFromText("interrupted: the coordinator stopped during the run"),
            v1::END_REASON_INTERRUPTED);
  EXPECT_EQ(EndReasonKindFromText("aborted: p99 12.0 ms above 10 ms"), v1::END_REASON_ABORTED);
  EXPECT_EQ(EndReasonKindFromText("fatal error 42P01: relation \"t\" does not exist"),
            v1::END_REASON_FATAL_ERROR);
  EXPECT_EQ(EndReasonKindFromText("fatal error: cannot load"), v1::END_REASON_FATAL_ERROR);
  EXPECT_EQ(EndReasonKindFromText("not started: target: connection refused"),
            v1::END_REASON_NOT_STARTED);
  EXPECT_EQ(EndReasonKindFromText("not started"), v1::END_REASON_NOT_STARTED);
  EXPECT_EQ(EndReasonKindFromText("failed: every agent was lost"), v1::END_REASON_AGENTS_LOST);
  EXPECT_EQ(EndReasonKindFromText("failed: report 3 of agent a: gap"), v1::END_REASON_FAILED);
  EXPECT_EQ(EndReasonKindFromText("loaded parts 0-3"), v1::END_REASON_LOADED);
  EXPECT_EQ(EndReasonKindFromText("loaded no parts"), v1::END_REASON_LOADED);
  EXPECT_EQ(EndReasonKindFromText("running"), v1::END_REASON_UNSPECIFIED);
  EXPECT_EQ(EndReasonKindFromText(""), v1::END_REASON_UNSPECIFIED);
}

TEST(RunOutcomeTest, SuiteRunStateFromTheWordsOfOlderIndexes) {
  EXPECT_EQ(SuiteRunStateFromText("pending"), v1::SUITE_RUN_STATE_PENDING);
  EXPECT_EQ(SuiteRunStateFromText("degraded"), v1::SUITE_RUN_STATE_DEGRADED);
  EXPECT_EQ(SuiteRunStateFromText("interrupted"), v1::SUITE_RUN_STATE_INTERRUPTED);
  EXPECT_EQ(SuiteRunStateFromText("report missing"), v1::SUITE_RUN_STATE_UNSPECIFIED);
}

TEST(RunOutcomeTest, TheEnumWinsOverTheWords) {
  v1::RunProgress progress;
  progress.set_state("interrupted");  // what the progress says for a stop too
  progress.set_end_reason("stopped");
  EXPECT_EQ(RunStateOf(progress), v1::RUN_STATE_INTERRUPTED);
  progress.set_run_state(v1::RUN_STATE_STOPPED);
  EXPECT_EQ(RunStateOf(progress), v1::RUN_STATE_STOPPED);
  EXPECT_EQ(EndReasonKindOf(progress), v1::END_REASON_STOPPED);
  progress.set_end_reason_kind(v1::END_REASON_ABORTED);
  EXPECT_EQ(EndReasonKindOf(progress), v1::END_REASON_ABORTED);
}

TEST(RunOutcomeTest, AReportReadBackGetsItsEnumsOnce) {
  v1::RunReport report;
  report.set_state("aborted");
  report.set_end_reason("aborted: error rate 0.2 above 0.1");
  FillEnumsFromText(report);
  EXPECT_EQ(report.run_state(), v1::RUN_STATE_ABORTED);
  EXPECT_EQ(report.end_reason_kind(), v1::END_REASON_ABORTED);
  // Set ones are kept, whatever the words say.
  report.set_state("finished");
  FillEnumsFromText(report);
  EXPECT_EQ(report.run_state(), v1::RUN_STATE_ABORTED);

  v1::SuiteIndex index;
  index.add_runs()->set_state("degraded");
  index.add_runs()->set_state("pending");
  FillEnumsFromText(index);
  EXPECT_EQ(index.runs(0).run_state(), v1::SUITE_RUN_STATE_DEGRADED);
  EXPECT_EQ(index.runs(1).run_state(), v1::SUITE_RUN_STATE_PENDING);
}

TEST(RunOutcomeTest, SettingAStateSetsItsWords) {
  v1::RunReport report;
  SetRunState(report, v1::RUN_STATE_STOPPED);
  EXPECT_EQ(report.run_state(), v1::RUN_STATE_STOPPED);
  EXPECT_EQ(report.state(), "stopped");
  v1::SuiteRun run;
  SetSuiteRunState(run, v1::SUITE_RUN_STATE_FAILED);
  EXPECT_EQ(run.run_state(), v1::SUITE_RUN_STATE_FAILED);
  EXPECT_EQ(run.state(), "failed");
}

TEST(RunExitCodeTest, EachOutcomeHasItsExitCode) {
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FINISHED, v1::END_REASON_DURATION, false), kExitOk);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FINISHED, v1::END_REASON_QUERIES, true), kExitDegraded);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_STOPPED, v1::END_REASON_STOPPED, false), kExitInterrupted);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_INTERRUPTED, v1::END_REASON_INTERRUPTED, true),
            kExitInterrupted);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_ABORTED, v1::END_REASON_ABORTED, true), kExitAborted);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FAILED, v1::END_REASON_FATAL_ERROR, false), kExitRunFailed);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FAILED, v1::END_REASON_AGENTS_LOST, true), kExitRunFailed);
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FAILED, v1::END_REASON_FAILED, false), kExitRunFailed);
  // A fatal error decides even where the state does not say failed (an older coordinator).
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FINISHED, v1::END_REASON_FATAL_ERROR, false), kExitRunFailed);
  // A run that never started has no report: a usage-like failure, whatever its state.
  EXPECT_EQ(RunExitCode(v1::RUN_STATE_FAILED, v1::END_REASON_NOT_STARTED, false), kExitUsage);
}

}  // namespace
}  // namespace dbload
