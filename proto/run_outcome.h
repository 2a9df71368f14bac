#ifndef DBLOAD_PROTO_RUN_OUTCOME_H_
#define DBLOAD_PROTO_RUN_OUTCOME_H_

// How a run ended, as code decides on it: the RunState, EndReasonKind and SuiteRunState enums of
// the wire and of the files, their words for people, and the one place that reads the words of
// what was written before the enums (older report files, suite indexes, agents, coordinators).

#include <string>

#include "absl/strings/string_view.h"
#include "dbload/v1/agent.pb.h"
#include "dbload/v1/control.pb.h"
#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// The words the text fields have always said: "running", "finished", "stopped", "interrupted",
// "aborted", "failed"; "" for UNSPECIFIED.
std::string RunStateText(dbload::v1::RunState state);
// "pending", "finished", "degraded", "aborted", "failed", "interrupted"; "" for UNSPECIFIED.
std::string SuiteRunStateText(dbload::v1::SuiteRunState state);

// What was written before the enums, read once: the enum that `state` or `end_reason` text means
// (UNSPECIFIED for text it does not know, and for ""). An end reason is judged by how it begins,
// as it always was: a run's reasons are its agents' joined ("duration, queries"), and a lost
// agent adds "; degraded: …".
dbload::v1::RunState RunStateFromText(absl::string_view state);
dbload::v1::EndReasonKind EndReasonKindFromText(absl::string_view end_reason);
dbload::v1::SuiteRunState SuiteRunStateFromText(absl::string_view state);

// A message's enum, or, when it is unset (the message is older than the enum), the one its text
// means.
template <typename Message>
dbload::v1::RunState RunStateOf(const Message& message) {
  return message.run_state() != dbload::v1::RUN_STATE_UNSPECIFIED
             ? message.run_state()
             : RunStateFromText(message.state());
}
template <typename Message>
dbload::v1::EndReasonKind EndReasonKindOf(const Message& message) {
  return message.end_reason_kind() != dbload::v1::END_REASON_UNSPECIFIED
             ? message.end_reason_kind()
             : EndReasonKindFromText(message.end_reason());
}
dbload::v1::SuiteRunState SuiteRunStateOf(const dbload::v1::SuiteRun& run);

// Sets the enum and its words together.
void SetRunState(dbload::v1::RunReport& report, dbload::v1::RunState state);
void SetSuiteRunState(dbload::v1::SuiteRun& run, dbload::v1::SuiteRunState state);

// A report or suite index read from a file: unset enums are filled from the text, so that what
// reads it further finds them set.
void FillEnumsFromText(dbload::v1::RunReport& report);
void FillEnumsFromText(dbload::v1::SuiteIndex& index);

}  // namespace dbload

#endif  // DBLOAD_PROTO_RUN_OUTCOME_H_
