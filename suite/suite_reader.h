#ifndef DBLOAD_SUITE_SUITE_READER_H_
#define DBLOAD_SUITE_SUITE_READER_H_

// Reading the suite file's own fields (not those inside a plan, which the plan parser reads):
// the fields each level has, and the reader of names, counts, switches and load points with
// their positions. Internal to the suite parser (suite_parser.cc, suite_override.cc); it exposes
// yaml-cpp, so only .cc files of suite/ and tests include it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace dbload::suite_yaml {

// Dotted paths of the suite's tree that a --set gave ("settings.repetitions", "cases.0.points").
using Paths = std::set<std::string, std::less<>>;

// The fields of the suite, of its settings, of a target and of a case.
extern const std::vector<std::string> kSuiteFields;
extern const std::vector<std::string> kSettingsFields;
extern const std::vector<std::string> kTargetFields;
extern const std::vector<std::string> kCaseFields;
// Names of suites, targets and cases become directory names.
inline constexpr size_t kMaxName = 64;

// The suite's own fields (not those inside a plan, which the plan parser checks): positions,
// unknown keys with suggestions, and --set values named as such.
class SuiteReader {
 public:
  // `overridden`: the paths --set gave, whose nodes have no position in the file.
  SuiteReader(std::string source, const Paths& overridden)
      : source_(std::move(source)), overridden_(overridden) {}

  const std::string& source() const { return source_; }

  // "FILE:LINE:COLUMN: PATH: message", or "FILE: --set PATH: message" for a node a --set gave.
  absl::Status Error(const YAML::Node& node, absl::string_view path,
                     absl::string_view message) const;

  // The entries of a map with the allowed keys, in file order; duplicates and unknown keys are
  // errors at the key.
  absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> ReadMap(
      const YAML::Node& node, const std::string& path,
      const std::vector<std::string>& fields) const;

  // A name that can name a directory: at most kMaxName letters, digits, '.', '_', '-', not
  // starting with '.'.
  absl::StatusOr<std::string> ReadName(const YAML::Node& node, const std::string& path) const;
  absl::StatusOr<std::string> ReadText(const YAML::Node& node, const std::string& path) const;
  // An integer in [min, max].
  absl::StatusOr<uint32_t> ReadCount(const YAML::Node& node, const std::string& path, uint32_t min,
                                     uint32_t max) const;
  // true/yes or false/no, in any case.
  absl::StatusOr<bool> ReadBool(const YAML::Node& node, const std::string& path) const;
  // A load point: a finite number > 0.
  absl::StatusOr<double> ReadPoint(const YAML::Node& node, const std::string& path) const;

  // The message for an unknown field `key` of `parent` ("" for the suite itself): "did you
  // mean" the nearest field, else the fields there are.
  static std::string UnknownField(absl::string_view key, absl::string_view parent,
                                  const std::vector<std::string>& fields);

 private:
  // Whether `path`, or a map it lies in, was given by a --set.
  bool FromOverride(absl::string_view path) const;

  std::string source_;
  const Paths& overridden_;
};

}  // namespace dbload::suite_yaml

#endif  // DBLOAD_SUITE_SUITE_READER_H_
