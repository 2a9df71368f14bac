#include "plan/plan_parser.h"

#include <exception>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/bounded_file.h"
#include "base/field_error.h"
#include "plan/field_messages.h"
#include "plan/plan_converter.h"
#include "plan/plan_limits.h"
#include "plan/plan_overrides.h"
#include "plan/plan_parser_yaml.h"
#include "plan/plan_validation.h"
#include "plan/plan_yaml_schema.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"
#include "yaml-cpp/yaml.h"
#include "yaml/yaml_expansion.h"
#include "yaml/yaml_text.h"

namespace dbload {
namespace {

using dbload::v1::Plan;
using plan_yaml::ApplyOverride;
using plan_yaml::kPlanFields;
using plan_yaml::ListOf;
using plan_yaml::NamesOf;
using plan_yaml::PlanConverter;

// Debian's Abseil has its own string_view; the public API speaks std::string_view.
absl::string_view AsAbsl(std::string_view text) { return {text.data(), text.size()}; }

// Structure check: one pass over the parser's events before any node is built. yaml-cpp's
// parser recurses once per nesting level and only stops at depth 2000; a plan is 3 levels
// deep, so anything past kMaxPlanNesting is refused long before the stack is at risk.

class StructureChecker : public YAML::EventHandler {
 public:
  struct TooDeep {
    YAML::Mark mark;
  };
  struct SecondDocument {
    YAML::Mark mark;
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) throw SecondDocument{mark};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    if (++depth_ > kMaxPlanNesting) throw TooDeep{mark};
  }

  int documents_ = 0;
  int depth_ = 0;
};

// YAML::ParserException from yaml-cpp is left to the caller, which reports every syntax error
// the same way.
absl::Status CheckStructure(const std::string& yaml_text, absl::string_view source_name) {
  std::istringstream input(yaml_text);
  YAML::Parser parser(input);
  StructureChecker checker;
  try {
    while (parser.HandleNextDocument(checker)) {
    }
  } catch (const StructureChecker::TooDeep& too_deep) {
    return absl::InvalidArgumentError(absl::StrCat(YamlPosition(source_name, too_deep.mark),
                                                   ": nesting deeper than ", kMaxPlanNesting,
                                                   " levels; a plan needs 3"));
  } catch (const StructureChecker::SecondDocument& second) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source_name, second.mark),
                     ": a second YAML document starts here; a plan file holds exactly one"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> ConvertPlanTree(const YAML::Node& root, absl::string_view source_name,
                                     const std::set<std::string, std::less<>>& overridden_paths,
                                     const PlanCheck& check) {
  Plan plan;
  PlanConverter converter(source_name, overridden_paths);
  if (absl::Status status = converter.Convert(root, plan); !status.ok()) return status;
  ApplyPlanDefaults(plan);
  absl::Status valid =
      ValidatePlanAt(plan, [&converter](absl::string_view path) { return converter.Where(path); });
  if (!valid.ok()) return valid;
  if (check) {
    absl::Status checked = check(plan);
    if (!checked.ok()) {
      const std::string field = FieldOf(checked).value_or("");
      return absl::Status(checked.code(),
                          FieldErrorText(converter.Where(field), field, checked.message()));
    }
  }
  return plan;
}

absl::StatusOr<Plan> ParsePlanTree(const std::string& yaml_text, absl::string_view source_name,
                                   const std::vector<std::string>& overrides,
                                   const PlanCheck& check) {
  if (absl::Status status = CheckStructure(yaml_text, source_name); !status.ok()) return status;
  if (absl::Status status = CheckYamlExpansion(yaml_text, source_name, kMaxYamlExpandedBytes);
      !status.ok()) {
    return status;
  }
  YAML::Node root = YAML::Load(yaml_text);
  if (!root.IsDefined() || root.IsNull()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": the plan is empty"));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source_name, root.Mark()), ": expected a map of plan fields (",
                     absl::StrJoin(NamesOf(ListOf(kPlanFields)), ", "), "), got ", Describe(root)));
  }
  std::set<std::string, std::less<>> overridden_paths;
  for (const std::string& override_text : overrides) {
    absl::Status status = ApplyOverride(root, override_text, source_name, overridden_paths);
    if (!status.ok()) return status;
  }
  return ConvertPlanTree(root, source_name, overridden_paths, check);
}

}  // namespace

absl::StatusOr<Plan> ConvertPlanNode(const YAML::Node& root, std::string_view source_name,
                                     const std::set<std::string, std::less<>>& overridden_paths,
                                     const PlanCheck& check) {
  return ConvertPlanTree(root, AsAbsl(source_name), overridden_paths, check);
}

absl::Status CheckYamlStructure(const std::string& yaml_text, std::string_view source_name) {
  if (absl::Status status = CheckStructure(yaml_text, AsAbsl(source_name)); !status.ok()) {
    return status;
  }
  return CheckYamlExpansion(yaml_text, AsAbsl(source_name), kMaxYamlExpandedBytes);
}

absl::StatusOr<Plan> ParsePlan(std::string_view yaml_text, std::string_view source_name,
                               const std::vector<std::string>& overrides) {
  return ParsePlan(yaml_text, source_name, overrides, nullptr);
}

absl::StatusOr<Plan> ParsePlan(std::string_view yaml_text, std::string_view source_name,
                               const std::vector<std::string>& overrides, const PlanCheck& check) {
  const absl::string_view source = AsAbsl(source_name);
  if (yaml_text.size() > kMaxPlanBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the plan is larger than ",
                                                   kMaxPlanBytes, " bytes; plans are small"));
  }
  // yaml-cpp reports errors by throwing; nothing may escape this function.
  try {
    return ParsePlanTree(std::string(yaml_text), source, overrides, check);
  } catch (const YAML::ParserException& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source, error.mark), ": invalid YAML: ", error.msg));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(YamlPosition(source, error.mark), ": cannot read YAML: ", error.msg));
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat(source, ": cannot read the plan: ", error.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(source, ": cannot read the plan"));
  }
}

absl::StatusOr<Plan> ParsePlan(std::string_view yaml_text, std::string_view source_name) {
  return ParsePlan(yaml_text, source_name, {});
}

absl::StatusOr<Plan> LoadPlanFile(const std::string& path) { return LoadPlanFile(path, {}); }

absl::StatusOr<Plan> LoadPlanFile(const std::string& path,
                                  const std::vector<std::string>& overrides) {
  return LoadPlanFile(path, overrides, nullptr);
}

absl::StatusOr<Plan> LoadPlanFile(const std::string& path,
                                  const std::vector<std::string>& overrides,
                                  const PlanCheck& check) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxPlanBytes, "plan file");
  if (!text.ok()) return text.status();
  return ParsePlan(*text, path, overrides, check);
}

}  // namespace dbload
