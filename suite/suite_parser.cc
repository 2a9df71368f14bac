#include "suite/suite_parser.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/bounded_file.h"
#include "base/quote.h"
#include "plan/plan_parser_yaml.h"
#include "suite/suite_override.h"
#include "suite/suite_plan_messages.h"
#include "suite/suite_plan_tree.h"
#include "suite/suite_reader.h"
#include "suite/suite_runs.h"
#include "suite/suite_scaling.h"
#include "yaml/yaml_text.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using suite_yaml::ApplySuiteOverride;
using suite_yaml::HasMap;
using suite_yaml::InSuite;
using suite_yaml::kCaseFields;
using suite_yaml::kSettingsFields;
using suite_yaml::kSuiteFields;
using suite_yaml::kTargetFields;
using suite_yaml::Paths;
using suite_yaml::PlanOrigin;
using suite_yaml::PlanPaths;
using suite_yaml::PlanTree;
using suite_yaml::RawTarget;
using suite_yaml::SuiteReader;

struct RawCase {
  v1::SuiteCase suite_case;  // name, category, points
  YAML::Node name_node;
  std::optional<YAML::Node> plan;
  YAML::Node points_node;
  std::vector<YAML::Node> point_nodes;
};

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
  settings.set_prepare(kSuitePrepareOnce);
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
          if (*prepare != kSuitePrepareOnce && *prepare != kSuitePreparePerCase &&
              *prepare != kSuitePrepareNone) {
            return reader.Error(
                node, path, absl::StrCat("expected once, per_case or none, got ", Quote(*prepare)));
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

}  // namespace dbload
