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
// Defaults, applied by ParsePlan (see ApplyPlanDefaults):
//   target.host  127.0.0.1 for postgresql/mysql when neither host nor socket is given
//   target.port  5432 (postgresql) or 3306 (mysql) when absent, also with a socket (PostgreSQL
//                names its socket file after the port)
//   target.pool  load.closed.clients for a closed loop (with stages: the most clients any stage
//                runs), 8 for an open loop
//   abort.for    5s when an abort map is given without it
//   stages.N.knee.refine  3
//   load.open.arrival  uniform
//   seed         1 when absent, so that every run is reproducible
// No stop rule is ever defaulted: a plan must bound its run by stop.duration, stop.queries or
// both.
//
// target.host may name any machine: whether load may go there is decided by the process that
// connects (--allow-target, net/target_allow_list.h), not by the plan.

// Upper bounds that protect the machine from a typo ("rate: 2000000000").
inline constexpr double kMaxOpenRate = 100'000'000;
inline constexpr uint32_t kMaxClosedClients = 100'000;
inline constexpr uint32_t kMaxPool = 100'000;
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

// Fills the defaults listed above into a plan built in code (ParsePlan already did this).
// The seed is not defaulted here: in a proto, 0 is a valid seed and cannot be told from "unset".
void ApplyPlanDefaults(dbload::v1::Plan& plan);

// Semantic checks of a complete plan (ParsePlan calls it after applying defaults): returns the
// first problem, naming the field: `plan.yaml: load.open.rate: must be > 0, got -5`.
absl::Status ValidatePlan(const dbload::v1::Plan& plan, std::string_view source_name);

// Durations: "250ms", "5s", "1m", "1m30s", "2h", "100us" (or "100µs"), "1500ns", "1.5s"; a bare
// integer means seconds ("30"). A leading '-' gives a negative duration, which callers reject
// where it makes no sense (with a better message than a syntax error would give).
absl::StatusOr<int64_t> ParseDurationNanos(std::string_view duration);

// Renders nanoseconds in the largest unit that divides them exactly ("1500ms", "2h", "-5s"):
// ParseDurationNanos(FormatDurationNanos(x)) == x.
std::string FormatDurationNanos(int64_t nanos);

// Reads the password of a target: from password_file (trailing newlines stripped; an error if
// unreadable, naming the file but never showing its content), or from the environment variable
// named by password_env (an error if unset), or "" if neither is given. Both given is an error.
absl::StatusOr<std::string> ReadTargetPassword(const dbload::v1::Target& target);

}  // namespace dbload

#endif  // DBLOAD_PLAN_PLAN_PARSER_H_
