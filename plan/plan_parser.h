#ifndef DBLOAD_PLAN_PLAN_PARSER_H_
#define DBLOAD_PLAN_PLAN_PARSER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// Plan files are YAML, read into dbload.v1.Plan (plan.proto is the one schema). Every error is
// one line that says where and what: `plans/pg.yaml:3:12: target.port: expected an integer from
// 1 to 65535, got "abc"` — file, 1-based line and column, dotted field path, what was expected,
// what was found. Nothing here throws and nothing exits.
//
// ParsePlan applies the plan's defaults and checks its values with the same code that the
// coordinator and the agents run on the proto alone (plan/plan_validation.h, which lists the
// defaults); what only YAML can tell (a position, an unknown or repeated key, a value written
// as 0, an absent seed) is checked and defaulted here.
//
// The parser is split by the plan's sections: plan_parser.cc (entry points, structure checks),
// plan_yaml_schema (which keys each map may hold), plan_overrides (--set), and plan_converter*
// (the YAML tree into the proto).

// Bounds on the input itself, so that hostile or broken files fail fast and cleanly.
inline constexpr size_t kMaxPlanBytes = size_t{1} << 20;
inline constexpr int kMaxPlanNesting = 64;

// Parses YAML text into a validated Plan with defaults applied. `source_name` (usually the file
// path) prefixes every error.
absl::StatusOr<dbload::v1::Plan> ParsePlan(std::string_view yaml_text,
                                           std::string_view source_name);

// As above, after applying `--set path=value` overrides to the YAML tree (see LoadPlanFile).
absl::StatusOr<dbload::v1::Plan> ParsePlan(std::string_view yaml_text, std::string_view source_name,
                                           const std::vector<std::string>& overrides);

// Reads and parses a plan file; read errors name the path.
absl::StatusOr<dbload::v1::Plan> LoadPlanFile(const std::string& path);

// Applies `--set path=value` overrides ("load.open.rate=2000", "target.port=5433",
// "stop.duration=10s", "workload_options.table_size=100000") to the YAML before conversion, so
// that an override is checked exactly like the same value written in the file. Errors about an
// overridden value say `--set` where a file position would be: `pg.yaml: --set target.port:
// expected an integer from 1 to 65535, got "abc"`. An unknown path is an error naming it.
// Overrides set single values only; missing parent maps are created.
absl::StatusOr<dbload::v1::Plan> LoadPlanFile(const std::string& path,
                                              const std::vector<std::string>& overrides);

// A check of the parsed plan that needs knowledge the parser does not have, e.g. whether the
// workload knows the scenario and its options. It reports the offending field with FieldError
// (base/field_error.h); the parser then prefixes the field's file position, so that such
// errors read like every other: `plan.yaml:13:3: workload_options.colour: unknown …`.
using PlanCheck = std::function<absl::Status(const dbload::v1::Plan&)>;
absl::StatusOr<dbload::v1::Plan> LoadPlanFile(const std::string& path,
                                              const std::vector<std::string>& overrides,
                                              const PlanCheck& check);
absl::StatusOr<dbload::v1::Plan> ParsePlan(std::string_view yaml_text, std::string_view source_name,
                                           const std::vector<std::string>& overrides,
                                           const PlanCheck& check);

}  // namespace dbload

#endif  // DBLOAD_PLAN_PLAN_PARSER_H_
