#ifndef DBLOAD_PLAN_PLAN_CONVERTER_H_
#define DBLOAD_PLAN_PLAN_CONVERTER_H_

// YAML tree -> Plan. Checks shape and types (what only the YAML can tell: positions, unknown and
// duplicate keys, explicit zeros); value rules live in ValidatePlanAt (plan/plan_validation.h),
// shared with the checks on the proto. Internal to the plan parser; its methods are defined by
// the plan's sections: plan_converter.cc (reading values; the plan, target, load, stop),
// plan_converter_stages.cc (stages, levels, knee searches) and plan_converter_rules.cc (abort,
// agents, probe, EXPLAIN, generator limits).

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dbload/v1/plan.pb.h"
#include "plan/field_messages.h"
#include "plan/plan_yaml_schema.h"
#include "yaml/yaml_text.h"
#include "yaml-cpp/yaml.h"

namespace dbload::plan_yaml {

using dbload::v1::AbortRules;
using dbload::v1::ClosedLoad;
using dbload::v1::KneeSearch;
using dbload::v1::Level;
using dbload::v1::Load;
using dbload::v1::NoopLatency;
using dbload::v1::OpenLoad;
using dbload::v1::Plan;
using dbload::v1::Stage;
using dbload::v1::StopRule;
using dbload::v1::Target;

// The checked entries of one YAML map, in file order.
struct MapEntries {
  std::vector<std::pair<std::string, YAML::Node>> entries;

  const YAML::Node* Find(absl::string_view key) const {
    for (const auto& [name, value] : entries) {
      if (name == key) return &value;
    }
    return nullptr;
  }
};

class PlanConverter {
 public:
  PlanConverter(absl::string_view source_name,
                const std::set<std::string, std::less<>>& overridden_paths)
      : source_name_(source_name), overridden_paths_(overridden_paths) {}

  absl::Status Convert(const YAML::Node& root, Plan& plan);

  // Where the field at `path` (or its nearest ancestor that was in the YAML) came from: for
  // messages about values, found after conversion.
  FieldLocation Where(absl::string_view path) const {
    absl::string_view current = path;
    while (!current.empty()) {
      if (auto it = locations_.find(current); it != locations_.end()) return it->second;
      const size_t dot = current.rfind('.');
      if (dot == absl::string_view::npos) break;
      current = current.substr(0, dot);
    }
    return FieldLocation{std::string(source_name_)};
  }

 private:
  FieldLocation LocationOf(const YAML::Node& node, absl::string_view path) const {
    if (overridden_paths_.contains(path)) return FieldLocation{std::string(source_name_), true};
    // yaml-cpp places an empty value ("stop:") at the next token, often the next line; the
    // key is where the reader looks.
    if (!node.IsDefined() || node.IsNull()) {
      if (auto it = key_marks_.find(path); it != key_marks_.end()) {
        return FieldLocation{YamlPosition(source_name_, it->second)};
      }
    }
    return FieldLocation{YamlPosition(source_name_, node.Mark())};
  }
  void Record(const YAML::Node& node, const std::string& path) {
    locations_[path] = LocationOf(node, path);
  }
  absl::Status Error(const YAML::Node& node, absl::string_view path, absl::string_view message) {
    return absl::InvalidArgumentError(FieldErrorText(LocationOf(node, path), path, message));
  }
  // Keys are always from the file (--set writes values), so their own position is the place.
  absl::Status KeyError(const YAML::Node& key, absl::string_view path, absl::string_view message) {
    return absl::InvalidArgumentError(
        FieldErrorText(FieldLocation{YamlPosition(source_name_, key.Mark())}, path, message));
  }
  absl::Status Missing(const YAML::Node& map_node, const std::string& map_path,
                       absl::string_view key, absl::string_view hint) {
    return absl::InvalidArgumentError(FieldErrorText(LocationOf(map_node, map_path),
                                                     JoinFieldPath(map_path, key),
                                                     absl::StrCat("missing; ", hint)));
  }

  absl::StatusOr<MapEntries> ReadMap(const YAML::Node& node, const std::string& path,
                                     const FieldSpec& spec);
  absl::StatusOr<std::string> ReadText(const YAML::Node& node, const std::string& path,
                                       absl::string_view expected);
  template <typename Int>
  absl::StatusOr<Int> ReadInteger(const YAML::Node& node, const std::string& path, Int min,
                                  Int max);
  absl::StatusOr<double> ReadNumber(const YAML::Node& node, const std::string& path);
  // One of `choices` (lower-case words, read in any case); its index there.
  absl::StatusOr<size_t> ReadChoice(const YAML::Node& node, const std::string& path,
                                    const std::vector<absl::string_view>& choices);
  absl::StatusOr<int64_t> ReadDuration(const YAML::Node& node, const std::string& path);

  absl::Status ConvertTarget(const YAML::Node& node, Target& target);
  absl::Status ConvertNoop(const YAML::Node& node, NoopLatency& noop);
  absl::Status ConvertLoad(const YAML::Node& node, Load& load);
  absl::Status ConvertOpen(const YAML::Node& node, OpenLoad& open);
  absl::Status ConvertClosed(const YAML::Node& node, ClosedLoad& closed);
  absl::Status ConvertStop(const YAML::Node& node, StopRule& stop);
  absl::Status ConvertStages(const YAML::Node& node, Plan& plan);
  absl::Status ConvertLevel(const YAML::Node& node, const std::string& path, bool clients,
                            Level& level);
  absl::Status ConvertAbort(const YAML::Node& node, AbortRules& abort);
  absl::Status ConvertAgents(const YAML::Node& node, dbload::v1::AgentRequirement& agents);
  absl::Status ConvertProbe(const YAML::Node& node, dbload::v1::ProbeOptions& probe);
  absl::Status ConvertExplain(const YAML::Node& node, dbload::v1::ExplainOptions& explain);
  absl::Status ConvertGenerator(const YAML::Node& node, dbload::v1::GeneratorLimits& limits);
  absl::Status ConvertKnee(const YAML::Node& node, const std::string& path, KneeSearch& knee);
  absl::Status ConvertWorkloadOptions(const YAML::Node& node, Plan& plan);

  // load.open / load.closed as written, for "missing rate/clients" once it is known whether
  // the plan has stages (which give them instead).
  std::optional<YAML::Node> open_node_, closed_node_;
  bool amount_given_ = false;

  const absl::string_view source_name_;
  const std::set<std::string, std::less<>>& overridden_paths_;
  std::map<std::string, FieldLocation, std::less<>> locations_;
  std::map<std::string, YAML::Mark, std::less<>> key_marks_;
};

}  // namespace dbload::plan_yaml

#endif  // DBLOAD_PLAN_PLAN_CONVERTER_H_
