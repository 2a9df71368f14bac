#include "suite/suite_override.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/quote.h"
#include "yaml/yaml_text.h"

namespace dbload::suite_yaml {
namespace {

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

}  // namespace

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

}  // namespace dbload::suite_yaml
