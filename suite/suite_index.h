#ifndef DBLOAD_SUITE_SUITE_INDEX_H_
#define DBLOAD_SUITE_SUITE_INDEX_H_

// DIR/suite.json, the index of a suite's directory: the suite as it was read, how, and each
// run's state and report; read back by --resume and by the suite report.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// For --resume: OK when `given` (the suite file now) is the suite `recorded` in DIR/suite.json,
// else FailedPrecondition listing the first differences ("cases[0].points[1]: 4 -> 8").
absl::Status MatchSuites(const dbload::v1::Suite& recorded, const dbload::v1::Suite& given);

// DIR/suite.json: versioned JSON (proto field names), written atomically.
inline constexpr uint32_t kSuiteIndexFormat = 1;
absl::Status SaveSuiteIndex(const std::string& path, const dbload::v1::SuiteIndex& index);
absl::StatusOr<dbload::v1::SuiteIndex> LoadSuiteIndex(const std::string& path);
// The index from its JSON; errors say what is wrong, the caller names the file.
absl::StatusOr<dbload::v1::SuiteIndex> ParseSuiteIndexJson(const std::string& json);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_INDEX_H_
