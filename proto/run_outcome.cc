#include "proto/run_outcome.h"

#include <utility>

#include "absl/strings/match.h"

namespace dbload {

namespace {

constexpr std::pair<v1::RunState, absl::string_view> kRunStateWords[] = {
    {v1::RUN_STATE_RUNNING, "running"}, {v1::RUN_STATE_FINISHED, "finished"},
    {v1::RUN_STATE_STOPPED, "stopped"}, {v1::RUN_STATE_INTERRUPTED, "interrupted"},
    {v1::RUN_STATE_ABORTED, "aborted"}, {v1::RUN_STATE_FAILED, "failed"},
};

constexpr std::pair<v1::SuiteRunState, absl::string_view> kSuiteRunStateWords[] = {
    {v1::SUITE_RUN_STATE_PENDING, "pending"},   {v1::SUITE_RUN_STATE_FINISHED, "finished"},
    {v1::SUITE_RUN_STATE_DEGRADED, "degraded"}, {v1::SUITE_RUN_STATE_ABORTED, "aborted"},
    {v1::SUITE_RUN_STATE_FAILED, "failed"},     {v1::SUITE_RUN_STATE_INTERRUPTED, "interrupted"},
};

// How end reasons began before the enum, in the order they are tried: the more specific
// "failed: every agent was lost" before "failed".
constexpr std::pair<absl::string_view, v1::EndReasonKind> kEndReasonBeginnings[] = {
    {"duration", v1::END_REASON_DURATION},
    {"queries", v1::END_REASON_QUERIES},
    {"knee", v1::END_REASON_KNEE},
    {"stopped", v1::END_REASON_STOPPED},
    {"interrupted", v1::END_REASON_INTERRUPTED},
    {"aborted", v1::END_REASON_ABORTED},
    {"fatal", v1::END_REASON_FATAL_ERROR},
    {"not started", v1::END_REASON_NOT_STARTED},
    {"failed: every agent was lost", v1::END_REASON_AGENTS_LOST},
    {"failed", v1::END_REASON_FAILED},
    {"loaded", v1::END_REASON_LOADED},
};

}  // namespace

std::string RunStateText(v1::RunState state) {
  for (const auto& [value, words] : kRunStateWords) {
    if (value == state) return std::string(words);
  }
  return "";
}

std::string SuiteRunStateText(v1::SuiteRunState state) {
  for (const auto& [value, words] : kSuiteRunStateWords) {
    if (value == state) return std::string(words);
  }
  return "";
}

v1::RunState RunStateFromText(absl::string_view state) {
  for (const auto& [value, words] : kRunStateWords) {
    if (words == state) return value;
  }
  return v1::RUN_STATE_UNSPECIFIED;
}

v1::EndReasonKind EndReasonKindFromText(absl::string_view end_reason) {
  for (const auto& [beginning, kind] : kEndReasonBeginnings) {
    if (absl::StartsWith(end_reason, beginning)) return kind;
  }
  return v1::END_REASON_UNSPECIFIED;
}

v1::SuiteRunState SuiteRunStateFromText(absl::string_view state) {
  for (const auto& [value, words] : kSuiteRunStateWords) {
    if (words == state) return value;
  }
  return v1::SUITE_RUN_STATE_UNSPECIFIED;
}

v1::SuiteRunState SuiteRunStateOf(const v1::SuiteRun& run) {
  return run.run_state() != v1::SUITE_RUN_STATE_UNSPECIFIED ? run.run_state()
                                                            : SuiteRunStateFromText(run.state());
}

void SetRunState(v1::RunReport& report, v1::RunState state) {
  report.set_run_state(state);
  report.set_state(RunStateText(state));
}

void SetSuiteRunState(v1::SuiteRun& run, v1::SuiteRunState state) {
  run.set_run_state(state);
  run.set_state(SuiteRunStateText(state));
}

void FillEnumsFromText(v1::RunReport& report) {
  report.set_run_state(RunStateOf(report));
  report.set_end_reason_kind(EndReasonKindOf(report));
}

void FillEnumsFromText(v1::SuiteIndex& index) {
  for (v1::SuiteRun& run : *index.mutable_runs()) run.set_run_state(SuiteRunStateOf(run));
}

}  // namespace dbload
