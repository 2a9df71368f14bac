#include "suite/suite_index.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/bounded_file.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/run_outcome.h"
#include "report/report.h"

namespace dbload {

absl::Status MatchSuites(const v1::Suite& recorded, const v1::Suite& given) {
  google::protobuf::util::MessageDifferencer differencer;
  std::string differences;
  differencer.ReportDifferencesToString(&differences);
  if (differencer.Compare(recorded, given)) return absl::OkStatus();
  std::vector<std::string> lines = absl::StrSplit(differences, '\n', absl::SkipEmpty());
  constexpr size_t kShown = 5;
  const size_t more = lines.size() > kShown ? lines.size() - kShown : 0;
  if (more > 0) lines.resize(kShown);
  return absl::FailedPreconditionError(absl::StrCat(
      "the suite differs from the one recorded (recorded -> now): ", absl::StrJoin(lines, "; "),
      more > 0 ? absl::StrCat("; and ", more, " more") : ""));
}

absl::Status SaveSuiteIndex(const std::string& path, const v1::SuiteIndex& index) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (auto status = google::protobuf::util::MessageToJsonString(index, &json, options);
      !status.ok()) {
    return absl::InternalError(absl::StrCat("cannot render the suite index: ", status.ToString()));
  }
  return WriteFileAtomically(path, json);
}

absl::StatusOr<v1::SuiteIndex> ParseSuiteIndexJson(const std::string& json) {
  v1::SuiteIndex index;
  if (auto status = google::protobuf::util::JsonStringToMessage(json, &index); !status.ok()) {
    return absl::DataLossError(absl::StrCat("not a dbload suite index: ", status.ToString()));
  }
  if (index.format_version() != kSuiteIndexFormat) {
    return absl::FailedPreconditionError(
        absl::StrCat("suite index format version ", index.format_version(),
                     " is not supported (this dbload reads ", kSuiteIndexFormat, ")"));
  }
  FillEnumsFromText(index);  // an index written before the enums: from its words
  return index;
}

absl::StatusOr<v1::SuiteIndex> LoadSuiteIndex(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, size_t{64} << 20, "suite index");
  if (!text.ok()) return text.status();
  absl::StatusOr<v1::SuiteIndex> index = ParseSuiteIndexJson(*text);
  if (!index.ok()) {
    return absl::Status(index.status().code(), absl::StrCat(path, ": ", index.status().message()));
  }
  return index;
}

}  // namespace dbload
