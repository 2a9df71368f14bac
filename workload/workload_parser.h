#ifndef DBLOAD_WORKLOAD_WORKLOAD_PARSER_H_
#define DBLOAD_WORKLOAD_WORKLOAD_PARSER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// Workload files are YAML whose keys are the field names of dbload.v1.WorkloadSpec
// (proto/dbload/v1/workload.proto), with these conveniences:
//   - `options: {users: 500000}` declares numeric options and their defaults; `${users}`
//     anywhere in the file is replaced by the value in use (the plan's workload_options win);
//   - SQL (create, indexes, sql, generate, after_load) is either one text for both dialects or
//     a map {postgresql: …, mysql: …};
//   - a table's `columns` is a map from column name to generator, in load order;
//   - `timestamp: {from: "2024-01-01", days: 730}` (from: a date or "YYYY-MM-DD HH:MM:SS");
//   - a query type's `let` is a map from variable name to generator, in draw order;
//   - a generator written as a bare scalar is a constant, unless it is a parameter that names
//     one of its query type's variables (`params: [amount]`), which it then binds.
// Every error is one line: `shop.yaml:12:7: scenarios.3.query_types.0.statements.1.params:
// the SQL has 2 placeholders but 3 params are given`.
inline constexpr size_t kMaxWorkloadBytes = size_t{4} << 20;

// Parses and checks a workload. `options` are the plan's workload_options: each must be one
// the file declares (else a FieldError on "workload_options.NAME").
absl::StatusOr<dbload::v1::WorkloadSpec> ParseWorkload(
    std::string_view yaml_text, std::string_view source_name,
    const std::map<std::string, std::string>& options);

absl::StatusOr<dbload::v1::WorkloadSpec> LoadWorkloadFile(
    const std::string& path, const std::map<std::string, std::string>& options);

// The workloads shipped in workloads/*.yaml, compiled into the binary: name → YAML text.
const std::map<std::string, std::string_view>& BuiltinWorkloadFiles();

// A plan's `workload:` is a built-in name or a path to a file (it contains '/' or ends in
// .yaml): loads and parses the one it names.
absl::StatusOr<dbload::v1::WorkloadSpec> ResolveWorkload(
    const std::string& name_or_path, const std::map<std::string, std::string>& options);

// True when `workload` names a YAML workload (a file or a built-in file), not one built in code.
bool IsYamlWorkload(const std::string& workload);

// When the plan's `workload` names a YAML workload (a built-in file such as shop, or a path to
// the user's file), reads it with the plan's workload_options into plan.workload_spec, so that
// the plan carries it to the coordinator and every agent, which read no YAML. Errors name the
// workload file's line and field, the plan's workload_options field, or an unknown name
// (FieldError).
absl::Status ResolvePlanWorkload(dbload::v1::Plan& plan);

// Every workload a plan can name: oltp (built in code) and the built-in files.
std::vector<std::string> BuiltinWorkloadNames();

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_WORKLOAD_PARSER_H_
