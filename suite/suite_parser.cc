#include "suite/suite_parser.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/bounded_file.h"
#include "base/nearest_name.h"
#include "plan/plan_parser_yaml.h"
#include "plan/plan_validation.h"
#include "report/report.h"
#include "plan/stage_program.h"
#include "proto/run_outcome.h"
#include "yaml/yaml_text.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using Paths = std::set<std::string, std::less<>>;

const std::vector<std::string> kSuiteFields = {"name", "settings", "targets", "cases"};
const std::vector<std::string> kSettingsFields = {"warmup_runs", "repetitions", "prepare",
                                                  "cleanup"};
const std::vector<std::string> kTargetFields = {"name", "target", "probe"};
const std::vector<std::string> kCaseFields = {"name", "category", "plan", "points"};
constexpr size_t kMaxName = 64;

// The suite's own fields (not those inside a plan, which the plan parser checks): positions,
// unknown keys with suggestions, and --set values named as such.
class SuiteReader {
 public:
  SuiteReader(std::string source, const Paths& overridden)
      : source_(std::move(source)), overridden_(overridden) {}

  const std::string& source() const { return source_; }

  absl::Status Error(const YAML::Node& node, absl::string_view path,
                     absl::string_view message) const {
    if (node.Mark().is_null() && FromOverride(path)) {
      return absl::InvalidArgumentError(absl::StrCat(source_, ": --set ", path, ": ", message));
    }
    const std::string where = YamlPosition(source_, node.Mark());
    if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", path, ": ", message));
  }

  // The entries of a map with the allowed keys, in file order; duplicates and unknown keys are
  // errors at the key.
  absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> ReadMap(
      const YAML::Node& node, const std::string& path,
      const std::vector<std::string>& fields) const {
    if (!node.IsMap()) {
      return Error(node, path,
                   absl::StrCat("expected a map with fields ", absl::StrJoin(fields, ", "),
                                ", got ", Describe(node)));
    }
    std::vector<std::pair<std::string, YAML::Node>> entries;
    std::map<std::string, int> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        return Error(entry.first, path,
                     absl::StrCat("expected field names as keys, got ", Describe(entry.first)));
      }
      const std::string& name = entry.first.Scalar();
      const std::string field_path = path.empty() ? name : absl::StrCat(path, ".", name);
      if (auto [it, inserted] = seen.emplace(name, entry.first.Mark().line + 1); !inserted) {
        return Error(entry.first, field_path,
                     absl::StrCat("duplicate field; it is already set at line ", it->second));
      }
      if (std::find(fields.begin(), fields.end(), name) == fields.end()) {
        return Error(entry.first, field_path, UnknownField(name, path, fields));
      }
      entries.emplace_back(name, entry.second);
    }
    return entries;
  }

  absl::StatusOr<std::string> ReadName(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      return Error(node, path, absl::StrCat("expected a name, got ", Describe(node)));
    }
    const std::string& name = node.Scalar();
    const bool plain = name.size() <= kMaxName && name.front() != '.' &&
                       std::all_of(name.begin(), name.end(), [](char c) {
                         return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                                c == '_' || c == '-';
                       });
    if (!plain) {
      return Error(node, path,
                   absl::StrCat("expected a name of at most ", kMaxName,
                                " letters, digits, '.', '_' or '-' (not starting with '.'; it "
                                "names a directory), got ",
                                Quote(name)));
    }
    return name;
  }

  absl::StatusOr<std::string> ReadText(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar())
      return Error(node, path, absl::StrCat("expected text, got ", Describe(node)));
    return node.Scalar();
  }

  absl::StatusOr<uint32_t> ReadCount(const YAML::Node& node, const std::string& path, uint32_t min,
                                     uint32_t max) const {
    uint32_t value = 0;
    if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min ||
        value > max) {
      return Error(
          node, path,
          absl::StrCat("expected an integer from ", min, " to ", max, ", got ", Describe(node)));
    }
    return value;
  }

  absl::StatusOr<bool> ReadBool(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar()) {
      const std::string text = absl::AsciiStrToLower(node.Scalar());
      if (text == "true" || text == "yes") return true;
      if (text == "false" || text == "no") return false;
    }
    return Error(node, path, absl::StrCat("expected true or false, got ", Describe(node)));
  }

  absl::StatusOr<double> ReadPoint(const YAML::Node& node, const std::string& path) const {
    double value = 0;
    if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value) ||
        value <= 0) {
      return Error(node, path,
                   absl::StrCat("expected a number > 0 (clients of a closed loop, a rate of an "
                                "open one), got ",
                                Describe(node)));
    }
    return value;
  }

  static std::string UnknownField(absl::string_view key, absl::string_view parent,
                                  const std::vector<std::string>& fields) {
    if (std::optional<std::string> nearest =
            NearestName(std::string_view(key.data(), key.size()), fields)) {
      return absl::StrCat("unknown field; did you mean '", *nearest, "'?");
    }
    return absl::StrCat("unknown field; ", parent.empty() ? "a suite" : parent,
                        " has: ", absl::StrJoin(fields, ", "));
  }

 private:
  bool FromOverride(absl::string_view path) const {
    for (absl::string_view current = path; !current.empty();) {
      if (overridden_.contains(current)) return true;
      const size_t dot = current.rfind('.');
      if (dot == absl::string_view::npos) break;
      current = current.substr(0, dot);
    }
    return false;
  }

  std::string source_;
  const Paths& overridden_;
};

// ---------------------------------------------------------------------------------------------
// --set on the suite's tree.

// A --set value as YAML, with every node made anew: nodes without a file position, so that
// messages about them say --set instead of pointing into the file.
YAML::Node WithoutMarks(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(node.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node list(YAML::NodeType::Sequence);
      for (const YAML::Node& element : node) list.push_back(WithoutMarks(element));
      return list;
    }
    case YAML::NodeType::Map: {
      YAML::Node map(YAML::NodeType::Map);
      for (const auto& entry : node) map[entry.first.Scalar()] = WithoutMarks(entry.second);
      return map;
    }
    default:
      return YAML::Node(YAML::NodeType::Null);
  }
}

// A target's password comes from one place: a --set of one of these drops the others there, so
// that a per-target override replaces the suite file's source instead of being refused as two.
const std::vector<std::string> kPasswordSources = {"password", "password_file", "password_env"};

// One --set, walked key by key from the suite's root; `*` forks the walk over a list's elements.
class SuiteOverride {
 public:
  SuiteOverride(const std::string& source, std::string path, YAML::Node value, Paths& overridden)
      : source_(source),
        path_(std::move(path)),
        keys_(absl::StrSplit(path_, '.')),
        value_(std::move(value)),
        overridden_(overridden) {}

  absl::Status Apply(YAML::Node& root) { return Walk(root, 0, "", &kSuiteFields); }

 private:
  absl::Status Error(absl::string_view at, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": --set ", at, ": ", message));
  }
  bool Removes() const { return value_.IsNull(); }

  // Sets keys_[i...] under `current` (the node at `walked`, whose fields the suite checks when
  // `fields` is not null; inside a plan, target or probe the plan parser checks them later).
  absl::Status Walk(YAML::Node current, size_t i, const std::string& walked,
                    const std::vector<std::string>* fields) {
    const std::string& key = keys_[i];
    const std::string here = walked.empty() ? key : absl::StrCat(walked, ".", key);
    if (key.empty()) return Error(Quote(path_), "empty field name in the path");
    const bool last = i + 1 == keys_.size();
    if (key == "*") {
      if (!current.IsSequence()) {
        return Error(here, absl::StrCat("* stands for every element of a list, and ", walked,
                                        " is ", Describe(current)));
      }
      for (size_t index = 0; index < current.size(); ++index) {
        if (absl::Status status = Element(current, index, i, walked); !status.ok()) return status;
      }
      return absl::OkStatus();
    }
    if (current.IsSequence()) {
      size_t index = 0;
      if (!absl::SimpleAtoi(key, &index)) {
        return Error(here, absl::StrCat(walked, " is a list; give an index from 0 (", walked,
                                        ".0) or * for every element (", walked, ".*)"));
      }
      if (index >= current.size()) {
        return Error(here, absl::StrCat("the suite has ", current.size(), " ", walked,
                                        " (numbered from 0); --set changes one that exists"));
      }
      return Element(current, index, i, walked);
    }
    if (fields != nullptr && std::find(fields->begin(), fields->end(), key) == fields->end()) {
      return Error(here, SuiteReader::UnknownField(key, walked, *fields));
    }
    const std::vector<std::string>* child_fields =
        key == "settings" && i == 0 ? &kSettingsFields : nullptr;
    if (last) {
      if (Removes()) {
        current.remove(key);
      } else {
        if (IsTargetField(i) && std::find(kPasswordSources.begin(), kPasswordSources.end(), key) !=
                                    kPasswordSources.end()) {
          for (const std::string& other : kPasswordSources) {
            if (other != key) current.remove(other);
          }
        }
        current[key] = WithoutMarks(value_);  // a copy each: a later --set edits one place
      }
      overridden_.insert(here);
      return absl::OkStatus();
    }
    YAML::Node child = current[key];
    if (!child.IsDefined() || child.IsNull()) {
      if (key == "targets" || key == "cases" || key == "points" || keys_[i + 1] == "*") {
        return Error(here, "the suite has none; --set changes one that exists");
      }
      if (Removes()) return absl::OkStatus();  // nothing there to remove
      current[key] = YAML::Node(YAML::NodeType::Map);
      overridden_.insert(here);
      child.reset(current[key]);
    } else if (!child.IsMap() && !child.IsSequence()) {
      return Error(here, absl::StrCat("the suite sets it to ", Describe(child),
                                      ", so --set cannot set a field in it"));
    }
    return Walk(child, i + 1, here, child_fields);
  }

  // keys_[i] picked element `index` of the list `list` at `walked`.
  absl::Status Element(YAML::Node list, size_t index, size_t i, const std::string& walked) {
    const std::string here = absl::StrCat(walked, ".", index);
    if (i + 1 == keys_.size()) {
      if (Removes()) {
        return Error(here, absl::StrCat("null removes a field of a map; to drop elements of ",
                                        walked, ", --set the whole list"));
      }
      list[index] = WithoutMarks(value_);
      overridden_.insert(here);
      return absl::OkStatus();
    }
    const std::vector<std::string>* fields = walked == "targets" ? &kTargetFields
                                             : walked == "cases" ? &kCaseFields
                                                                 : nullptr;
    return Walk(list[index], i + 1, here, fields);
  }

  // keys_[i] is a field of a target's `target` map: targets.N.target.KEY.
  bool IsTargetField(size_t i) const {
    return i == 3 && keys_[0] == "targets" && keys_[2] == "target";
  }

  const std::string& source_;
  const std::string path_;
  const std::vector<std::string> keys_;
  const YAML::Node value_;
  Paths& overridden_;
};

absl::Status ApplySuiteOverride(YAML::Node& root, absl::string_view text, const std::string& source,
                                Paths& overridden) {
  const size_t equals = text.find('=');
  if (equals == absl::string_view::npos || equals == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": --set ", Quote(text),
                     ": expected path=value, e.g. settings.repetitions=3 or cases.0.points=[1,4]"));
  }
  std::string path(text.substr(0, equals));
  YAML::Node value;
  try {
    value = WithoutMarks(YAML::Load(std::string(text.substr(equals + 1))));
  } catch (const YAML::Exception& error) {
    // Its position is in the value, not in the file: say so.
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": --set ", path, ": the value is not valid YAML: ", error.msg));
  }
  return SuiteOverride(source, std::move(path), std::move(value), overridden).Apply(root);
}

// ---------------------------------------------------------------------------------------------
// Cases into plans.

struct RawTarget {
  std::string name;
  YAML::Node name_node;
  std::optional<YAML::Node> target;
  std::optional<YAML::Node> probe;
  bool has_pool = false;
};

struct RawCase {
  v1::SuiteCase suite_case;  // name, category, points
  YAML::Node name_node;
  std::optional<YAML::Node> plan;
  YAML::Node points_node;
  std::vector<YAML::Node> point_nodes;
};

// node[key] is a map. (A missing key of a const node is an invalid node, which throws when its
// type is asked.)
bool HasMap(const YAML::Node& node, const char* key) {
  if (!node.IsDefined() || !node.IsMap()) return false;
  const YAML::Node child = node[key];
  return child.IsDefined() && child.IsMap();
}

// A copy of a map (its keys and values shared, with their positions) without the keys in
// `drop`.
YAML::Node MapWithout(const YAML::Node& map, const std::set<std::string>& drop) {
  YAML::Node copy(YAML::NodeType::Map);
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && drop.contains(entry.first.Scalar())) continue;
    copy.force_insert(entry.first, entry.second);
  }
  return copy;
}

// The case's plan as a plan file's tree: with the target (and its probe), and the load point
// put where the plan's load wants it (load.closed.clients or load.open.rate).
YAML::Node PlanTree(const YAML::Node& case_plan, const RawTarget& target, bool with_probe,
                    const YAML::Node* point) {
  std::set<std::string> replaced = {"target"};
  if (with_probe && target.probe) replaced.insert("probe");
  if (point != nullptr) replaced.insert("load");
  YAML::Node tree = MapWithout(case_plan, replaced);
  if (target.target) tree.force_insert(YAML::Node("target"), *target.target);
  if (with_probe && target.probe) tree.force_insert(YAML::Node("probe"), *target.probe);
  if (point != nullptr) {
    const YAML::Node load = case_plan["load"];
    const bool open = HasMap(load, "open");
    const std::string shape = open ? "open" : "closed";
    YAML::Node inner = MapWithout(load[shape], {open ? "rate" : "clients"});
    inner.force_insert(YAML::Node(open ? "rate" : "clients"), *point);
    YAML::Node new_load = MapWithout(load, {shape});
    new_load.force_insert(YAML::Node(shape), inner);
    tree.force_insert(YAML::Node("load"), new_load);
  }
  return tree;
}

// The plan parser's paths among the suite's --set paths, for case `c` on target `t`.
Paths PlanPaths(const Paths& overridden, size_t c, size_t t) {
  Paths paths;
  const std::string plan_prefix = absl::StrCat("cases.", c, ".plan.");
  const std::string target_prefix = absl::StrCat("targets.", t, ".");
  for (const std::string& path : overridden) {
    if (absl::StartsWith(path, plan_prefix)) paths.insert(path.substr(plan_prefix.size()));
    if (absl::StartsWith(path, target_prefix)) paths.insert(path.substr(target_prefix.size()));
  }
  return paths;
}

uint64_t ScaledCount(uint64_t count, double scale) {
  if (count == 0) return 0;
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(std::llround(static_cast<double>(count) * scale)));
}

// Whole milliseconds, at least 1 ms: a scaled duration never becomes 0 ("unset").
int64_t ScaledDuration(int64_t nanos, double time_scale) {
  if (nanos <= 0 || time_scale == 1) return nanos;
  constexpr double kMillisecond = 1e6;
  const double millis = std::round(static_cast<double>(nanos) * time_scale / kMillisecond);
  return static_cast<int64_t>(std::max(1.0, millis) * kMillisecond);
}

void ScaleLevel(v1::Level& level, double scale, double time_scale) {
  level.set_from(level.from() * scale);
  level.set_to(level.to() * scale);
  level.set_step(level.step() * scale);
  level.set_max(level.max() * scale);
  level.set_every_ns(ScaledDuration(level.every_ns(), time_scale));
}

// --scale (rates and query counts) and --time-scale (durations, and query counts again, so that
// a case bounded by its count lasts time_scale times as long too). Latency limits (a knee's or
// abort rule's p99) are not times of the case: they stay.
void ScalePlan(v1::Plan& plan, double scale, double time_scale) {
  const bool open = plan.load().has_open();
  if (open) plan.mutable_load()->mutable_open()->set_rate(plan.load().open().rate() * scale);
  if (plan.load().has_closed()) {
    v1::ClosedLoad& closed = *plan.mutable_load()->mutable_closed();
    closed.set_think_time_ns(ScaledDuration(closed.think_time_ns(), time_scale));
  }
  plan.set_warmup_ns(ScaledDuration(plan.warmup_ns(), time_scale));
  v1::StopRule& stop = *plan.mutable_stop();
  stop.set_duration_ns(ScaledDuration(stop.duration_ns(), time_scale));
  stop.set_queries(ScaledCount(stop.queries(), scale * time_scale));
  if (plan.has_abort()) {
    plan.mutable_abort()->set_for_ns(ScaledDuration(plan.abort().for_ns(), time_scale));
  }
  for (v1::Stage& stage : *plan.mutable_stages()) {
    stage.set_duration_ns(ScaledDuration(stage.duration_ns(), time_scale));
    stage.set_queries(ScaledCount(stage.queries(), scale * time_scale));
    // Clients are not scaled (a closed loop's level), but its staircase's period is.
    const double level_scale = open ? scale : 1;
    if (stage.has_rate()) ScaleLevel(*stage.mutable_rate(), level_scale, time_scale);
    if (stage.has_clients()) ScaleLevel(*stage.mutable_clients(), 1, time_scale);
    if (stage.has_knee()) {
      v1::KneeSearch& knee = *stage.mutable_knee();
      knee.set_from(knee.from() * level_scale);
      knee.set_step(knee.step() * level_scale);
      knee.set_max(knee.max() * level_scale);
      knee.set_every_ns(ScaledDuration(knee.every_ns(), time_scale));
    }
  }
}

// The node at a dotted path under `node` (map keys, list indexes), or the deepest one on the
// way that exists: where a message about that field points.
YAML::Node NearestNode(const YAML::Node& node, absl::string_view path) {
  YAML::Node current = node;
  for (absl::string_view key : absl::StrSplit(path, '.', absl::SkipEmpty())) {
    // const: lookups never add keys (and a missing key is an invalid node, never reset from).
    const YAML::Node& here = current;
    const YAML::Node child = [&]() -> YAML::Node {
      if (here.IsMap()) return here[std::string(key)];
      size_t index = 0;
      if (here.IsSequence() && absl::SimpleAtoi(key, &index) && index < here.size()) {
        return here[index];
      }
      return YAML::Node(YAML::NodeType::Undefined);
    }();
    if (!child.IsDefined() || child.IsNull()) break;
    current.reset(child);
  }
  return current;
}

// A message of the plan parser ("WHERE: FIELD: what", WHERE being "file:line:column", the file
// alone, or "file: --set"), taken apart so that the field can be named by its path in the suite.
struct PlanMessage {
  std::string where;  // "s.yaml:12:5"; empty when the parser had no position for it
  bool from_set = false;
  std::string field;  // relative to the plan; may be empty
  std::string what;
};

bool IsFieldPath(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

PlanMessage SplitPlanMessage(absl::string_view message, const std::string& source) {
  PlanMessage split;
  absl::string_view rest = message;
  if (absl::StartsWith(rest, source)) {
    rest.remove_prefix(source.size());
    if (absl::ConsumePrefix(&rest, ": --set ")) {
      split.from_set = true;
    } else if (absl::StartsWith(rest, ":") && rest.size() > 1 &&
               absl::ascii_isdigit(static_cast<unsigned char>(rest[1]))) {
      const size_t end = rest.find(": ");
      split.where = absl::StrCat(source, rest.substr(0, end));
      rest.remove_prefix(end == absl::string_view::npos ? rest.size() : end + 2);
    } else {
      absl::ConsumePrefix(&rest, ": ");
    }
  }
  if (const size_t colon = rest.find(": ");
      colon != absl::string_view::npos && IsFieldPath(rest.substr(0, colon))) {
    split.field = std::string(rest.substr(0, colon));
    rest.remove_prefix(colon + 2);
  }
  split.what = std::string(rest);
  return split;
}

// Where a case's plan, on one target at one point, was put together from: to name the suite's
// own path and position of a plan field.
struct PlanOrigin {
  size_t case_index = 0;
  size_t target_index = 0;
  const YAML::Node* case_plan = nullptr;
  const YAML::Node* target = nullptr;  // the target's `target` map
  const YAML::Node* probe = nullptr;   // may be null
  std::optional<size_t> point;         // the index in the case's points
  const YAML::Node* point_node = nullptr;
};

// A plan field's path in the suite, and the node it was written at (or the nearest one there).
std::pair<std::string, YAML::Node> SuiteFieldOf(const PlanOrigin& origin,
                                                const std::string& field) {
  auto under = [](const std::string& prefix, absl::string_view rest) {
    return rest.empty() ? prefix : absl::StrCat(prefix, ".", rest);
  };
  const std::string target_path = absl::StrCat("targets.", origin.target_index);
  for (const char* part : {"target", "probe"}) {
    absl::string_view rest = field;
    if (!absl::ConsumePrefix(&rest, part) || !(rest.empty() || rest.front() == '.')) continue;
    absl::ConsumePrefix(&rest, ".");
    const YAML::Node* node = part == std::string("target") ? origin.target : origin.probe;
    return {under(absl::StrCat(target_path, ".", part), rest),
            node == nullptr ? YAML::Node() : NearestNode(*node, rest)};
  }
  if (origin.point && (field == "load.closed.clients" || field == "load.open.rate")) {
    return {absl::StrCat("cases.", origin.case_index, ".points.", *origin.point),
            *origin.point_node};
  }
  return {under(absl::StrCat("cases.", origin.case_index, ".plan"), field),
          NearestNode(*origin.case_plan, field)};
}

// The plan parser's message with the field named by its path in the suite, at its position in
// the suite file (or as the --set that gave it).
std::string InSuite(absl::string_view message, const std::string& source,
                    const PlanOrigin& origin) {
  const PlanMessage split = SplitPlanMessage(message, source);
  auto [path, node] = SuiteFieldOf(origin, split.field);
  if (split.from_set || (split.where.empty() && node.Mark().is_null())) {
    return absl::StrCat(source, ": --set ", path, ": ", split.what);
  }
  const std::string where = split.where.empty() ? YamlPosition(source, node.Mark()) : split.where;
  return absl::StrCat(where, ": ", path, ": ", split.what);
}

// PlanOfRun, its validation's messages naming `source`.
absl::StatusOr<v1::Plan> PlanOfRunFrom(const v1::Suite& suite, const v1::SuiteRun& run,
                                       const std::string& source) {
  const v1::SuiteTarget* target = nullptr;
  for (const v1::SuiteTarget& candidate : suite.targets()) {
    if (candidate.name() == run.target()) target = &candidate;
  }
  const v1::SuiteCase* suite_case = nullptr;
  for (const v1::SuiteCase& candidate : suite.cases()) {
    if (candidate.name() == run.case_name()) suite_case = &candidate;
  }
  if (target == nullptr || suite_case == nullptr) {
    return absl::NotFoundError(absl::StrCat("suite ", suite.name(), " has no ",
                                            target == nullptr ? "target " : "case ",
                                            target == nullptr ? run.target() : run.case_name()));
  }
  v1::Plan plan = suite_case->plan();
  if (!suite_case->points().empty()) {
    if (plan.load().has_open()) plan.mutable_load()->mutable_open()->set_rate(run.point());
    if (plan.load().has_closed()) {
      plan.mutable_load()->mutable_closed()->set_clients(
          static_cast<uint32_t>(std::llround(run.point())));
    }
  }
  *plan.mutable_target() = target->target();
  if (target->has_probe()) *plan.mutable_probe() = target->probe();
  if (plan.name().empty()) {
    plan.set_name(absl::StrCat(suite.name(), "/", target->name(), "/", suite_case->name(), "/",
                               FormatSuitePoint(*suite_case, run.point())));
  }
  ApplyPlanDefaults(plan);
  if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return valid;
  return plan;
}

absl::StatusOr<v1::Suite> ParseSuiteTree(const std::string& text, const std::string& source,
                                         const SuiteOptions& options) {
  if (absl::Status status = CheckYamlStructure(text, source); !status.ok()) return status;
  YAML::Node root = YAML::Load(text);
  if (!root.IsDefined() || root.IsNull()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the suite is empty"));
  }
  Paths overridden;
  if (root.IsMap()) {
    for (const std::string& override_text : options.overrides) {
      absl::Status status = ApplySuiteOverride(root, override_text, source, overridden);
      if (!status.ok()) return status;
    }
  }
  if (!(options.scale > 0) || !std::isfinite(options.scale)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: --scale: expected a number > 0, got %g", source, options.scale));
  }
  if (!(options.time_scale > 0) || !(options.time_scale <= kMaxSuiteTimeScale)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: --time-scale: expected a number > 0 and at most %g, got %g", source,
                        kMaxSuiteTimeScale, options.time_scale));
  }
  SuiteReader reader(source, overridden);
  auto top = reader.ReadMap(root, "", kSuiteFields);
  if (!top.ok()) return top.status();

  v1::Suite suite;
  v1::SuiteSettings& settings = *suite.mutable_settings();
  settings.set_repetitions(1);
  settings.set_prepare("once");
  std::vector<RawTarget> targets;
  std::vector<RawCase> cases;
  bool named = false;
  for (const auto& [key, value] : *top) {
    if (key == "name") {
      absl::StatusOr<std::string> name = reader.ReadName(value, "name");
      if (!name.ok()) return name.status();
      suite.set_name(*name);
      named = true;
    } else if (key == "settings") {
      auto fields = reader.ReadMap(value, "settings", kSettingsFields);
      if (!fields.ok()) return fields.status();
      for (const auto& [field, node] : *fields) {
        const std::string path = absl::StrCat("settings.", field);
        if (field == "warmup_runs") {
          absl::StatusOr<uint32_t> runs = reader.ReadCount(node, path, 0, kMaxSuiteWarmupRuns);
          if (!runs.ok()) return runs.status();
          settings.set_warmup_runs(*runs);
        } else if (field == "repetitions") {
          absl::StatusOr<uint32_t> runs = reader.ReadCount(node, path, 1, kMaxSuiteRepetitions);
          if (!runs.ok()) return runs.status();
          settings.set_repetitions(*runs);
        } else if (field == "prepare") {
          absl::StatusOr<std::string> prepare = reader.ReadText(node, path);
          if (!prepare.ok()) return prepare.status();
          if (*prepare != "once" && *prepare != "none") {
            return reader.Error(node, path,
                                absl::StrCat("expected once or none, got ", Quote(*prepare)));
          }
          settings.set_prepare(*prepare);
        } else if (field == "cleanup") {
          absl::StatusOr<bool> cleanup = reader.ReadBool(node, path);
          if (!cleanup.ok()) return cleanup.status();
          settings.set_cleanup(*cleanup);
        }
      }
    } else if (key == "targets" || key == "cases") {
      if (!value.IsSequence() || value.size() == 0) {
        return reader.Error(
            value, key,
            absl::StrCat("expected a list of ", key == "targets" ? "targets" : "cases",
                         " (at least one), got ", Describe(value)));
      }
      for (size_t i = 0; i < value.size(); ++i) {
        const YAML::Node element = value[i];
        const std::string path = absl::StrCat(key, ".", i);
        auto fields = reader.ReadMap(element, path, key == "targets" ? kTargetFields : kCaseFields);
        if (!fields.ok()) return fields.status();
        if (key == "targets") {
          RawTarget target;
          for (const auto& [field, node] : *fields) {
            if (field == "name") {
              absl::StatusOr<std::string> name = reader.ReadName(node, path + ".name");
              if (!name.ok()) return name.status();
              target.name = *name;
              target.name_node.reset(node);
            } else if (field == "target") {
              target.target = node;
              target.has_pool = node.IsMap() && node["pool"].IsDefined();
            } else if (field == "probe") {
              target.probe = node;
            }
          }
          if (target.name.empty())
            return reader.Error(element, path + ".name", "missing; every target has a name");
          if (!target.target) {
            return reader.Error(element, path + ".target",
                                "missing; e.g. target: {driver: postgresql, port: 5432, user: "
                                "bench, password_env: PGPASSWORD, database: bench}");
          }
          for (const RawTarget& other : targets) {
            if (other.name == target.name) {
              return reader.Error(
                  target.name_node, path + ".name",
                  absl::StrCat("duplicate target name ", Quote(target.name), " (also at line ",
                               other.name_node.Mark().line + 1, ")"));
            }
          }
          targets.push_back(std::move(target));
        } else {
          RawCase raw;
          for (const auto& [field, node] : *fields) {
            if (field == "name") {
              absl::StatusOr<std::string> name = reader.ReadName(node, path + ".name");
              if (!name.ok()) return name.status();
              raw.suite_case.set_name(*name);
              raw.name_node.reset(node);
            } else if (field == "category") {
              absl::StatusOr<std::string> category = reader.ReadText(node, path + ".category");
              if (!category.ok()) return category.status();
              raw.suite_case.set_category(*category);
            } else if (field == "plan") {
              raw.plan = node;
            } else if (field == "points") {
              raw.points_node.reset(node);
              if (!node.IsSequence() || node.size() == 0) {
                return reader.Error(node, path + ".points",
                                    absl::StrCat("expected a list of load points, e.g. [1, 4, 16], "
                                                 "got ",
                                                 Describe(node)));
              }
              for (size_t p = 0; p < node.size(); ++p) {
                const YAML::Node point = node[p];
                absl::StatusOr<double> value =
                    reader.ReadPoint(point, absl::StrCat(path, ".points.", p));
                if (!value.ok()) return value.status();
                raw.suite_case.add_points(*value);
                raw.point_nodes.push_back(point);
              }
            }
          }
          if (raw.suite_case.name().empty()) {
            return reader.Error(element, path + ".name", "missing; every case has a name");
          }
          if (!raw.plan) {
            return reader.Error(element, path + ".plan",
                                "missing; a case's plan is a plan without a target: workload, "
                                "scenario, load, stop, …");
          }
          if (!raw.plan->IsMap()) {
            return reader.Error(
                *raw.plan, path + ".plan",
                absl::StrCat("expected a map of plan fields, got ", Describe(*raw.plan)));
          }
          const YAML::Node& plan_node = *raw.plan;  // const: lookups never add keys
          if (const YAML::Node target = plan_node["target"]; target.IsDefined()) {
            return reader.Error(target, path + ".plan.target",
                                "a case has no target of its own: the suite runs it on each of "
                                "its targets");
          }
          for (const RawCase& other : cases) {
            if (other.suite_case.name() == raw.suite_case.name()) {
              return reader.Error(
                  raw.name_node, path + ".name",
                  absl::StrCat("duplicate case name ", Quote(raw.suite_case.name()),
                               " (also at line ", other.name_node.Mark().line + 1, ")"));
            }
          }
          if (!raw.point_nodes.empty()) {
            const YAML::Node load = plan_node["load"];
            const bool shaped =
                HasMap(plan_node, "load") && (HasMap(load, "open") || HasMap(load, "closed"));
            if (!shaped) {
              return reader.Error(raw.points_node, path + ".points",
                                  "points need the plan's load as {open: {...}} (points are "
                                  "rates) or {closed: {...}} (points are clients)");
            }
            if (plan_node["stages"].IsDefined()) {
              return reader.Error(raw.points_node, path + ".points",
                                  "a plan with stages gives its own load; drop points or stages");
            }
          }
          cases.push_back(std::move(raw));
        }
      }
    }
  }
  if (!named) return reader.Error(root, "name", "missing; every suite has a name");
  if (targets.empty())
    return reader.Error(root, "targets", "missing; a suite needs at least one target");
  if (cases.empty()) return reader.Error(root, "cases", "missing; a suite needs at least one case");

  // Every case on every target at every point, through the plan parser: the first error is the
  // first a plan file of that combination would have had, its field named by its path in the
  // suite.
  auto origin_of = [&](size_t c, size_t t, std::optional<size_t> p) {
    PlanOrigin origin{.case_index = c,
                      .target_index = t,
                      .case_plan = &*cases[c].plan,
                      .target = &*targets[t].target,
                      .probe = targets[t].probe ? &*targets[t].probe : nullptr,
                      .point = p,
                      .point_node = p ? &cases[c].point_nodes[*p] : nullptr};
    return origin;
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    RawCase& raw = cases[c];
    std::vector<const YAML::Node*> points;
    for (const YAML::Node& point : raw.point_nodes) points.push_back(&point);
    if (points.empty()) points.push_back(nullptr);
    for (size_t t = 0; t < targets.size(); ++t) {
      const Paths plan_paths = PlanPaths(overridden, c, t);
      for (size_t p = 0; p < points.size(); ++p) {
        const bool first = t == 0 && p == 0;
        absl::StatusOr<v1::Plan> plan =
            ConvertPlanNode(PlanTree(*raw.plan, targets[t], /*with_probe=*/!first, points[p]),
                            source, plan_paths, first ? options.check : PlanCheck());
        if (!plan.ok()) {
          const std::optional<size_t> point =
              points[p] == nullptr ? std::nullopt : std::optional<size_t>(p);
          return absl::Status(
              plan.status().code(),
              absl::StrCat(
                  InSuite(plan.status().message(), source, origin_of(c, t, point)), " (case ",
                  raw.suite_case.name(), " on target ", targets[t].name,
                  points[p] == nullptr ? "" : absl::StrCat(" at point ", (*points[p]).Scalar()),
                  ")"));
        }
        if (first) {
          v1::Plan stored = *std::move(plan);
          stored.clear_target();
          if (!raw.point_nodes.empty()) {
            if (stored.load().has_open()) stored.mutable_load()->mutable_open()->set_rate(0);
            if (stored.load().has_closed()) stored.mutable_load()->mutable_closed()->set_clients(0);
          }
          *raw.suite_case.mutable_plan() = std::move(stored);
        }
      }
    }
  }
  for (size_t t = 0; t < targets.size(); ++t) {
    v1::SuiteTarget& target = *suite.add_targets();
    target.set_name(targets[t].name);
    // The target and probe as the plan parser read them (with its host and port defaults), from
    // the first case; the pool stays unset unless given, for each run's own default.
    const YAML::Node* point = cases[0].point_nodes.empty() ? nullptr : &cases[0].point_nodes[0];
    absl::StatusOr<v1::Plan> plan =
        ConvertPlanNode(PlanTree(*cases[0].plan, targets[t], /*with_probe=*/true, point), source,
                        PlanPaths(overridden, 0, t), PlanCheck());
    if (!plan.ok()) return plan.status();  // converted above: cannot fail
    *target.mutable_target() = plan->target();
    if (!targets[t].has_pool) target.mutable_target()->clear_pool();
    if (targets[t].probe) *target.mutable_probe() = plan->probe();
  }
  const bool scaled = options.scale != 1 || options.time_scale != 1;
  for (RawCase& raw : cases) {
    if (scaled) {
      ScalePlan(*raw.suite_case.mutable_plan(), options.scale, options.time_scale);
      if (raw.suite_case.plan().load().has_open()) {
        for (double& point : *raw.suite_case.mutable_points()) point *= options.scale;
      }
    }
    *suite.add_cases() = std::move(raw.suite_case);
  }
  const std::vector<v1::SuiteRun> runs = ExpandSuite(suite);
  if (runs.size() > kMaxSuiteRuns) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the suite expands to ", runs.size(),
                                                   " runs; at most ", kMaxSuiteRuns));
  }
  // Scaled, every run's plan is checked again, limits included, before any load: its errors are
  // about the scaled values, at the field's place in the file.
  if (scaled) {
    std::string how;
    if (options.scale != 1) absl::StrAppendFormat(&how, "--scale %g", options.scale);
    if (options.time_scale != 1) {
      absl::StrAppendFormat(&how, "%s--time-scale %g", how.empty() ? "" : " ", options.time_scale);
    }
    for (size_t t = 0; t < targets.size(); ++t) {
      for (size_t c = 0; c < cases.size(); ++c) {
        const v1::SuiteCase& suite_case = suite.cases(static_cast<int>(c));
        const size_t point_count = std::max<size_t>(1, suite_case.points_size());
        for (size_t p = 0; p < point_count; ++p) {
          v1::SuiteRun run;
          run.set_target(targets[t].name);
          run.set_case_name(suite_case.name());
          if (!suite_case.points().empty()) run.set_point(suite_case.points(static_cast<int>(p)));
          absl::StatusOr<v1::Plan> plan = PlanOfRunFrom(suite, run, source);
          if (plan.ok()) continue;
          const std::optional<size_t> point =
              suite_case.points().empty() ? std::nullopt : std::optional<size_t>(p);
          return absl::Status(
              plan.status().code(),
              absl::StrCat(InSuite(plan.status().message(), source, origin_of(c, t, point)),
                           " (with ", how, ": case ", suite_case.name(), " on target ",
                           targets[t].name,
                           point ? absl::StrFormat(" at point %g", run.point()) : "", ")"));
        }
      }
    }
  }
  return suite;
}

}  // namespace

absl::StatusOr<v1::Suite> ParseSuite(std::string_view yaml_text, std::string_view source_name,
                                     const SuiteOptions& options) {
  const std::string source(source_name);
  if (yaml_text.size() > kMaxSuiteBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the suite is larger than ", kMaxSuiteBytes, " bytes"));
  }
  // yaml-cpp reports errors by throwing; nothing may escape this function.
  try {
    return ParseSuiteTree(std::string(yaml_text), source, options);
  } catch (const YAML::ParserException& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source, error.mark), ": invalid YAML: ", error.msg));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source, error.mark), ": cannot read YAML: ", error.msg));
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat(source, ": cannot read the suite: ", error.what()));
  }
}

absl::StatusOr<v1::Suite> LoadSuiteFile(const std::string& path, const SuiteOptions& options) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxSuiteBytes, "suite file");
  if (!text.ok()) return text.status();
  return ParseSuite(*text, path, options);
}

std::string FormatSuitePoint(const v1::SuiteCase& suite_case, double point) {
  if (suite_case.points().empty()) return "plan";
  return absl::StrFormat("%.15g", point);
}

std::vector<v1::SuiteRun> ExpandSuite(const v1::Suite& suite) {
  std::vector<v1::SuiteRun> runs;
  const uint32_t repetitions = std::max<uint32_t>(1, suite.settings().repetitions());
  for (const v1::SuiteTarget& target : suite.targets()) {
    for (const v1::SuiteCase& suite_case : suite.cases()) {
      std::vector<double> points(suite_case.points().begin(), suite_case.points().end());
      if (points.empty()) points.push_back(0);
      for (const double point : points) {
        const std::string stem = absl::StrCat("runs/", target.name(), "/", suite_case.name(), "/",
                                              FormatSuitePoint(suite_case, point));
        auto add = [&](uint32_t repetition, uint32_t warmup) {
          v1::SuiteRun& run = runs.emplace_back();
          run.set_target(target.name());
          run.set_case_name(suite_case.name());
          run.set_point(point);
          run.set_repetition(repetition);
          run.set_discarded(repetition == 0);
          SetSuiteRunState(run, v1::SUITE_RUN_STATE_PENDING);
          run.set_report(repetition == 0 ? absl::StrCat(stem, "-w", warmup, ".json")
                                         : absl::StrCat(stem, "-r", repetition, ".json"));
        };
        for (uint32_t k = 1; k <= suite.settings().warmup_runs(); ++k) add(0, k);
        for (uint32_t r = 1; r <= repetitions; ++r) add(r, 0);
      }
    }
  }
  return runs;
}

absl::StatusOr<v1::Plan> PlanOfRun(const v1::Suite& suite, const v1::SuiteRun& run) {
  return PlanOfRunFrom(suite, run, suite.name());
}

PlannedLength PlannedRunLength(const v1::Plan& plan) {
  PlannedLength planned;
  const bool closed = plan.load().has_closed();
  int64_t length = 0;
  if (plan.stages_size() > 0) {
    for (const v1::Stage& stage : plan.stages()) {
      length += StageLength(stage);
      // A knee search lasts until its knee; StageLength is every step it could take.
      planned.bound = planned.bound || stage.has_knee() || (closed && stage.queries() > 0);
    }
    if (plan.stop().duration_ns() > 0 && (length == 0 || plan.stop().duration_ns() < length)) {
      length = plan.stop().duration_ns();
    }
    planned.bound = planned.bound || (closed && plan.stop().queries() > 0);
  } else if (plan.stop().duration_ns() > 0) {
    length = plan.stop().duration_ns();
    if (plan.stop().queries() > 0 && plan.load().has_open() && plan.load().open().rate() > 0) {
      length = std::min<int64_t>(length,
                                 static_cast<int64_t>(static_cast<double>(plan.stop().queries()) /
                                                      plan.load().open().rate() * 1e9));
    }
    // A closed loop's count may come first: its duration is then only a bound.
    planned.bound = closed && plan.stop().queries() > 0;
  } else if (plan.stop().queries() > 0 && plan.load().has_open() && plan.load().open().rate() > 0) {
    length = static_cast<int64_t>(static_cast<double>(plan.stop().queries()) /
                                  plan.load().open().rate() * 1e9);
  }
  if (length == 0) return {};
  planned.nanos = length + plan.warmup_ns();
  return planned;
}

int64_t PlannedRunNanos(const v1::Plan& plan) { return PlannedRunLength(plan).nanos; }

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
