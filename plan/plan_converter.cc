#include "plan/plan_converter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/nearest_name.h"
#include "plan/durations.h"
#include "plan/plan_validation.h"
#include "yaml/yaml_text.h"

namespace dbload::plan_yaml {
namespace {

constexpr uint64_t kDefaultSeed = 1;

}  // namespace

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
    const std::string field_path = JoinFieldPath(path, name);
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

absl::StatusOr<size_t> PlanConverter::ReadChoice(const YAML::Node& node, const std::string& path,
                                                 const std::vector<absl::string_view>& choices) {
  const std::string expected = absl::StrJoin(choices, " or ");
  absl::StatusOr<std::string> text = ReadText(node, path, expected);
  if (!text.ok()) return text.status();
  const auto chosen = std::find(choices.begin(), choices.end(), absl::AsciiStrToLower(*text));
  if (chosen != choices.end()) return static_cast<size_t>(chosen - choices.begin());
  std::string message = absl::StrCat("expected ", expected, ", got ", Quote(*text));
  if (std::optional<absl::string_view> nearest = Nearest(*text, choices)) {
    absl::StrAppend(&message, "; did you mean '", *nearest, "'?");
  }
  return Error(node, path, message);
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

// The converter's sections read these two widths (plan_converter_stages.cc, _rules.cc).
template absl::StatusOr<uint32_t> PlanConverter::ReadInteger<uint32_t>(const YAML::Node&,
                                                                       const std::string&, uint32_t,
                                                                       uint32_t);
template absl::StatusOr<uint64_t> PlanConverter::ReadInteger<uint64_t>(const YAML::Node&,
                                                                       const std::string&, uint64_t,
                                                                       uint64_t);

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
    const std::string field_path = JoinFieldPath(path, name);
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
    } else if (name == "engine") {
      absl::StatusOr<size_t> engine = ReadChoice(value, field_path, {"threads", "event_loops"});
      if (!engine.ok()) return engine.status();
      target.set_engine(*engine == 0 ? dbload::v1::ENGINE_THREADS : dbload::v1::ENGINE_EVENT_LOOPS);
    } else if (name == "mysql_client") {
      absl::StatusOr<size_t> client =
          ReadChoice(value, field_path, {"connector_c", "connector_cpp"});
      if (!client.ok()) return client.status();
      target.set_mysql_client(*client == 0 ? dbload::v1::MY_SQL_CLIENT_CONNECTOR_C
                                           : dbload::v1::MY_SQL_CLIENT_CONNECTOR_CPP);
    } else if (name == "connect") {
      absl::StatusOr<size_t> mode = ReadChoice(value, field_path, {"once", "per_transaction"});
      if (!mode.ok()) return mode.status();
      target.set_connect(*mode == 0 ? dbload::v1::CONNECT_MODE_ONCE
                                    : dbload::v1::CONNECT_MODE_PER_TRANSACTION);
    } else if (name == "pipeline") {
      absl::StatusOr<size_t> pipeline = ReadChoice(value, field_path, {"false", "true"});
      if (!pipeline.ok()) return pipeline.status();
      target.set_pipeline(*pipeline == 1);
    } else if (name == "connects_at_once") {
      absl::StatusOr<uint32_t> connects = ReadInteger<uint32_t>(value, field_path, 1, kMaxPool);
      status = connects.status();
      if (connects.ok()) target.set_connects_at_once(*connects);
    } else if (name == "event_loops") {
      absl::StatusOr<uint32_t> loops = ReadInteger<uint32_t>(value, field_path, 0, kMaxEventLoops);
      status = loops.status();
      if (loops.ok()) target.set_event_loops(*loops);
    } else if (name == "timer_slack") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      status = nanos.status();
      if (nanos.ok()) target.set_timer_slack_ns(*nanos);
    } else if (name == "connect_timeout") {
      absl::StatusOr<int64_t> nanos = ReadDuration(value, field_path);
      status = nanos.status();
      if (nanos.ok()) target.set_connect_timeout_ns(*nanos);
    } else if (name == "noop") {
      status = ConvertNoop(value, *target.mutable_noop());
    } else if (name == "isolation") {
      constexpr absl::string_view kLevels[] = {"read_uncommitted", "read_committed",
                                               "repeatable_read", "serializable"};
      absl::StatusOr<std::string> text = ReadText(value, field_path, "an isolation level");
      status = text.status();
      if (text.ok()) {
        const auto* level = std::find(std::begin(kLevels), std::end(kLevels), *text);
        if (level == std::end(kLevels)) {
          return Error(value, field_path,
                       absl::StrCat("expected one of ", absl::StrJoin(kLevels, ", "), ", got ",
                                    Quote(*text)));
        }
        // The enum's values follow kLevels' order from 1 (0: the server's default).
        target.set_isolation(static_cast<dbload::v1::Isolation>(level - std::begin(kLevels) + 1));
      }
    } else if (name == "session") {
      Record(value, field_path);
      if (!value.IsSequence()) {
        return Error(value, field_path,
                     absl::StrCat("expected a list of SQL statements, got ", Describe(value)));
      }
      for (size_t i = 0; i < value.size() && status.ok(); ++i) {
        absl::StatusOr<std::string> text =
            ReadText(value[i], absl::StrCat(field_path, ".", i), "an SQL statement");
        status = text.status();
        if (text.ok()) target.add_session(*std::move(text));
      }
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
    absl::StatusOr<int64_t> nanos = ReadDuration(value, JoinFieldPath(path, name));
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
    const std::string field_path = JoinFieldPath(path, name);
    if (name == "rate") {
      absl::StatusOr<double> rate = ReadNumber(value, field_path);
      if (!rate.ok()) return rate.status();
      open.set_rate(*rate);
    } else if (name == "arrival") {
      absl::StatusOr<size_t> arrival = ReadChoice(value, field_path, {"uniform", "poisson"});
      if (!arrival.ok()) return arrival.status();
      open.set_arrival(*arrival == 0 ? OpenLoad::UNIFORM : OpenLoad::POISSON);
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
    const std::string field_path = JoinFieldPath(path, name);
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
    const std::string field_path = JoinFieldPath(path, name);
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

absl::Status PlanConverter::ConvertWorkloadOptions(const YAML::Node& node, Plan& plan) {
  const std::string path = "workload_options";
  absl::StatusOr<MapEntries> fields =
      ReadMap(node, path, MapSpec(ListOf(kPlanFields), "workload_options"));
  if (!fields.ok()) return fields.status();
  auto& options = *plan.mutable_workload_options();
  for (const auto& [name, value] : fields->entries) {
    absl::StatusOr<std::string> text =
        ReadText(value, JoinFieldPath(path, name), "a single value (a number or a string)");
    if (!text.ok()) return text.status();
    options[name] = *std::move(text);
  }
  return absl::OkStatus();
}

}  // namespace dbload::plan_yaml
