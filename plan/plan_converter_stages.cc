#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "plan/durations.h"
#include "plan/plan_converter.h"
#include "plan/plan_validation.h"
#include "yaml/yaml_text.h"

namespace dbload::plan_yaml {
namespace {

constexpr uint32_t kDefaultKneeRefine = 3;
constexpr uint32_t kMaxKneeRefine = 20;

}  // namespace

absl::Status PlanConverter::ConvertStages(const YAML::Node& node, Plan& plan) {
  const std::string path = "stages";
  Record(node, path);
  if (!node.IsSequence() || node.size() == 0) {
    return Error(node, path,
                 absl::StrCat("expected a list of stages, e.g. - {duration: 60s, clients: 4}, "
                              "got ",
                              Describe(node)));
  }
  static constexpr FieldSpec kStage{"", FieldKind::kMap, ListOf(kStageFields)};
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string stage_path = JoinFieldPath(path, absl::StrCat(i));
    absl::StatusOr<MapEntries> fields = ReadMap(node[i], stage_path, kStage);
    if (!fields.ok()) return fields.status();
    Stage& stage = *plan.add_stages();
    for (const auto& [name, value] : fields->entries) {
      const std::string field_path = JoinFieldPath(stage_path, name);
      absl::Status status;
      if (name == "name") {
        absl::StatusOr<std::string> text = ReadText(value, field_path, "a string");
        status = text.status();
        if (text.ok()) stage.set_name(*std::move(text));
      } else if (name == "duration") {
        absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
        status = nanos.status();
        if (nanos.ok() && *nanos == 0) status = Error(value, field_path, "must be > 0, got 0");
        if (status.ok()) stage.set_duration_ns(*nanos);
      } else if (name == "queries") {
        absl::StatusOr<uint64_t> queries =
            ReadInteger<uint64_t>(value, field_path, 1, std::numeric_limits<uint64_t>::max());
        status = queries.status();
        if (queries.ok()) stage.set_queries(*queries);
      } else if (name == "rate") {
        status = ConvertLevel(value, field_path, /*clients=*/false, *stage.mutable_rate());
      } else if (name == "clients") {
        status = ConvertLevel(value, field_path, /*clients=*/true, *stage.mutable_clients());
      } else if (name == "knee") {
        status = ConvertKnee(value, field_path, *stage.mutable_knee());
      }
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

// A level is a number (constant), {from, to} (a ramp over the stage) or {from, step, every, max}
// (a staircase): "add one client every 60 s" is clients: {from: 1, step: 1, every: 60s, max: 32}.
absl::Status PlanConverter::ConvertLevel(const YAML::Node& node, const std::string& path,
                                         bool clients, Level& level) {
  auto read_amount = [&](const YAML::Node& value,
                         const std::string& field_path) -> absl::StatusOr<double> {
    if (!clients) return ReadNumber(value, field_path);
    absl::StatusOr<uint32_t> whole = ReadInteger<uint32_t>(value, field_path, 0, kMaxClosedClients);
    if (!whole.ok()) return whole.status();
    return static_cast<double>(*whole);
  };
  if (node.IsScalar()) {
    absl::StatusOr<double> amount = read_amount(node, path);
    if (!amount.ok()) return amount.status();
    level.set_shape(Level::CONSTANT);
    level.set_from(*amount);
    return absl::OkStatus();
  }
  static constexpr FieldSpec kLevel{"", FieldKind::kMap, ListOf(kLevelFields)};
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, kLevel);
  if (!fields.ok()) return fields.status();
  const bool ramp = fields->Find("to") != nullptr;
  const bool staircase = fields->Find("step") != nullptr || fields->Find("every") != nullptr ||
                         fields->Find("max") != nullptr;
  if (ramp && staircase) {
    return Error(node, path,
                 "set {from, to} for a ramp or {from, step, every, max} for a staircase, not "
                 "both");
  }
  if (fields->Find("from") == nullptr) {
    return Missing(node, path, "from", "where the level starts");
  }
  if (staircase) {
    for (absl::string_view key : {"step", "every", "max"}) {
      if (fields->Find(key) == nullptr) {
        return Missing(node, path, key, "a staircase needs from, step, every and max");
      }
    }
  }
  level.set_shape(ramp ? Level::RAMP : staircase ? Level::STAIRCASE : Level::CONSTANT);
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "every") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      level.set_every_ns(*nanos);
      continue;
    }
    absl::StatusOr<double> amount = read_amount(value, field_path);
    if (!amount.ok()) return amount.status();
    if (name == "from") level.set_from(*amount);
    if (name == "to") level.set_to(*amount);
    if (name == "step") level.set_step(*amount);
    if (name == "max") level.set_max(*amount);
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertKnee(const YAML::Node& node, const std::string& path,
                                        KneeSearch& knee) {
  static constexpr FieldSpec kKnee{"", FieldKind::kMap, ListOf(kKneeFields)};
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, kKnee);
  if (!fields.ok()) return fields.status();
  for (absl::string_view key : {"from", "step", "max", "every"}) {
    if (fields->Find(key) == nullptr) {
      return Missing(node, path, key, "a knee search needs from, step, max and every");
    }
  }
  knee.set_refine(kDefaultKneeRefine);
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "every" || name == "p99") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      name == "every" ? knee.set_every_ns(*nanos) : knee.set_p99_ns(*nanos);
    } else if (name == "refine") {
      absl::StatusOr<uint32_t> refine = ReadInteger<uint32_t>(value, field_path, 0, kMaxKneeRefine);
      if (!refine.ok()) return refine.status();
      knee.set_refine(*refine);
    } else {
      absl::StatusOr<double> number = ReadNumber(value, field_path);
      if (!number.ok()) return number.status();
      if (name == "from") knee.set_from(*number);
      if (name == "step") knee.set_step(*number);
      if (name == "max") knee.set_max(*number);
      if (name == "errors") knee.set_errors(*number);
      if (name == "achieved") knee.set_achieved(*number);
    }
  }
  return absl::OkStatus();
}

}  // namespace dbload::plan_yaml
