#include "plan/plan_overrides.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "plan/field_messages.h"
#include "plan/plan_yaml_schema.h"
#include "yaml/yaml_text.h"

namespace dbload::plan_yaml {

absl::Status ApplyOverride(YAML::Node& root, absl::string_view override_text,
                           absl::string_view source_name,
                           std::set<std::string, std::less<>>& overridden_paths) {
  const size_t equals = override_text.find('=');
  if (equals == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": --set ", Quote(override_text),
                                                   ": expected path=value, e.g. "
                                                   "load.open.rate=2000"));
  }
  const absl::string_view path = override_text.substr(0, equals);
  const absl::string_view value = override_text.substr(equals + 1);
  auto override_error = [&](absl::string_view field_path, absl::string_view message) {
    return absl::InvalidArgumentError(
        FieldErrorText(FieldLocation{std::string(source_name), true}, field_path, message));
  };

  const std::vector<absl::string_view> keys = absl::StrSplit(path, '.');
  FieldList fields = ListOf(kPlanFields);
  bool free_keys = false;  // inside workload_options, any key is the workload's to judge
  YAML::Node current = root;
  std::string walked;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string key(keys[i]);
    const std::string parent = walked;
    walked = JoinFieldPath(walked, key);
    if (key.empty()) {
      return override_error(Quote(path), "empty field name in the path");
    }
    const FieldSpec* spec = nullptr;
    if (!free_keys) {
      spec = FindField(fields, key);
      if (spec == nullptr) return override_error(walked, UnknownFieldMessage(key, parent, fields));
    }
    const FieldKind kind = free_keys ? FieldKind::kValue : spec->kind;
    const bool last = i + 1 == keys.size();
    if (kind == FieldKind::kList) {
      // stages.1.duration: the index picks an element the file already has.
      size_t index = 0;
      if (last || !absl::SimpleAtoi(keys[i + 1], &index)) {
        return override_error(walked,
                              absl::StrCat("is a list; --set a field of one element, e.g. "
                                           "--set ",
                                           walked, ".0.", spec->fields.data[1].name, "=..."));
      }
      YAML::Node list = current[key];
      const size_t size = list.IsSequence() ? list.size() : 0;
      walked = JoinFieldPath(walked, keys[i + 1]);
      if (index >= size) {
        return override_error(walked, absl::StrCat("the plan has ", size, " ", key,
                                                   " (numbered from 0); --set changes one that "
                                                   "exists"));
      }
      if (i + 2 == keys.size()) {
        return override_error(walked, absl::StrCat("is one of ", key, "; --set a field of it"));
      }
      current.reset(list[index]);
      fields = spec->fields;
      ++i;
      continue;
    }
    if (last) {
      if (kind != FieldKind::kValue && kind != FieldKind::kLevel) {
        return override_error(
            walked, "is a map; --set one value inside it, e.g. --set " +
                        JoinFieldPath(walked, kind == FieldKind::kMap ? spec->fields.data[0].name
                                                                      : "table_size") +
                        "=...");
      }
      // yaml-cpp: assigning a value to operator[] of a map writes the entry (and creates it).
      current[key] = std::string(value);
      overridden_paths.insert(walked);
      return absl::OkStatus();
    }
    if (kind == FieldKind::kValue) {
      return override_error(walked,
                            absl::StrCat("is a single value; it has no field '", keys[i + 1], "'"));
    }
    YAML::Node child = current[key];
    if (!child.IsDefined() || child.IsNull()) {
      current[key] = YAML::Node(YAML::NodeType::Map);
      // Created here, not in the file: messages about it must not point at a file position.
      overridden_paths.insert(walked);
      child.reset(current[key]);
    } else if (!child.IsMap()) {
      return override_error(walked, absl::StrCat("the plan sets it to ", Describe(child),
                                                 ", not a map, so --set cannot set a field in it"));
    }
    // reset(), not operator=: assigning one yaml-cpp Node to another rewrites the tree.
    current.reset(child);
    if (kind == FieldKind::kValueMap) {
      free_keys = true;
    } else {
      fields = spec->fields;
    }
  }
  return absl::OkStatus();  // not reached: the loop returns at the last key
}

}  // namespace dbload::plan_yaml
