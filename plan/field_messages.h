#ifndef DBLOAD_PLAN_FIELD_MESSAGES_H_
#define DBLOAD_PLAN_FIELD_MESSAGES_H_

// How a message about one field of a plan reads, whether the plan was read from YAML (each field
// at its file position, or a --set) or built in code (just the source's name):
// `plans/pg.yaml:3:12: target.port: expected an integer from 1 to 65535, got "abc"`. The YAML
// reader (plan/plan_parser.h) and the checks on the proto (plan/plan_validation.h) share it, so
// that a message reads the same whoever finds the problem.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace dbload {

// Where a value came from: a place in the file, or a --set on the command line.
struct FieldLocation {
  std::string text;            // "plans/pg.yaml:3:12", or just the source name
  bool from_override = false;  // a --set value: `text` is the source name
};

// Where the field at a dotted path came from, as the one who read the plan knows it.
using FieldLocator = std::function<FieldLocation(absl::string_view field_path)>;

// "where: field.path: message", or "source: --set field.path: message" for a --set value.
std::string FieldErrorText(const FieldLocation& where, absl::string_view field_path,
                           absl::string_view message);

// `parent.key`, with a key that is not a plain short name quoted ("workload_options.\"a b\"").
std::string JoinFieldPath(absl::string_view parent, absl::string_view key);

// "an integer from 1 to 65535", for messages about integer fields.
std::string IntegerRange(uint64_t min, uint64_t max);

}  // namespace dbload

#endif  // DBLOAD_PLAN_FIELD_MESSAGES_H_
