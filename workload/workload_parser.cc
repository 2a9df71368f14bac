#include "workload/workload_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/code_workloads.h"
#include "base/field_error.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "plan/plan_limits.h"
#include "workload/param_generator.h"
#include "workload/sql_text.h"
#include "workload/workload_spec_check.h"
#include "yaml-cpp/yaml.h"
#include "yaml/yaml_expansion.h"
#include "yaml/yaml_text.h"

namespace dbload {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using v1::WorkloadSpec;

constexpr int kMaxNesting = 32;
// YAML aliases can make a small file name a huge tree (a "billion laughs"); reading stops
// after this many nodes, far more than any real workload has.
constexpr int64_t kMaxNodes = 1'000'000;

std::vector<std::string> FieldNames(const Descriptor& descriptor) {
  std::vector<std::string> names;
  for (int i = 0; i < descriptor.field_count(); ++i) names.push_back(descriptor.field(i)->name());
  return names;
}

// Reads YAML into a proto message by reflection: keys are field names, maps are messages,
// lists are repeated fields. The few spellings that differ from the proto are listed in
// workload_parser.h and handled where their message is read.
class Converter {
 public:
  Converter(std::string_view source, std::map<std::string, std::string> options)
      : source_(source), options_(std::move(options)) {}

  absl::Status ReadMessage(const YAML::Node& node, const std::string& path, Message& message,
                           int depth = 0);

  // "file:line:column" of the place `path` was read from (or the file, if it was never read).
  std::string Where(const std::string& path) const {
    auto it = marks_.find(path);
    return it == marks_.end() ? source_ : YamlPosition(source_, it->second);
  }
  // An error at the place `path` was read from (or at the file, if it was never read).
  absl::Status ErrorAt(const std::string& path, absl::string_view message) const {
    const std::string where = Where(path);
    return absl::InvalidArgumentError(
        path.empty() ? absl::StrCat(where, ": ", message)
                     : absl::StrCat(where, ": ", path, ": ", message));
  }

 private:
  absl::Status Error(const YAML::Node& node, const std::string& path, absl::string_view message) {
    marks_[path] = node.Mark();
    return ErrorAt(path, message);
  }

  absl::StatusOr<std::string> Text(const YAML::Node& node, const std::string& path);
  absl::Status ReadField(const YAML::Node& node, const std::string& path, Message& message,
                         const FieldDescriptor& field, int depth);
  absl::Status ReadScalar(const YAML::Node& node, const std::string& path, Message& message,
                          const FieldDescriptor& field);
  absl::Status ReadTimestamp(const YAML::Node& node, const std::string& path, Message& message);
  absl::Status ReadColumns(const YAML::Node& node, const std::string& path, Message& data,
                           int depth);
  absl::Status ReadVariables(const YAML::Node& node, const std::string& path,
                             v1::QueryType& query_type, int depth);

 public:
  // True when the generator at `path` was written as a bare scalar (a constant, unless it names
  // a variable: see ResolveVariablesAndSources).
  bool IsBareScalar(const std::string& path) const { return bare_scalars_.contains(path); }

 private:
  std::set<std::string> bare_scalars_;

  const std::string source_;
  const std::map<std::string, std::string> options_;
  std::map<std::string, YAML::Mark> marks_;
  int64_t nodes_read_ = 0;
};

// A scalar with `${option}` references replaced.
absl::StatusOr<std::string> Converter::Text(const YAML::Node& node, const std::string& path) {
  marks_[path] = node.Mark();
  if (++nodes_read_ > kMaxNodes) {
    return Error(node, path, absl::StrCat("more than ", kMaxNodes,
                                          " values (do aliases expand to a huge tree?)"));
  }
  if (!node.IsScalar()) return Error(node, path, absl::StrCat("expected a value, got ", Describe(node)));
  const std::string& raw = node.Scalar();
  std::string out;
  size_t at = 0;
  for (size_t open; (open = raw.find("${", at)) != std::string::npos;) {
    const size_t close = raw.find('}', open);
    if (close == std::string::npos) return Error(node, path, "`${` without a closing `}`");
    const std::string name = raw.substr(open + 2, close - open - 2);
    auto option = options_.find(name);
    if (option == options_.end()) {
      std::vector<std::string> known;
      for (const auto& [key, value] : options_) known.push_back(key);
      return Error(node, path,
                   absl::StrCat("unknown option ${", name, "}; the file's options are: ",
                                known.empty() ? "(none)" : absl::StrJoin(known, ", ")));
    }
    absl::StrAppend(&out, raw.substr(at, open - at), option->second);
    at = close + 1;
  }
  absl::StrAppend(&out, raw.substr(at));
  return out;
}

absl::Status Converter::ReadMessage(const YAML::Node& node, const std::string& path,
                                    Message& message, int depth) {
  marks_[path] = node.Mark();
  if (++nodes_read_ > kMaxNodes) {
    return Error(node, path, absl::StrCat("more than ", kMaxNodes,
                                          " values (do aliases expand to a huge tree?)"));
  }
  const Descriptor& descriptor = *message.GetDescriptor();
  const std::string& type = descriptor.full_name();
  if (depth > kMaxNesting) return Error(node, path, "nested too deeply");
  // Shorthands: one SQL text for both dialects; a bare value as a constant generator.
  if (node.IsScalar() && (type == "dbload.v1.DialectSql" || type == "dbload.v1.Generator")) {
    absl::StatusOr<std::string> text = Text(node, path);
    if (!text.ok()) return text.status();
    if (type == "dbload.v1.DialectSql") {
      static_cast<v1::DialectSql&>(message).set_any(*text);
    } else {
      static_cast<v1::Generator&>(message).set_constant(*text);
      bare_scalars_.insert(path);
    }
    return absl::OkStatus();
  }
  if (!node.IsMap()) {
    return Error(node, path,
                 absl::StrCat("expected a map with fields ",
                              absl::StrJoin(FieldNames(descriptor), ", "), ", got ",
                              Describe(node)));
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Error(entry.first, path, "expected field names as keys");
    const std::string& key = entry.first.Scalar();
    const std::string field_path = JoinPath(path, key);
    marks_[field_path] = entry.first.Mark();
    if (!seen.insert(key).second) return Error(entry.first, field_path, "duplicate field");
    if (path.empty() && key == "options") continue;  // read before conversion
    const FieldDescriptor* field = descriptor.FindFieldByName(key);
    if (field == nullptr || (type == "dbload.v1.WorkloadSpec" && key == "options")) {
      return Error(entry.first, field_path,
                   absl::StrCat("unknown field; ", path.empty() ? "a workload" : path, " has: ",
                                absl::StrJoin(FieldNames(descriptor), ", ")));
    }
    if (const auto* oneof = field->containing_oneof();
        oneof != nullptr && message.GetReflection()->HasOneof(message, oneof)) {
      return Error(entry.first, field_path,
                   absl::StrCat("only one of ", oneof->name() == "kind" ? "the generator kinds"
                                                                         : oneof->name(),
                                " may be given; ",
                                message.GetReflection()
                                    ->GetOneofFieldDescriptor(message, oneof)
                                    ->name(),
                                " is already set"));
    }
    if (absl::Status status = ReadField(entry.second, field_path, message, *field, depth + 1);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status Converter::ReadField(const YAML::Node& node, const std::string& path,
                                  Message& message, const FieldDescriptor& field, int depth) {
  const Reflection& reflection = *message.GetReflection();
  if (message.GetDescriptor()->full_name() == "dbload.v1.TableData" && field.name() == "columns") {
    return ReadColumns(node, path, message, depth);
  }
  if (message.GetDescriptor()->full_name() == "dbload.v1.QueryType" && field.name() == "let") {
    return ReadVariables(node, path, static_cast<v1::QueryType&>(message), depth);
  }
  if (field.is_map()) {
    // map<string, int64> (a query type's `changes`): a YAML map of name to integer.
    marks_[path] = node.Mark();
    if (!node.IsMap()) {
      return Error(node, path, absl::StrCat("expected a map, got ", Describe(node)));
    }
    for (const auto& entry : node) {
      Message& item = *reflection.AddMessage(&message, &field);
      const Descriptor& item_type = *item.GetDescriptor();
      const std::string key = entry.first.Scalar();
      const std::string item_path = JoinPath(path, key);
      item.GetReflection()->SetString(&item, item_type.FindFieldByName("key"), key);
      if (absl::Status status =
              ReadScalar(entry.second, item_path, item, *item_type.FindFieldByName("value"));
          !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }
  if (field.is_repeated()) {
    marks_[path] = node.Mark();
    if (!node.IsSequence()) {
      return Error(node, path, absl::StrCat("expected a list, got ", Describe(node)));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string item_path = absl::StrCat(path, ".", i);
      absl::Status status;
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        status = ReadMessage(node[i], item_path, *reflection.AddMessage(&message, &field), depth);
      } else {
        status = ReadScalar(node[i], item_path, message, field);
      }
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (field.message_type()->full_name() == "dbload.v1.Generator.Timestamp") {
      return ReadTimestamp(node, path, *reflection.MutableMessage(&message, &field));
    }
    // `now: {}` and `now:` (null) both select an empty message.
    if (node.IsNull() && field.message_type()->field_count() == 0) {
      reflection.MutableMessage(&message, &field);
      return absl::OkStatus();
    }
    return ReadMessage(node, path, *reflection.MutableMessage(&message, &field), depth);
  }
  return ReadScalar(node, path, message, field);
}

template <typename Number>
bool ParseNumber(const std::string& text, Number& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && stop == end;
}

absl::Status Converter::ReadScalar(const YAML::Node& node, const std::string& path,
                                   Message& message, const FieldDescriptor& field) {
  absl::StatusOr<std::string> text = Text(node, path);
  if (!text.ok()) return text.status();
  const Reflection& reflection = *message.GetReflection();
  const bool repeated = field.is_repeated();
  auto bad = [&](absl::string_view expected) {
    return Error(node, path, absl::StrCat("expected ", expected, ", got ", Quote(*text)));
  };
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      repeated ? reflection.AddString(&message, &field, *text)
               : reflection.SetString(&message, &field, *text);
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (*text != "true" && *text != "false") return bad("true or false");
      repeated ? reflection.AddBool(&message, &field, *text == "true")
               : reflection.SetBool(&message, &field, *text == "true");
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double value = 0;
      if (!ParseNumber(*text, value) || !std::isfinite(value)) return bad("a number");
      repeated ? reflection.AddDouble(&message, &field, value)
               : reflection.SetDouble(&message, &field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t value = 0;
      if (!ParseNumber(*text, value)) return bad("an integer");
      repeated ? reflection.AddInt64(&message, &field, value)
               : reflection.SetInt64(&message, &field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t value = 0;
      if (!ParseNumber(*text, value)) return bad("an integer");
      repeated ? reflection.AddInt32(&message, &field, value)
               : reflection.SetInt32(&message, &field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t value = 0;
      if (!ParseNumber(*text, value)) return bad("an integer from 0 to 4294967295");
      repeated ? reflection.AddUInt32(&message, &field, value)
               : reflection.SetUInt32(&message, &field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Written in lowercase (`on: [deadlock, serialization]`); the unspecified value is not a
      // choice.
      const google::protobuf::EnumDescriptor& type = *field.enum_type();
      std::vector<std::string> choices;
      const google::protobuf::EnumValueDescriptor* chosen = nullptr;
      for (int i = 0; i < type.value_count(); ++i) {
        const google::protobuf::EnumValueDescriptor& value = *type.value(i);
        if (value.number() == 0) continue;
        choices.push_back(absl::AsciiStrToLower(value.name()));
        if (choices.back() == *text) chosen = &value;
      }
      if (chosen == nullptr) return bad(absl::StrCat("one of ", absl::StrJoin(choices, ", ")));
      repeated ? reflection.AddEnumValue(&message, &field, chosen->number())
               : reflection.SetEnumValue(&message, &field, chosen->number());
      return absl::OkStatus();
    }
    default:
      return Error(node, path, "this field cannot be written in a workload file");
  }
}

// `timestamp: {from: "2024-01-01", days: 730}`.
absl::Status Converter::ReadTimestamp(const YAML::Node& node, const std::string& path,
                                      Message& message) {
  auto& timestamp = static_cast<v1::Generator::Timestamp&>(message);
  marks_[path] = node.Mark();
  if (!node.IsMap() || !node["from"] || !node["days"] || node.size() != 2) {
    return Error(node, path,
                 "expected {from: \"YYYY-MM-DD\" (or \"YYYY-MM-DD HH:MM:SS\"), days: N}");
  }
  absl::StatusOr<std::string> from = Text(node["from"], JoinPath(path, "from"));
  if (!from.ok()) return from.status();
  absl::Time time;
  std::string error;
  if (!absl::ParseTime("%Y-%m-%d %H:%M:%S", *from, absl::UTCTimeZone(), &time, &error) &&
      !absl::ParseTime("%Y-%m-%d", *from, absl::UTCTimeZone(), &time, &error)) {
    return Error(node["from"], JoinPath(path, "from"),
                 absl::StrCat("expected a date \"YYYY-MM-DD\" or \"YYYY-MM-DD HH:MM:SS\", got ",
                              Quote(*from)));
  }
  absl::StatusOr<std::string> days = Text(node["days"], JoinPath(path, "days"));
  if (!days.ok()) return days.status();
  int64_t day_count = 0;
  if (!ParseNumber(*days, day_count) || day_count <= 0 || day_count > 1'000'000) {
    return Error(node["days"], JoinPath(path, "days"),
                 absl::StrCat("expected a number of days from 1 to 1000000, got ", Quote(*days)));
  }
  timestamp.set_from_unix_s(absl::ToUnixSeconds(time));
  timestamp.set_span_s(day_count * 86'400);
  return absl::OkStatus();
}

// `columns: {id: {row: true}, email: {pattern: …}}`: a map in load order.
absl::Status Converter::ReadColumns(const YAML::Node& node, const std::string& path,
                                    Message& data, int depth) {
  marks_[path] = node.Mark();
  if (!node.IsMap()) {
    return Error(node, path,
                 absl::StrCat("expected a map from column name to generator, got ",
                              Describe(node)));
  }
  auto& table_data = static_cast<v1::TableData&>(data);
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::string column_path = JoinPath(path, name);
    marks_[column_path] = entry.first.Mark();
    if (name.empty() || !seen.insert(name).second) {
      return Error(entry.first, column_path, "a column name must be given once");
    }
    v1::Column& column = *table_data.add_columns();
    column.set_name(name);
    if (absl::Status status =
            ReadMessage(entry.second, column_path, *column.mutable_generator(), depth + 1);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

// `let: {amount: {uniform: {min: 1, max: 100}}, to: {…}}`: a map in draw order.
absl::Status Converter::ReadVariables(const YAML::Node& node, const std::string& path,
                                      v1::QueryType& query_type, int depth) {
  marks_[path] = node.Mark();
  if (!node.IsMap()) {
    return Error(
        node, path,
        absl::StrCat("expected a map from variable name to generator, got ", Describe(node)));
  }
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Error(entry.first, path, "expected variable names as keys");
    const std::string name = entry.first.Scalar();
    const std::string variable_path = JoinPath(path, name);
    marks_[variable_path] = entry.first.Mark();
    v1::Variable& variable = *query_type.add_let();
    variable.set_name(name);
    if (absl::Status status =
            ReadMessage(entry.second, variable_path, *variable.mutable_generator(), depth + 1);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

// A parameter written as a bare name of one of its query type's variables (`params: [amount]`)
// binds that variable; any other bare scalar stays a constant. And where each statement, check
// and invariant is written.
void ResolveVariablesAndSources(WorkloadSpec& spec, const Converter& converter) {
  for (int c = 0; c < spec.checks_size(); ++c) {
    spec.mutable_checks(c)->set_source(converter.Where(absl::StrCat("checks.", c, ".sql")));
  }
  for (int i = 0; i < spec.invariants_size(); ++i) {
    spec.mutable_invariants(i)->set_source(converter.Where(absl::StrCat("invariants.", i, ".sql")));
  }
  for (int s = 0; s < spec.scenarios_size(); ++s) {
    for (int q = 0; q < spec.scenarios(s).query_types_size(); ++q) {
      v1::QueryType& query_type = *spec.mutable_scenarios(s)->mutable_query_types(q);
      // Where each statement is written, for the messages of the agents that run it.
      for (int t = 0; t < query_type.statements_size(); ++t) {
        query_type.mutable_statements(t)->set_source(converter.Where(
            absl::StrCat("scenarios.", s, ".query_types.", q, ".statements.", t, ".sql")));
      }
      std::set<std::string> names;
      for (const v1::Variable& variable : query_type.let()) names.insert(variable.name());
      if (names.empty()) continue;
      for (int t = 0; t < query_type.statements_size(); ++t) {
        v1::Statement& statement = *query_type.mutable_statements(t);
        for (int p = 0; p < statement.params_size(); ++p) {
          v1::Generator& param = *statement.mutable_params(p);
          const std::string path =
              absl::StrCat("scenarios.", s, ".query_types.", q, ".statements.", t, ".params.", p);
          if (param.kind_case() == v1::Generator::kConstant && converter.IsBareScalar(path) &&
              names.contains(param.constant())) {
            std::string name = param.constant();  // set_variable clears the oneof's constant
            param.set_variable(std::move(name));
          }
        }
      }
    }
  }
}

// The file's `options:` with the plan's values in their place.
absl::StatusOr<std::map<std::string, std::string>> ReadOptions(
    const YAML::Node& root, absl::string_view source,
    const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> options;
  const YAML::Node node = root["options"];
  auto where = [&](const YAML::Node& at) {
    return absl::StrCat(source, ":", at.Mark().line + 1, ":", at.Mark().column + 1);
  };
  if (node) {
    if (!node.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(node), ": options: expected a map from name to number"));
    }
    for (const auto& entry : node) {
      const std::string name = entry.first.Scalar();
      double value = 0;
      if (!entry.second.IsScalar() || !ParseNumber(entry.second.Scalar(), value)) {
        return absl::InvalidArgumentError(absl::StrCat(where(entry.second), ": options.", name,
                                                       ": expected a number, got ",
                                                       Describe(entry.second)));
      }
      options[name] = entry.second.Scalar();
    }
  }
  for (const auto& [name, value] : overrides) {
    auto it = options.find(name);
    if (it == options.end()) {
      std::vector<std::string> known;
      for (const auto& [key, unused] : options) known.push_back(key);
      return FieldError(absl::StrCat("workload_options.", name),
                        absl::StrCat("unknown option of workload ", Quote(source), " (known: ",
                                     known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
    }
    double number = 0;
    if (!ParseNumber(value, number)) {
      return FieldError(absl::StrCat("workload_options.", name),
                        absl::StrCat("expected a number, got ", Quote(value)));
    }
    it->second = value;
  }
  return options;
}

}  // namespace

absl::StatusOr<WorkloadSpec> ParseWorkload(std::string_view yaml_text, std::string_view source_name,
                                           const std::map<std::string, std::string>& options) {
  const std::string source(source_name);
  if (yaml_text.size() > kMaxWorkloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": larger than ", kMaxWorkloadBytes,
                                                   " bytes; a workload file is far smaller"));
  }
  YAML::Node root;
  try {
    // Before any node is built: aliases would otherwise be expanded while converting.
    if (absl::Status status =
            CheckYamlExpansion(std::string(yaml_text), source, kMaxYamlExpandedBytes);
        !status.ok()) {
      return status;
    }
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", e.mark.line + 1, ":",
                                                   e.mark.column + 1, ": ", e.msg));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected a map with name, options, tables, checks, scenarios"));
  }
  // yaml-cpp throws where a node is not what an accessor expects; every path below checks
  // first, and this is the net for any it missed (found by fuzzing): an error, never a crash.
  try {
    absl::StatusOr<std::map<std::string, std::string>> values = ReadOptions(root, source, options);
    if (!values.ok()) return values.status();
    Converter converter(source, *values);
    WorkloadSpec spec;
    if (absl::Status status = converter.ReadMessage(root, "", spec); !status.ok()) return status;
    ResolveVariablesAndSources(spec, converter);
    for (const auto& [name, value] : *values) (*spec.mutable_options())[name] = value;
    if (absl::Status status = CheckWorkloadSpec(
            spec, [&](const std::string& path,
                      absl::string_view message) { return converter.ErrorAt(path, message); });
        !status.ok()) {
      return status;
    }
    return spec;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", e.mark.line + 1, ":",
                                                   e.mark.column + 1, ": ", e.msg));
  }
}

absl::StatusOr<WorkloadSpec> LoadWorkloadFile(const std::string& path,
                                              const std::map<std::string, std::string>& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot read workload file ", path, ": ",
                                            std::strerror(errno)));
  }
  std::string text;
  text.resize(kMaxWorkloadBytes + 1);
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(file.gcount()));
  return ParseWorkload(text, path, options);
}

bool IsYamlWorkload(const std::string& workload) {
  return workload.find('/') != std::string::npos || absl::EndsWith(workload, ".yaml") ||
         absl::EndsWith(workload, ".yml") || BuiltinWorkloadFiles().contains(workload);
}

absl::StatusOr<WorkloadSpec> ResolveWorkload(const std::string& name_or_path,
                                             const std::map<std::string, std::string>& options) {
  if (auto it = BuiltinWorkloadFiles().find(name_or_path); it != BuiltinWorkloadFiles().end()) {
    return ParseWorkload(it->second, absl::StrCat("workloads/", name_or_path, ".yaml"), options);
  }
  return LoadWorkloadFile(name_or_path, options);
}

std::vector<std::string> BuiltinWorkloadNames() {
  std::vector<std::string> names = {kOltpWorkloadName, kTpccWorkloadName};
  for (const auto& [name, text] : BuiltinWorkloadFiles()) names.push_back(name);
  return names;
}

absl::Status ResolvePlanWorkload(v1::Plan& plan) {
  if (plan.has_workload_spec() || plan.workload() == kOltpWorkloadName ||
      plan.workload() == kTpccWorkloadName) {
    return absl::OkStatus();
  }
  if (!IsYamlWorkload(plan.workload())) {
    return FieldError("workload",
                      absl::StrCat("unknown workload '", plan.workload(),
                                   "' (built-in: ", absl::StrJoin(BuiltinWorkloadNames(), ", "),
                                   "; or the path of a workload file)"));
  }
  absl::StatusOr<WorkloadSpec> spec = ResolveWorkload(
      plan.workload(), {plan.workload_options().begin(), plan.workload_options().end()});
  if (!spec.ok()) return spec.status();
  *plan.mutable_workload_spec() = *std::move(spec);
  return absl::OkStatus();
}

}  // namespace dbload
