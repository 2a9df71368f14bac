#include "plan/plan_parser.h"
#include "plan/plan_parser_yaml.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/field_error.h"
#include "plan/plan_limits.h"
#include "plan/stage_program.h"
#include "yaml/yaml_expansion.h"
#include "yaml/yaml_text.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"
#include "yaml-cpp/yaml.h"

namespace dbload {
namespace {

using dbload::v1::ClosedLoad;
using dbload::v1::AbortRules;
using dbload::v1::KneeSearch;
using dbload::v1::Level;
using dbload::v1::Load;
using dbload::v1::NoopLatency;
using dbload::v1::OpenLoad;
using dbload::v1::Plan;
using dbload::v1::Stage;
using dbload::v1::StopRule;
using dbload::v1::Target;

constexpr uint64_t kDefaultSeed = 1;
constexpr uint32_t kDefaultOpenLoopPool = 8;
constexpr char kDefaultHost[] = "127.0.0.1";
constexpr uint32_t kDefaultPostgreSqlPort = 5432;
constexpr uint32_t kDefaultMySqlPort = 3306;
constexpr uint32_t kMaxPort = 65535;
// An abort rule without `for` must hold this long: one bad second is noise, five are a trend.
constexpr double kMaxStaircaseSteps = 100'000;
constexpr uint32_t kDefaultKneeRefine = 3;
constexpr uint32_t kMaxAgents = 100'000;
constexpr uint32_t kMaxKneeRefine = 20;
constexpr int64_t kDefaultAbortForNs = 5'000'000'000;
constexpr char kDriverChoices[] = "postgresql, mysql, noop";
// A password is a line, not a document; the bound keeps a mistaken path (/dev/zero) harmless.
constexpr size_t kMaxPasswordBytes = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// The YAML schema of a plan: which keys each map may hold. It is the one list that unknown-key
// checks, "did you mean" suggestions and --set path checks all consult, so they cannot disagree.

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
const FieldSpec* FieldList::begin() const { return data; }
const FieldSpec* FieldList::end() const { return data + size; }

template <size_t N>
constexpr FieldList ListOf(const FieldSpec (&specs)[N]) {
  return FieldList{specs, N};
}
constexpr FieldSpec Value(absl::string_view name) { return {name, FieldKind::kValue, {}}; }
constexpr FieldSpec Map(absl::string_view name, FieldList fields) {
  return {name, FieldKind::kMap, fields};
}

constexpr FieldSpec kNoopFields[] = {Value("fixed"), Value("exponential_mean")};
constexpr FieldSpec kTargetFields[] = {Value("driver"),
                                       Value("host"),
                                       Value("port"),
                                       Value("socket"),
                                       Value("user"),
                                       Value("password_file"),
                                       Value("password_env"),
                                       Value("database"),
                                       Value("pool"),
                                       Value("connect_timeout"),
                                       Map("noop", ListOf(kNoopFields))};
constexpr FieldSpec kOpenFields[] = {Value("rate"), Value("arrival")};
constexpr FieldSpec kClosedFields[] = {Value("clients"), Value("think_time")};
constexpr FieldSpec kLoadFields[] = {Map("open", ListOf(kOpenFields)),
                                     Map("closed", ListOf(kClosedFields))};
constexpr FieldSpec kStopFields[] = {Value("duration"), Value("queries")};
constexpr FieldSpec kLevelFields[] = {Value("from"), Value("to"), Value("step"), Value("every"),
                                      Value("max")};
constexpr FieldSpec kKneeFields[] = {Value("from"),  Value("step"),   Value("max"),
                                     Value("every"), Value("refine"), Value("p99"),
                                     Value("errors"), Value("achieved")};
constexpr FieldSpec kStageFields[] = {Value("name"), Value("duration"), Value("queries"),
                                      {"rate", FieldKind::kLevel, ListOf(kLevelFields)},
                                      {"clients", FieldKind::kLevel, ListOf(kLevelFields)},
                                      Map("knee", ListOf(kKneeFields))};
constexpr FieldSpec kAgentsFields[] = {Value("min"), Value("wait")};
constexpr FieldSpec kAbortFields[] = {Value("p99_above"), Value("error_rate_above"),
                                      Value("achieved_below"), Value("for")};
constexpr FieldSpec kProbeFields[] = {Value("enabled"), Value("interval"), Value("haproxy_stats")};
constexpr FieldSpec kExplainFields[] = {Value("enabled")};
constexpr FieldSpec kGeneratorFields[] = {Value("max_agent_cpu"), Value("max_schedule_lag_p99"),
                                          Value("max_dispatch_lag_share"),
                                          Value("min_dispatch_lag_p99")};
constexpr FieldSpec kPlanFields[] = {Value("name"),
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

// Debian's Abseil has its own string_view; the public API speaks std::string_view.
absl::string_view AsAbsl(std::string_view text) { return {text.data(), text.size()}; }

const FieldSpec* FindField(FieldList fields, absl::string_view name) {
  for (const FieldSpec& spec : fields) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// The spec of a map the converter knows exists in the schema above.
const FieldSpec& MapSpec(FieldList fields, absl::string_view name) {
  return *FindField(fields, name);
}

// Optimal string alignment distance: edits, plus swapping two neighbours ("hots" -> "host").
int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The candidate close enough to `name` to be what was meant, if exactly one is closest.
std::optional<absl::string_view> Nearest(absl::string_view name,
                                         const std::vector<absl::string_view>& candidates) {
  const std::string lowered = absl::AsciiStrToLower(name);
  // One typo in a short word, two in a longer one; beyond that a suggestion is a guess.
  const int allowed = std::clamp(static_cast<int>(name.size()) / 3, 1, 2);
  std::optional<absl::string_view> best;
  int best_distance = allowed + 1;
  for (absl::string_view candidate : candidates) {
    const size_t longer = std::max(lowered.size(), candidate.size());
    const size_t shorter = std::min(lowered.size(), candidate.size());
    if (longer - shorter > static_cast<size_t>(allowed)) continue;  // cannot be close enough
    const int distance = EditDistance(lowered, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::vector<absl::string_view> NamesOf(FieldList fields) {
  std::vector<absl::string_view> names;
  for (const FieldSpec& spec : fields) names.push_back(spec.name);
  return names;
}

// ---------------------------------------------------------------------------------------------
// Rendering values and positions in messages.

// A key as it appears inside a dotted path: as written when it is a plain short name.
std::string PathComponent(absl::string_view key) {
  const bool plain =
      !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  return plain ? std::string(key) : Quote(key);
}

std::string JoinPath(absl::string_view parent, absl::string_view key) {
  if (parent.empty()) return PathComponent(key);
  return absl::StrCat(parent, ".", PathComponent(key));
}

std::string Position(absl::string_view source_name, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(source_name);
  // yaml-cpp counts from 0; editors and compilers count from 1.
  return absl::StrCat(source_name, ":", mark.line + 1, ":", mark.column + 1);
}

// Where a value came from: a place in the file, or a --set on the command line.
struct Location {
  std::string text;            // "plans/pg.yaml:3:12", or just the source name
  bool from_override = false;  // a --set value: `text` is the source name
};

std::string ErrorText(const Location& where, absl::string_view field_path,
                      absl::string_view message) {
  if (where.from_override) {
    return absl::StrCat(where.text, ": --set ", field_path, ": ", message);
  }
  if (field_path.empty()) return absl::StrCat(where.text, ": ", message);
  return absl::StrCat(where.text, ": ", field_path, ": ", message);
}

std::string UnknownFieldMessage(absl::string_view key, absl::string_view parent_path,
                                FieldList fields) {
  if (absl::AsciiStrToLower(key) == "password") {
    return "passwords are never written in a plan; use password_file or password_env";
  }
  const std::vector<absl::string_view> names = NamesOf(fields);
  if (std::optional<absl::string_view> nearest = Nearest(key, names)) {
    return absl::StrCat("unknown field; did you mean '", *nearest, "'?");
  }
  return absl::StrCat("unknown field; ", parent_path.empty() ? "a plan" : parent_path,
                      " has: ", absl::StrJoin(names, ", "));
}

std::string IntegerRange(uint64_t min, uint64_t max) {
  return absl::StrCat("an integer from ", min, " to ", max);
}

std::string FormatRate(double rate) { return absl::StrFormat("%.15g", rate); }


bool IsDatabaseDriver(absl::string_view driver) {
  return driver == "postgresql" || driver == "mysql";
}

// ---------------------------------------------------------------------------------------------
// Reading files: bounded, with errno-based messages that never include the content.

// Reads at most `max_bytes + 1` bytes, so that the caller can tell "too large" from "exactly
// at the limit" without reading a huge (or endless) file whole.
absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                            absl::string_view what) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", what, " ", path));
  std::string content;
  char buffer[16 * 1024];
  while (content.size() <= max_bytes) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", what, " ", path));
    }
    if (got == 0) break;
    const size_t keep = std::min(static_cast<size_t>(got), max_bytes + 1 - content.size());
    content.append(buffer, keep);
  }
  close(fd);
  return content;
}

// ---------------------------------------------------------------------------------------------
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
    return absl::InvalidArgumentError(absl::StrCat(Position(source_name, too_deep.mark),
                                                   ": nesting deeper than ", kMaxPlanNesting,
                                                   " levels; a plan needs 3"));
  } catch (const StructureChecker::SecondDocument& second) {
    return absl::InvalidArgumentError(
        absl::StrCat(Position(source_name, second.mark),
                     ": a second YAML document starts here; a plan file holds exactly one"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// --set overrides: edits of the YAML tree, made before conversion so that an overridden value
// goes through exactly the checks (and messages) a value in the file would.

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
        ErrorText(Location{std::string(source_name), true}, field_path, message));
  };

  const std::vector<absl::string_view> keys = absl::StrSplit(path, '.');
  FieldList fields = ListOf(kPlanFields);
  bool free_keys = false;  // inside workload_options, any key is the workload's to judge
  YAML::Node current = root;
  std::string walked;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string key(keys[i]);
    const std::string parent = walked;
    walked = JoinPath(walked, key);
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
        return override_error(walked, absl::StrCat("is a list; --set a field of one element, e.g. "
                                                   "--set ",
                                                   walked, ".0.", spec->fields.data[1].name,
                                                   "=..."));
      }
      YAML::Node list = current[key];
      const size_t size = list.IsSequence() ? list.size() : 0;
      walked = JoinPath(walked, keys[i + 1]);
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
                        JoinPath(walked, kind == FieldKind::kMap ? spec->fields.data[0].name
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

// ---------------------------------------------------------------------------------------------
// YAML tree -> Plan. Checks shape and types (what only the YAML can tell: positions, unknown and
// duplicate keys, explicit zeros); value rules live in ValidatePlanAt, shared with ValidatePlan.

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
  Location Where(absl::string_view path) const {
    absl::string_view current = path;
    while (!current.empty()) {
      if (auto it = locations_.find(current); it != locations_.end()) return it->second;
      const size_t dot = current.rfind('.');
      if (dot == absl::string_view::npos) break;
      current = current.substr(0, dot);
    }
    return Location{std::string(source_name_)};
  }

 private:
  Location LocationOf(const YAML::Node& node, absl::string_view path) const {
    if (overridden_paths_.contains(path)) return Location{std::string(source_name_), true};
    // yaml-cpp places an empty value ("stop:") at the next token, often the next line; the
    // key is where the reader looks.
    if (!node.IsDefined() || node.IsNull()) {
      if (auto it = key_marks_.find(path); it != key_marks_.end()) {
        return Location{Position(source_name_, it->second)};
      }
    }
    return Location{Position(source_name_, node.Mark())};
  }
  void Record(const YAML::Node& node, const std::string& path) {
    locations_[path] = LocationOf(node, path);
  }
  absl::Status Error(const YAML::Node& node, absl::string_view path, absl::string_view message) {
    return absl::InvalidArgumentError(ErrorText(LocationOf(node, path), path, message));
  }
  // Keys are always from the file (--set writes values), so their own position is the place.
  absl::Status KeyError(const YAML::Node& key, absl::string_view path, absl::string_view message) {
    return absl::InvalidArgumentError(
        ErrorText(Location{Position(source_name_, key.Mark())}, path, message));
  }
  absl::Status Missing(const YAML::Node& map_node, const std::string& map_path,
                       absl::string_view key, absl::string_view hint) {
    return absl::InvalidArgumentError(ErrorText(
        LocationOf(map_node, map_path), JoinPath(map_path, key), absl::StrCat("missing; ", hint)));
  }

  absl::StatusOr<MapEntries> ReadMap(const YAML::Node& node, const std::string& path,
                                     const FieldSpec& spec);
  absl::StatusOr<std::string> ReadText(const YAML::Node& node, const std::string& path,
                                       absl::string_view expected);
  template <typename Int>
  absl::StatusOr<Int> ReadInteger(const YAML::Node& node, const std::string& path, Int min,
                                  Int max);
  absl::StatusOr<double> ReadNumber(const YAML::Node& node, const std::string& path);
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
  std::map<std::string, Location, std::less<>> locations_;
  std::map<std::string, YAML::Mark, std::less<>> key_marks_;
};

absl::StatusOr<MapEntries> PlanConverter::ReadMap(const YAML::Node& node, const std::string& path,
                                                  const FieldSpec& spec) {
  if (!path.empty()) Record(node, path);
  if (!node.IsMap()) {
    std::string expected = "a map";
    if (spec.kind == FieldKind::kMap) {
      expected = absl::StrCat("a map with fields ", absl::StrJoin(NamesOf(spec.fields), ", "));
    }
    return Error(node, path, absl::StrCat("expected ", expected, ", got ", Describe(node)));
  }
  MapEntries result;
  std::map<std::string, YAML::Mark> first_seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      return KeyError(key, path, absl::StrCat("expected field names as keys, got ", Describe(key)));
    }
    const std::string& name = key.Scalar();
    const std::string field_path = JoinPath(path, name);
    // yaml-cpp keeps both entries of a repeated key (and lookups see only the first): a
    // duplicate would silently lose one of two values the author meant.
    if (auto [it, inserted] = first_seen.emplace(name, key.Mark()); !inserted) {
      return KeyError(
          key, field_path,
          absl::StrCat("duplicate field; it is already set at line ", it->second.line + 1));
    }
    if (spec.kind == FieldKind::kMap && FindField(spec.fields, name) == nullptr) {
      return KeyError(key, field_path, UnknownFieldMessage(name, path, spec.fields));
    }
    key_marks_[field_path] = key.Mark();
    result.entries.emplace_back(name, entry.second);
  }
  return result;
}

absl::StatusOr<std::string> PlanConverter::ReadText(const YAML::Node& node, const std::string& path,
                                                    absl::string_view expected) {
  Record(node, path);
  if (!node.IsScalar()) {
    return Error(node, path, absl::StrCat("expected ", expected, ", got ", Describe(node)));
  }
  return node.Scalar();
}

template <typename Int>
absl::StatusOr<Int> PlanConverter::ReadInteger(const YAML::Node& node, const std::string& path,
                                               Int min, Int max) {
  const std::string expected = IntegerRange(min, max);
  absl::StatusOr<std::string> text = ReadText(node, path, expected);
  if (!text.ok()) return text.status();
  Int value{};
  const char* const end = text->data() + text->size();
  const auto [stop, error] = std::from_chars(text->data(), end, value);
  if (text->empty() || error != std::errc() || stop != end || value < min || value > max) {
    return Error(node, path, absl::StrCat("expected ", expected, ", got ", Quote(*text)));
  }
  return value;
}

absl::StatusOr<double> PlanConverter::ReadNumber(const YAML::Node& node, const std::string& path) {
  absl::StatusOr<std::string> text = ReadText(node, path, "a number");
  if (!text.ok()) return text.status();
  double value = 0;
  const char* const end = text->data() + text->size();
  const auto [stop, error] = std::from_chars(text->data(), end, value);
  if (text->empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    return Error(node, path, absl::StrCat("expected a number, got ", Quote(*text)));
  }
  return value;
}

absl::StatusOr<int64_t> PlanConverter::ReadDuration(const YAML::Node& node,
                                                    const std::string& path) {
  absl::StatusOr<std::string> text = ReadText(node, path, "a duration such as 250ms, 5s or 1m30s");
  if (!text.ok()) return text.status();
  absl::StatusOr<int64_t> nanos = ParseDurationNanos(*text);
  if (!nanos.ok()) return Error(node, path, nanos.status().message());
  return nanos;
}

absl::Status PlanConverter::Convert(const YAML::Node& root, Plan& plan) {
  static constexpr FieldSpec kPlan{"", FieldKind::kMap, ListOf(kPlanFields)};
  absl::StatusOr<MapEntries> fields = ReadMap(root, "", kPlan);
  if (!fields.ok()) return fields.status();
  bool seed_given = false;
  for (const auto& [name, value] : fields->entries) {
    absl::Status status;
    if (name == "name") {
      absl::StatusOr<std::string> text = ReadText(value, name, "a string");
      status = text.status();
      if (text.ok()) plan.set_name(*std::move(text));
    } else if (name == "target") {
      status = ConvertTarget(value, *plan.mutable_target());
    } else if (name == "workload") {
      absl::StatusOr<std::string> text = ReadText(value, name, "a workload name, e.g. oltp");
      status = text.status();
      if (text.ok()) plan.set_workload(*std::move(text));
    } else if (name == "scenario") {
      absl::StatusOr<std::string> text = ReadText(value, name, "a scenario name");
      status = text.status();
      if (text.ok()) plan.set_scenario(*std::move(text));
    } else if (name == "workload_options") {
      status = ConvertWorkloadOptions(value, plan);
    } else if (name == "load") {
      status = ConvertLoad(value, *plan.mutable_load());
    } else if (name == "warmup") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, name);
      status = nanos.status();
      if (nanos.ok()) plan.set_warmup_ns(*nanos);
    } else if (name == "stop") {
      status = ConvertStop(value, *plan.mutable_stop());
    } else if (name == "stages") {
      status = ConvertStages(value, plan);
    } else if (name == "abort") {
      status = ConvertAbort(value, *plan.mutable_abort());
    } else if (name == "agents") {
      status = ConvertAgents(value, *plan.mutable_agents());
    } else if (name == "probe") {
      status = ConvertProbe(value, *plan.mutable_probe());
    } else if (name == "explain") {
      status = ConvertExplain(value, *plan.mutable_explain());
    } else if (name == "generator") {
      status = ConvertGenerator(value, *plan.mutable_generator());
    } else if (name == "seed") {
      absl::StatusOr<uint64_t> seed =
          ReadInteger<uint64_t>(value, name, 0, std::numeric_limits<uint64_t>::max());
      status = seed.status();
      if (seed.ok()) plan.set_seed(*seed);
      seed_given = true;
    }
    if (!status.ok()) return status;
  }
  // Unlike a proto, YAML can tell "absent" from 0; an absent seed is 1 so that runs repeat.
  if (!seed_given) plan.set_seed(kDefaultSeed);
  if (plan.stages_size() == 0 && !amount_given_) {
    if (open_node_) {
      return Missing(*open_node_, "load.open", "rate",
                     "an open loop needs a rate (transactions per second), or stages");
    }
    if (closed_node_) {
      return Missing(*closed_node_, "load.closed", "clients",
                     "a closed loop needs a number of clients, or stages");
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertTarget(const YAML::Node& node, Target& target) {
  const std::string path = "target";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "target"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
    absl::Status status;
    std::string* text_field = nullptr;
    if (name == "driver") text_field = target.mutable_driver();
    if (name == "host") text_field = target.mutable_host();
    if (name == "socket") text_field = target.mutable_socket();
    if (name == "user") text_field = target.mutable_user();
    if (name == "password_file") text_field = target.mutable_password_file();
    if (name == "password_env") text_field = target.mutable_password_env();
    if (name == "database") text_field = target.mutable_database();
    if (text_field != nullptr) {
      absl::StatusOr<std::string> text = ReadText(value, field_path, "a string");
      status = text.status();
      if (text.ok()) *text_field = *std::move(text);
    } else if (name == "port") {
      absl::StatusOr<uint32_t> port = ReadInteger<uint32_t>(value, field_path, 1, kMaxPort);
      status = port.status();
      if (port.ok()) target.set_port(*port);
    } else if (name == "pool") {
      absl::StatusOr<uint32_t> pool = ReadInteger<uint32_t>(value, field_path, 1, kMaxPool);
      status = pool.status();
      if (pool.ok()) target.set_pool(*pool);
    } else if (name == "connect_timeout") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      status = nanos.status();
      if (nanos.ok()) target.set_connect_timeout_ns(*nanos);
    } else if (name == "noop") {
      status = ConvertNoop(value, *target.mutable_noop());
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertNoop(const YAML::Node& node, NoopLatency& noop) {
  const std::string path = "target.noop";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kTargetFields), "noop"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    absl::StatusOr<int64_t> nanos = ReadDuration(value, JoinPath(path, name));
    if (!nanos.ok()) return nanos.status();
    if (name == "fixed") noop.set_fixed_ns(*nanos);
    if (name == "exponential_mean") noop.set_exponential_mean_ns(*nanos);
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertLoad(const YAML::Node& node, Load& load) {
  const std::string path = "load";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "load"));
  if (!fields.ok()) return fields.status();
  const YAML::Node* open = fields->Find("open");
  const YAML::Node* closed = fields->Find("closed");
  if (open != nullptr && closed != nullptr) {
    return Error(node, path, "set either open (a rate) or closed (a number of clients), not both");
  }
  if (open != nullptr) return ConvertOpen(*open, *load.mutable_open());
  if (closed != nullptr) return ConvertClosed(*closed, *load.mutable_closed());
  return absl::OkStatus();  // neither: ValidatePlan says what is missing
}

absl::Status PlanConverter::ConvertOpen(const YAML::Node& node, OpenLoad& open) {
  const std::string path = "load.open";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kLoadFields), "open"));
  if (!fields.ok()) return fields.status();
  open_node_ = node;
  amount_given_ = fields->Find("rate") != nullptr;
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
    if (name == "rate") {
      absl::StatusOr<double> rate = ReadNumber(value, field_path);
      if (!rate.ok()) return rate.status();
      open.set_rate(*rate);
    } else if (name == "arrival") {
      absl::StatusOr<std::string> text = ReadText(value, field_path, "uniform or poisson");
      if (!text.ok()) return text.status();
      const std::string arrival = absl::AsciiStrToLower(*text);
      if (arrival == "uniform") {
        open.set_arrival(OpenLoad::UNIFORM);
      } else if (arrival == "poisson") {
        open.set_arrival(OpenLoad::POISSON);
      } else {
        std::string message = absl::StrCat("expected uniform or poisson, got ", Quote(*text));
        if (std::optional<absl::string_view> nearest = Nearest(*text, {"uniform", "poisson"})) {
          absl::StrAppend(&message, "; did you mean '", *nearest, "'?");
        }
        return Error(value, field_path, message);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertClosed(const YAML::Node& node, ClosedLoad& closed) {
  const std::string path = "load.closed";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kLoadFields), "closed"));
  if (!fields.ok()) return fields.status();
  closed_node_ = node;
  amount_given_ = fields->Find("clients") != nullptr;
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
    if (name == "clients") {
      absl::StatusOr<uint32_t> clients =
          ReadInteger<uint32_t>(value, field_path, 1, kMaxClosedClients);
      if (!clients.ok()) return clients.status();
      closed.set_clients(*clients);
    } else if (name == "think_time") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      closed.set_think_time_ns(*nanos);
    }
  }
  return absl::OkStatus();
}

absl::Status PlanConverter::ConvertStop(const YAML::Node& node, StopRule& stop) {
  const std::string path = "stop";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "stop"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
    if (name == "duration") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      if (!nanos.ok()) return nanos.status();
      // In the proto 0 means "no duration rule"; written out, it is a mistake worth naming.
      if (*nanos == 0) return Error(value, field_path, "must be > 0, got 0");
      stop.set_duration_ns(*nanos);
    } else if (name == "queries") {
      absl::StatusOr<uint64_t> queries =
          ReadInteger<uint64_t>(value, field_path, 1, std::numeric_limits<uint64_t>::max());
      if (!queries.ok()) return queries.status();
      stop.set_queries(*queries);
    }
  }
  return absl::OkStatus();
}

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
    const std::string stage_path = JoinPath(path, absl::StrCat(i));
    absl::StatusOr<MapEntries> fields = ReadMap(node[i], stage_path, kStage);
    if (!fields.ok()) return fields.status();
    Stage& stage = *plan.add_stages();
    for (const auto& [name, value] : fields->entries) {
      const std::string field_path = JoinPath(stage_path, name);
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
    const std::string field_path = JoinPath(path, name);
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
    const std::string field_path = JoinPath(path, name);
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

absl::Status PlanConverter::ConvertAgents(const YAML::Node& node,
                                          dbload::v1::AgentRequirement& agents) {
  const std::string path = "agents";
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "agents"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
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
    const std::string field_path = JoinPath(path, name);
    if (name == "enabled") {
      absl::StatusOr<std::string> text = ReadText(value, field_path, "true or false");
      if (!text.ok()) return text.status();
      if (*text != "true" && *text != "false") {
        return Error(value, field_path, absl::StrCat("expected true or false, got \"", *text, "\""));
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
    const std::string field_path = JoinPath(path, name);
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
  absl::StatusOr<MapEntries> fields = ReadMap(node, path, MapSpec(ListOf(kPlanFields), "generator"));
  if (!fields.ok()) return fields.status();
  for (const auto& [name, value] : fields->entries) {
    const std::string field_path = JoinPath(path, name);
    if (name == "max_agent_cpu") {
      absl::StatusOr<double> fraction = ReadNumber(value, field_path);
      if (!fraction.ok()) return fraction.status();
      if (!(*fraction > 0 && *fraction <= 1)) {
        return Error(value, field_path, "must be a fraction of the agent's cores, above 0 and at most 1");
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
    const std::string field_path = JoinPath(path, name);
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

absl::Status PlanConverter::ConvertWorkloadOptions(const YAML::Node& node, Plan& plan) {
  const std::string path = "workload_options";
  absl::StatusOr<MapEntries> fields =
      ReadMap(node, path, MapSpec(ListOf(kPlanFields), "workload_options"));
  if (!fields.ok()) return fields.status();
  auto& options = *plan.mutable_workload_options();
  for (const auto& [name, value] : fields->entries) {
    absl::StatusOr<std::string> text =
        ReadText(value, JoinPath(path, name), "a single value (a number or a string)");
    if (!text.ok()) return text.status();
    options[name] = *std::move(text);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Value rules, for plans from YAML (with positions) and plans built in code (without).

using Locator = std::function<Location(absl::string_view field_path)>;

absl::Status Problem(const Locator& where, absl::string_view field_path,
                     absl::string_view message) {
  return absl::InvalidArgumentError(ErrorText(where(field_path), field_path, message));
}

absl::Status ValidateTarget(const Plan& plan, const Locator& where) {
  if (!plan.has_target()) {
    return Problem(where, "target",
                   "missing; every plan names its target, e.g. target: {driver: postgresql, "
                   "host: 127.0.0.1, port: 5432}");
  }
  const Target& target = plan.target();
  if (target.driver().empty()) {
    return Problem(where, "target.driver",
                   absl::StrCat("missing; expected one of ", kDriverChoices));
  }
  const bool database_driver = IsDatabaseDriver(target.driver());
  if (!database_driver && target.driver() != "noop") {
    std::string message =
        absl::StrCat("expected one of ", kDriverChoices, ", got ", Quote(target.driver()));
    if (std::optional<absl::string_view> nearest =
            Nearest(target.driver(), {"postgresql", "mysql", "noop"})) {
      absl::StrAppend(&message, "; did you mean '", *nearest, "'?");
    }
    return Problem(where, "target.driver", message);
  }
  if (!target.host().empty() && !target.socket().empty()) {
    return Problem(where, "target.socket", "set either host (and port) or socket, not both");
  }
  // Any host may be named: consent to load a machine is given where the load comes from (each
  // connecting process's --allow-target, net/target_allow_list.h), not in the plan.
  // One host, as --allow-target can judge it: libpq would read "a,b" as two hosts and a path as
  // a socket directory.
  if (!target.host().empty() &&
      !std::all_of(target.host().begin(), target.host().end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
               c == '_' || c == ':' || c == '%';
      })) {
    std::string message =
        absl::StrCat("expected one host name or IP address, got ", Quote(target.host()));
    if (absl::StartsWith(target.host(), "/")) {
      absl::StrAppend(&message, "; a socket directory goes in target.socket");
    }
    return Problem(where, "target.host", message);
  }
  if (database_driver && target.host().empty() && target.socket().empty()) {
    return Problem(where, "target.host", "missing; set host (and port) or socket");
  }
  if (target.port() > kMaxPort) {
    return Problem(where, "target.port",
                   absl::StrCat("expected ", IntegerRange(1, kMaxPort), ", got ", target.port()));
  }
  if (database_driver && target.has_noop()) {
    return Problem(
        where, "target.noop",
        absl::StrCat("only the noop driver simulates latency; driver is ", Quote(target.driver())));
  }
  if (!target.password_file().empty() && !target.password_env().empty()) {
    return Problem(where, "target.password_env",
                   "set either password_file or password_env, not both");
  }
  if (target.pool() < 1 || target.pool() > kMaxPool) {
    return Problem(where, "target.pool",
                   absl::StrCat("expected ", IntegerRange(1, kMaxPool), ", got ", target.pool()));
  }
  if (target.connect_timeout_ns() < 0) {
    return Problem(
        where, "target.connect_timeout",
        absl::StrCat("must be >= 0, got ", FormatDurationNanos(target.connect_timeout_ns())));
  }
  if (target.noop().fixed_ns() < 0) {
    return Problem(
        where, "target.noop.fixed",
        absl::StrCat("must be >= 0, got ", FormatDurationNanos(target.noop().fixed_ns())));
  }
  if (target.noop().exponential_mean_ns() < 0) {
    return Problem(where, "target.noop.exponential_mean",
                   absl::StrCat("must be >= 0, got ",
                                FormatDurationNanos(target.noop().exponential_mean_ns())));
  }
  return absl::OkStatus();
}

// The most clients a closed-loop plan ever runs at once: its clients, or its stages' highest.
uint32_t PeakClients(const Plan& plan) {
  if (plan.stages_size() == 0) return plan.load().closed().clients();
  double peak = 0;
  for (const Stage& stage : plan.stages()) {
    peak = std::max(peak, stage.has_knee() ? stage.knee().max() : MaxLevel(stage.clients()));
  }
  return static_cast<uint32_t>(std::min<double>(peak, kMaxClosedClients));
}

absl::Status ValidateLoad(const Plan& plan, const Locator& where) {
  const bool staged = plan.stages_size() > 0;
  switch (plan.load().shape_case()) {
    case Load::SHAPE_NOT_SET:
      return Problem(where, "load",
                     staged ? "missing; with stages, say open: {} (each stage gives a rate) or "
                              "closed: {} (each stage gives clients)"
                            : "missing; set open: {rate: N} (transactions per second) or "
                              "closed: {clients: N}");
    case Load::kOpen: {
      const OpenLoad& open = plan.load().open();
      if (staged) {
        if (open.rate() != 0) {
          return Problem(where, "load.open.rate",
                         "with stages, each stage gives its rate; remove this one");
        }
      } else if (!(open.rate() > 0)) {  // also catches NaN
        return Problem(where, "load.open.rate",
                       absl::StrCat("must be > 0, got ", FormatRate(open.rate())));
      } else if (open.rate() > kMaxOpenRate) {
        return Problem(where, "load.open.rate",
                       absl::StrCat("must be at most ", FormatRate(kMaxOpenRate), ", got ",
                                    FormatRate(open.rate())));
      }
      if (open.arrival() != OpenLoad::UNIFORM && open.arrival() != OpenLoad::POISSON) {
        return Problem(where, "load.open.arrival",
                       absl::StrCat("expected uniform or poisson, got ",
                                    OpenLoad::Arrival_Name(open.arrival()).empty()
                                        ? absl::StrCat(static_cast<int>(open.arrival()))
                                        : OpenLoad::Arrival_Name(open.arrival())));
      }
      return absl::OkStatus();
    }
    case Load::kClosed: {
      const ClosedLoad& closed = plan.load().closed();
      if (staged) {
        if (closed.clients() != 0) {
          return Problem(where, "load.closed.clients",
                         "with stages, each stage gives its clients; remove this one");
        }
      } else if (closed.clients() < 1 || closed.clients() > kMaxClosedClients) {
        return Problem(where, "load.closed.clients",
                       closed.clients() == 0
                           ? std::string("missing; a closed loop needs a number of clients, or "
                                         "stages")
                           : absl::StrCat("expected ", IntegerRange(1, kMaxClosedClients),
                                          ", got ", closed.clients()));
      }
      if (closed.think_time_ns() < 0) {
        return Problem(
            where, "load.closed.think_time",
            absl::StrCat("must be >= 0, got ", FormatDurationNanos(closed.think_time_ns())));
      }
      if (plan.target().pool() < PeakClients(plan)) {
        return Problem(where, "target.pool",
                       absl::StrCat("a closed loop needs a connection per client: must be at "
                                    "least ",
                                    staged ? "the most clients its stages run"
                                           : "load.closed.clients",
                                    " (", PeakClients(plan), "), got ", plan.target().pool()));
      }
      return absl::OkStatus();
    }
  }
  return Problem(where, "load", "unknown load shape");
}

// Limits of one stage's level: amounts in range, a staircase that rises and ends.
absl::Status ValidateLevel(const Level& level, const std::string& path, bool clients,
                           const Locator& where) {
  const double low = clients ? 1 : 0;
  const double high = clients ? kMaxClosedClients : kMaxOpenRate;
  auto amount = [&](absl::string_view field, double value) -> absl::Status {
    const std::string field_path = level.shape() == Level::CONSTANT && field == "from"
                                       ? path
                                       : JoinPath(path, field);
    if (clients ? !(value >= low) : !(value > low)) {
      return Problem(where, field_path,
                     absl::StrCat("must be ", clients ? ">= 1" : "> 0", ", got ", FormatRate(value),
                                  clients ? "" : " (a rate ramp starts at a small rate, e.g. 1)"));
    }
    if (value > high) {
      return Problem(where, field_path,
                     absl::StrCat("must be at most ", FormatRate(high), ", got ", FormatRate(value)));
    }
    return absl::OkStatus();
  };
  if (absl::Status status = amount("from", level.from()); !status.ok()) return status;
  if (level.shape() == Level::RAMP) return amount("to", level.to());
  if (level.shape() != Level::STAIRCASE) return absl::OkStatus();
  if (absl::Status status = amount("step", level.step()); !status.ok()) return status;
  if (absl::Status status = amount("max", level.max()); !status.ok()) return status;
  if (level.max() < level.from()) {
    return Problem(where, JoinPath(path, "max"),
                   absl::StrCat("must be at least from (", FormatRate(level.from()), "), got ",
                                FormatRate(level.max())));
  }
  if (level.every_ns() <= 0) {
    return Problem(where, JoinPath(path, "every"),
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(level.every_ns())));
  }
  if ((level.max() - level.from()) / level.step() > kMaxStaircaseSteps) {
    return Problem(where, JoinPath(path, "step"),
                   absl::StrCat("makes more than ", kMaxStaircaseSteps,
                                " steps from from to max; take bigger steps"));
  }
  return absl::OkStatus();
}

// A knee search: a rising sequence of steps, long enough to judge, and an SLO to judge them by.
absl::Status ValidateKnee(const Stage& stage, const std::string& path, bool open,
                          const Locator& where) {
  const KneeSearch& knee = stage.knee();
  const std::string knee_path = JoinPath(path, "knee");
  for (const char* other : {"rate", "clients", "duration", "queries"}) {
    const bool set = (std::string_view(other) == "rate" && stage.has_rate()) ||
                     (std::string_view(other) == "clients" && stage.has_clients()) ||
                     (std::string_view(other) == "duration" && stage.duration_ns() != 0) ||
                     (std::string_view(other) == "queries" && stage.queries() != 0);
    if (set) {
      return Problem(where, JoinPath(path, other),
                     "a knee-search stage sets its load and length itself; remove this");
    }
  }
  Level steps;
  steps.set_shape(Level::STAIRCASE);
  steps.set_from(knee.from());
  steps.set_step(knee.step());
  steps.set_max(knee.max());
  steps.set_every_ns(knee.every_ns());
  if (absl::Status status = ValidateLevel(steps, knee_path, !open, where); !status.ok()) {
    return status;
  }
  if (!open && (knee.from() != std::floor(knee.from()) || knee.step() != std::floor(knee.step()) ||
                knee.max() != std::floor(knee.max()))) {
    return Problem(where, knee_path, "clients are whole numbers: from, step and max too");
  }
  if (knee.every_ns() < kSecond) {
    return Problem(where, JoinPath(knee_path, "every"),
                   absl::StrCat("must be at least 1s (a step is judged on whole reporting "
                                "intervals), got ",
                                FormatDurationNanos(knee.every_ns())));
  }
  if (knee.p99_ns() < 0) {
    return Problem(where, JoinPath(knee_path, "p99"),
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(knee.p99_ns())));
  }
  for (const auto& [field, value] :
       {std::pair{"errors", knee.errors()}, std::pair{"achieved", knee.achieved()}}) {
    if (!(value >= 0 && value <= 1)) {
      return Problem(where, JoinPath(knee_path, field),
                     absl::StrCat("expected a fraction from 0 to 1, got ", FormatRate(value)));
    }
  }
  if (knee.achieved() > 0 && !open) {
    return Problem(where, JoinPath(knee_path, "achieved"),
                   "only an open loop has a target rate to achieve");
  }
  if (knee.p99_ns() == 0 && knee.errors() == 0 && knee.achieved() == 0) {
    return Problem(where, knee_path,
                   "missing an SLO; set p99 (a time), errors or achieved (fractions), or several");
  }
  return absl::OkStatus();
}

absl::Status ValidateStages(const Plan& plan, const Locator& where) {
  const bool open = plan.load().has_open();
  for (int i = 0; i < plan.stages_size(); ++i) {
    const Stage& stage = plan.stages(i);
    const std::string path = absl::StrCat("stages.", i);
    const absl::string_view wanted = open ? "rate" : "clients";
    if (stage.has_knee()) {
      absl::Status knee_ok = ValidateKnee(stage, path, open, where);
      if (!knee_ok.ok()) return knee_ok;
      continue;
    }
    if (open ? stage.has_clients() : stage.has_rate()) {
      return Problem(where, JoinPath(path, open ? "clients" : "rate"),
                     absl::StrCat("the plan's load is ", open ? "open" : "closed",
                                  ", so a stage gives its ", wanted));
    }
    const Level& level = open ? stage.rate() : stage.clients();
    if (level.shape() == Level::SHAPE_UNSPECIFIED) {
      return Problem(where, JoinPath(path, wanted),
                     absl::StrCat("missing; every stage gives its ", wanted,
                                  ": a number, {from, to} or {from, step, every, max}"));
    }
    absl::Status level_ok = ValidateLevel(level, JoinPath(path, wanted), !open, where);
    if (!level_ok.ok()) return level_ok;
    if (stage.duration_ns() < 0) {
      return Problem(where, JoinPath(path, "duration"),
                     absl::StrCat("must be > 0, got ", FormatDurationNanos(stage.duration_ns())));
    }
    if (level.shape() == Level::RAMP && stage.duration_ns() == 0) {
      return Problem(where, JoinPath(path, "duration"), "missing; a ramp needs a duration to ramp over");
    }
    if (StageLength(stage) == 0 && stage.queries() == 0) {
      return Problem(where, JoinPath(path, "duration"),
                     "missing; a stage lasts a duration, a number of queries, or both");
    }
  }
  if (plan.stages_size() > 0 && plan.stop().queries() > 0) {
    return Problem(where, "stop.queries",
                   "with stages, put query counts on the stages (stages.N.queries)");
  }
  return absl::OkStatus();
}

absl::Status ValidateAbort(const Plan& plan, const Locator& where) {
  const AbortRules& abort = plan.abort();
  if (abort.p99_above_ns() < 0) {
    return Problem(where, "abort.p99_above",
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(abort.p99_above_ns())));
  }
  for (const auto& [field, value] : {std::pair{"abort.error_rate_above", abort.error_rate_above()},
                                     std::pair{"abort.achieved_below", abort.achieved_below()}}) {
    if (!(value >= 0 && value <= 1)) {
      return Problem(where, field,
                     absl::StrCat("expected a fraction from 0 to 1, got ", FormatRate(value)));
    }
  }
  if (abort.achieved_below() > 0 && !plan.load().has_open()) {
    return Problem(where, "abort.achieved_below",
                   "only an open loop has a target rate to fall below");
  }
  if (abort.for_ns() < 0) {
    return Problem(where, "abort.for",
                   absl::StrCat("must be >= 0, got ", FormatDurationNanos(abort.for_ns())));
  }
  return absl::OkStatus();
}

// The limits of plan/plan_limits.h that a plan carries: its stages, and its workload (a
// coordinator or agent receives it as a proto, without the file the parser checked).
absl::Status ValidateSize(const Plan& plan, const Locator& where) {
  if (plan.stages_size() > kMaxStages) {
    return Problem(where, "stages",
                   absl::StrCat(plan.stages_size(), " stages; a plan may have at most ",
                                kMaxStages));
  }
  if (!plan.has_workload_spec()) return absl::OkStatus();
  const v1::WorkloadSpec& spec = plan.workload_spec();
  if (absl::Status limits = CheckWorkloadLimits(spec); !limits.ok()) {
    const std::string field = FieldOf(limits).value_or("");
    return Problem(where, field.empty() ? "workload" : absl::StrCat("workload.", field),
                   limits.message());
  }
  for (const v1::Scenario& scenario : spec.scenarios()) {
    if (scenario.name() != plan.scenario()) continue;
    const int scopes = scenario.query_types_size() * (1 + plan.stages_size());
    if (scopes > kMaxQueryTypeScopes) {
      return Problem(where, "stages",
                     absl::StrCat(scenario.query_types_size(), " query types in ",
                                  1 + plan.stages_size(), " scopes (the run and its ",
                                  plan.stages_size(), " stages) make ", scopes,
                                  " sets of histograms in the report, more than its ",
                                  kMaxQueryTypeScopes, "; use fewer stages or query types"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePlanAt(const Plan& plan, const Locator& where) {
  if (absl::Status status = ValidateTarget(plan, where); !status.ok()) return status;
  if (plan.workload().empty()) {
    return Problem(where, "workload", "missing; name a workload, e.g. workload: oltp");
  }
  if (plan.scenario().empty()) {
    return Problem(where, "scenario",
                   "missing; name one of the workload's scenarios, e.g. scenario: point_select");
  }
  if (absl::Status status = ValidateLoad(plan, where); !status.ok()) return status;
  if (plan.warmup_ns() < 0) {
    return Problem(where, "warmup",
                   absl::StrCat("must be >= 0, got ", FormatDurationNanos(plan.warmup_ns())));
  }
  const StopRule& stop = plan.stop();
  if (stop.duration_ns() < 0) {
    return Problem(where, "stop.duration",
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(stop.duration_ns())));
  }
  if (stop.duration_ns() == 0 && stop.queries() == 0 && plan.stages_size() == 0) {
    return Problem(where, "stop",
                   "missing; set stop.duration, stop.queries or both: every run is bounded");
  }
  if (absl::Status status = ValidateStages(plan, where); !status.ok()) return status;
  if (absl::Status status = ValidateAbort(plan, where); !status.ok()) return status;
  return ValidateSize(plan, where);
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
                          ErrorText(converter.Where(field), field, checked.message()));
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
        absl::StrCat(Position(source_name, root.Mark()), ": expected a map of plan fields (",
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

std::string YamlPosition(std::string_view source_name, const YAML::Mark& mark) {
  return Position(AsAbsl(source_name), mark);
}

std::optional<std::string> NearestName(std::string_view name,
                                       const std::vector<std::string>& candidates) {
  std::vector<absl::string_view> views(candidates.begin(), candidates.end());
  std::optional<absl::string_view> nearest = Nearest(AsAbsl(name), views);
  if (!nearest) return std::nullopt;
  return std::string(*nearest);
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes,
                                            std::string_view what) {
  return ReadFileBounded(path, max_bytes, AsAbsl(what));
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
        absl::StrCat(Position(source, error.mark), ": invalid YAML: ", error.msg));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(Position(source, error.mark), ": cannot read YAML: ", error.msg));
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
  absl::StatusOr<std::string> text = ReadFileBounded(path, kMaxPlanBytes, "plan file");
  if (!text.ok()) return text.status();
  return ParsePlan(*text, path, overrides, check);
}

void ApplyPlanDefaults(Plan& plan) {
  if (plan.has_target()) {
    Target& target = *plan.mutable_target();
    if (IsDatabaseDriver(target.driver())) {
      if (target.host().empty() && target.socket().empty()) target.set_host(kDefaultHost);
      if (target.port() == 0) {
        target.set_port(target.driver() == "postgresql" ? kDefaultPostgreSqlPort
                                                        : kDefaultMySqlPort);
      }
    }
    if (target.pool() == 0) {
      target.set_pool(plan.load().has_closed() ? PeakClients(plan) : kDefaultOpenLoopPool);
    }
  }
  if (plan.load().has_open() && plan.load().open().arrival() == OpenLoad::ARRIVAL_UNSPECIFIED) {
    plan.mutable_load()->mutable_open()->set_arrival(OpenLoad::UNIFORM);
  }
}

absl::Status ValidatePlan(const Plan& plan, std::string_view source_name) {
  const Location where{std::string(source_name)};
  return ValidatePlanAt(plan, [&where](absl::string_view) { return where; });
}

absl::StatusOr<int64_t> ParseDurationNanos(std::string_view duration) {
  const absl::string_view text = AsAbsl(duration);
  auto syntax_error = [text] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a duration such as 250ms, 5s or 1m30s (units ns, us, ms, s, m, "
                     "h; a bare integer means seconds), got ",
                     Quote(text)));
  };
  auto too_long = [text] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a duration of at most 2562047h, got ", Quote(text)));
  };
  constexpr int64_t kSecond = 1'000'000'000;
  constexpr unsigned __int128 kLimit = std::numeric_limits<int64_t>::max();
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };

  absl::string_view rest = text;
  const bool negative = !rest.empty() && rest.front() == '-';
  if (negative) rest.remove_prefix(1);
  if (rest.empty()) return syntax_error();
  const bool bare_integer = std::all_of(rest.begin(), rest.end(), is_digit);

  unsigned __int128 total = 0;
  while (!rest.empty()) {
    size_t length = 0;
    while (length < rest.size() && is_digit(rest[length])) ++length;
    if (length == 0) return syntax_error();
    const absl::string_view whole = rest.substr(0, length);
    rest.remove_prefix(length);
    absl::string_view fraction;
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      length = 0;
      while (length < rest.size() && is_digit(rest[length])) ++length;
      if (length == 0) return syntax_error();
      fraction = rest.substr(0, length);
      rest.remove_prefix(length);
    }
    length = 0;
    while (length < rest.size() && !is_digit(rest[length]) && rest[length] != '.') ++length;
    const absl::string_view unit = rest.substr(0, length);
    rest.remove_prefix(length);

    int64_t unit_nanos = 0;
    if (unit.empty() && bare_integer) unit_nanos = kSecond;
    if (unit == "ns") unit_nanos = 1;
    if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") unit_nanos = 1'000;
    if (unit == "ms") unit_nanos = 1'000'000;
    if (unit == "s") unit_nanos = kSecond;
    if (unit == "m") unit_nanos = 60 * kSecond;
    if (unit == "h") unit_nanos = 3600 * kSecond;
    if (unit_nanos == 0) return syntax_error();

    unsigned __int128 whole_value = 0;
    for (char digit : whole) {
      whole_value = whole_value * 10 + static_cast<unsigned>(digit - '0');
      if (whole_value > kLimit) return too_long();
    }
    total += whole_value * static_cast<unsigned __int128>(unit_nanos);
    // 18 fraction digits resolve a nanosecond of an hour; later digits cannot matter.
    unsigned __int128 fraction_value = 0;
    unsigned __int128 scale = 1;
    for (char digit : fraction.substr(0, 18)) {
      fraction_value = fraction_value * 10 + static_cast<unsigned>(digit - '0');
      scale *= 10;
    }
    total += fraction_value * static_cast<unsigned __int128>(unit_nanos) / scale;
    if (total > kLimit) return too_long();
  }
  const int64_t magnitude = static_cast<int64_t>(total);
  return negative ? -magnitude : magnitude;
}

std::string FormatDurationNanos(int64_t nanos) {
  if (nanos == 0) return "0s";
  // The magnitude of INT64_MIN does not fit in int64_t.
  const uint64_t magnitude =
      nanos < 0 ? uint64_t{0} - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  static constexpr std::pair<uint64_t, absl::string_view> kUnits[] = {
      {3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
      {1'000'000, "ms"},        {1'000, "us"},         {1, "ns"}};
  for (const auto& [unit_nanos, unit] : kUnits) {
    if (magnitude % unit_nanos == 0) {
      return absl::StrCat(nanos < 0 ? "-" : "", magnitude / unit_nanos, unit);
    }
  }
  return absl::StrCat(nanos, "ns");  // not reached: every value is a whole number of ns
}

absl::StatusOr<std::string> ReadTargetPassword(const Target& target) {
  if (!target.password_file().empty() && !target.password_env().empty()) {
    return absl::InvalidArgumentError("target: set either password_file or password_env, not both");
  }
  if (!target.password_file().empty()) {
    // The status of a failed read names the file and the reason, never the content.
    absl::StatusOr<std::string> content =
        ReadFileBounded(target.password_file(), kMaxPasswordBytes, "target.password_file");
    if (!content.ok()) return content.status();
    if (content->size() > kMaxPasswordBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("target.password_file ", target.password_file(), " is larger than ",
                       kMaxPasswordBytes, " bytes; it should hold just the password"));
    }
    // Editors end files with a newline; passwords do not end with one.
    while (!content->empty() && (content->back() == '\n' || content->back() == '\r')) {
      content->pop_back();
    }
    return content;
  }
  if (!target.password_env().empty()) {
    const char* value = std::getenv(target.password_env().c_str());
    if (value == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("target.password_env: environment variable ", Quote(target.password_env()),
                       " is not set"));
    }
    return std::string(value);
  }
  return std::string();
}

}  // namespace dbload
