#ifndef DBLOAD_PLAN_PLAN_YAML_SCHEMA_H_
#define DBLOAD_PLAN_PLAN_YAML_SCHEMA_H_

// The YAML schema of a plan: which keys each map may hold. It is the one list that unknown-key
// checks, "did you mean" suggestions and --set path checks all consult, so they cannot disagree.
// Internal to the plan parser (plan/plan_parser.cc and the files it is split into).

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace dbload::plan_yaml {

enum class FieldKind {
  kValue,     // a single scalar
  kMap,       // a map with the fields listed in FieldSpec::fields
  kValueMap,  // a map with free keys and scalar values (workload_options)
  kList,      // a list of maps, each with the fields listed (stages)
  kLevel,     // a scalar, or a map with the fields listed (a stage's rate or clients)
};

struct FieldSpec;
struct FieldList {
  const FieldSpec* data = nullptr;
  size_t size = 0;
  const FieldSpec* begin() const;
  const FieldSpec* end() const;
};
struct FieldSpec {
  absl::string_view name;
  FieldKind kind;
  FieldList fields;
};
inline const FieldSpec* FieldList::begin() const { return data; }
inline const FieldSpec* FieldList::end() const { return data + size; }

template <size_t N>
constexpr FieldList ListOf(const FieldSpec (&specs)[N]) {
  return FieldList{specs, N};
}
constexpr FieldSpec Value(absl::string_view name) { return {name, FieldKind::kValue, {}}; }
constexpr FieldSpec Map(absl::string_view name, FieldList fields) {
  return {name, FieldKind::kMap, fields};
}

inline constexpr FieldSpec kNoopFields[] = {Value("fixed"), Value("exponential_mean")};
inline constexpr FieldSpec kTargetFields[] = {Value("driver"),
                                              Value("host"),
                                              Value("port"),
                                              Value("socket"),
                                              Value("user"),
                                              Value("password_file"),
                                              Value("password_env"),
                                              Value("database"),
                                              Value("pool"),
                                              Value("connect_timeout"),
                                              Value("isolation"),
                                              Value("session"),
                                              Value("engine"),
                                              Value("event_loops"),
                                              Value("connect"),
                                              Value("connects_at_once"),
                                              Value("timer_slack"),
                                              Value("pipeline"),
                                              Value("mysql_client"),
                                              Map("noop", ListOf(kNoopFields))};
inline constexpr FieldSpec kOpenFields[] = {Value("rate"), Value("arrival")};
inline constexpr FieldSpec kClosedFields[] = {Value("clients"), Value("think_time")};
inline constexpr FieldSpec kLoadFields[] = {Map("open", ListOf(kOpenFields)),
                                            Map("closed", ListOf(kClosedFields))};
inline constexpr FieldSpec kStopFields[] = {Value("duration"), Value("queries")};
inline constexpr FieldSpec kLevelFields[] = {Value("from"), Value("to"), Value("step"),
                                             Value("every"), Value("max")};
inline constexpr FieldSpec kKneeFields[] = {Value("from"),   Value("step"),    Value("max"),
                                            Value("every"),  Value("refine"),  Value("p99"),
                                            Value("errors"), Value("achieved")};
inline constexpr FieldSpec kStageFields[] = {Value("name"),
                                             Value("duration"),
                                             Value("queries"),
                                             {"rate", FieldKind::kLevel, ListOf(kLevelFields)},
                                             {"clients", FieldKind::kLevel, ListOf(kLevelFields)},
                                             Map("knee", ListOf(kKneeFields))};
inline constexpr FieldSpec kAgentsFields[] = {Value("min"), Value("wait")};
inline constexpr FieldSpec kAbortFields[] = {Value("p99_above"), Value("error_rate_above"),
                                             Value("achieved_below"), Value("for")};
inline constexpr FieldSpec kProbeFields[] = {Value("enabled"), Value("interval"),
                                             Value("haproxy_stats")};
inline constexpr FieldSpec kExplainFields[] = {Value("enabled")};
inline constexpr FieldSpec kGeneratorFields[] = {
    Value("max_agent_cpu"), Value("max_schedule_lag_p99"), Value("max_dispatch_lag_share"),
    Value("min_dispatch_lag_p99")};
inline constexpr FieldSpec kPlanFields[] = {Value("name"),
                                            Map("target", ListOf(kTargetFields)),
                                            Value("workload"),
                                            Value("scenario"),
                                            {"workload_options", FieldKind::kValueMap, {}},
                                            Map("load", ListOf(kLoadFields)),
                                            Value("warmup"),
                                            Map("stop", ListOf(kStopFields)),
                                            Value("seed"),
                                            {"stages", FieldKind::kList, ListOf(kStageFields)},
                                            Map("abort", ListOf(kAbortFields)),
                                            Map("agents", ListOf(kAgentsFields)),
                                            Map("probe", ListOf(kProbeFields)),
                                            Map("generator", ListOf(kGeneratorFields)),
                                            Map("explain", ListOf(kExplainFields))};

const FieldSpec* FindField(FieldList fields, absl::string_view name);

// The spec of a map the converter knows exists in the schema above.
const FieldSpec& MapSpec(FieldList fields, absl::string_view name);

std::vector<absl::string_view> NamesOf(FieldList fields);

// "unknown field; did you mean 'host'?", or the fields the map has.
std::string UnknownFieldMessage(absl::string_view key, absl::string_view parent_path,
                                FieldList fields);

}  // namespace dbload::plan_yaml

#endif  // DBLOAD_PLAN_PLAN_YAML_SCHEMA_H_
