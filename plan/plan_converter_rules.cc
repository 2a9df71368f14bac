#include <cstdint>

#include "absl/strings/str_cat.h"
#include "plan/durations.h"
#include "plan/plan_converter.h"
#include "yaml/yaml_text.h"

namespace dbload::plan_yaml {
namespace {

constexpr uint32_t kMaxAgents = 100'000;
// An abort rule without `for` must hold this long: one bad second is noise, five are a trend.
constexpr int64_t kDefaultAbortForNs = 5'000'000'000;

}  // namespace

absl::Status PlanConverter::ConvertAgents(const YAML::Node& node,
                                          dbload::v1::AgentRequirement& agents) {
  const std::string path = "agents";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "agents"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "min") {
      absl::StatusOr<uint32_t> min = ReadInteger<uint32_t>(value, field_path, 1, kMaxAgents);
      if (!min.ok()) return min.status();
      agents.set_min(*min);
    } else {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      if (*nanos < 0) return Error(value, field_path, "must be >= 0");
      agents.set_wait_ns(*nanos);
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertProbe(const YAML::Node& node, dbload::v1::ProbeOptions& probe) {
  const std::string path = "probe";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "probe"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "enabled") {
      absl::StatusOr<std::string> text = ReadText(value, field_path, "true or false");
      if (!text.ok()) return text.status();
      if (*text != "true" && *text != "false") {
        return Error(value, field_path,
                     absl::StrCat("expected true or false, got \"", *text, "\""));
      }
      probe.set_disabled(*text == "false");
    } else if (name == "interval") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      // Faster than 100 ms the probe's own statements would start to count against the run.
      if (*nanos < 100'000'000 || *nanos > 3'600'000'000'000) {
        return Error(value, field_path, "must be between 100ms and 1h");
      }
      probe.set_interval_ns(*nanos);
    } else {
      absl::StatusOr<std::string> text = ReadText(value, field_path, "a unix socket path");
      if (!text.ok()) return text.status();
      if (text->empty() || text->front() != '/') {
        return Error(value, field_path, "must be an absolute path to HAProxy's stats socket");
      }
      probe.set_haproxy_stats(*text);
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertExplain(const YAML::Node& node,
                                           dbload::v1::ExplainOptions& explain) {
  const std::string path = "explain";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "explain"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    absl::StatusOr<std::string> text = ReadText(value, field_path, "true or false");
    if (!text.ok()) return text.status();
    if (*text != "true" && *text != "false") {
      return Error(value, field_path, absl::StrCat("expected true or false, got \"", *text, "\""));
    }
    explain.set_disabled(*text == "false");
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertGenerator(const YAML::Node& node,
                                             dbload::v1::GeneratorLimits& limits) {
  const std::string path = "generator";
  absl::StatusOr<MapEntries> fields =
      ReadMap(node, path, MapSpec(ListOf(kPlanFields), "generator"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "max_agent_cpu") {
      absl::StatusOr<double> fraction = ReadNumber(value, field_path);
      if (!fraction.ok()) return fraction.status();
      if (!(*fraction > 0 && *fraction <= 1)) {
        return Error(value, field_path,
                     "must be a fraction of the agent's cores, above 0 and at most 1");
      }
      limits.set_max_agent_cpu(*fraction);
    } else if (name == "max_dispatch_lag_share") {
      absl::StatusOr<double> share = ReadNumber(value, field_path);
      if (!share.ok()) return share.status();
      if (!(*share > 0 && *share <= 1)) {
        return Error(value, field_path,
                     "must be a share of the response-time p99, above 0 and at most 1");
      }
      limits.set_max_dispatch_lag_share(*share);
    } else {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      if (*nanos <= 0) return Error(value, field_path, "must be > 0");
      if (name == "min_dispatch_lag_p99") {
        limits.set_min_dispatch_lag_p99_ns(*nanos);
      } else {
        limits.set_max_schedule_lag_p99_ns(*nanos);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertAbort(const YAML::Node& node, AbortRules& abort) {
  const std::string path = "abort";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "abort"));
  if (!fields.ok()) return fields.status();
  abort.set_for_ns(kDefaultAbortForNs);
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "p99_above" || name == "for") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      name == "for" ? abort.set_for_ns(*nanos) : abort.set_p99_above_ns(*nanos);
    } else {
      absl::StatusOr<double> fraction = ReadNumber(value, field_path);
      if (!fraction.ok()) return fraction.status();
      name == "error_rate_above" ? abort.set_error_rate_above(*fraction)
                                 : abort.set_achieved_below(*fraction);
    }
  }
  return absl::OkStatus();
}

}  // namespace dbload::plan_yaml
