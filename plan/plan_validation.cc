#include "plan/plan_validation.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/code_workloads.h"
#include "base/field_error.h"
#include "base/nearest_name.h"
#include "base/quote.h"
#include "plan/durations.h"
#include "plan/plan_limits.h"
#include "plan/stage_program.h"

namespace dbload {
namespace {

using dbload::v1::AbortRules;
using dbload::v1::ClosedLoad;
using dbload::v1::KneeSearch;
using dbload::v1::Level;
using dbload::v1::Load;
using dbload::v1::OpenLoad;
using dbload::v1::Plan;
using dbload::v1::Stage;
using dbload::v1::StopRule;
using dbload::v1::Target;

constexpr uint32_t kDefaultOpenLoopPool = 8;
constexpr char kDefaultHost[] = "127.0.0.1";
constexpr uint32_t kDefaultPostgreSqlPort = 5432;
constexpr uint32_t kDefaultMySqlPort = 3306;
constexpr double kMaxStaircaseSteps = 100'000;
constexpr char kDriverChoices[] = "postgresql, mysql, noop";

std::string FormatRate(double rate) { return absl::StrFormat("%.15g", rate); }

bool IsDatabaseDriver(absl::string_view driver) {
  return driver == "postgresql" || driver == "mysql";
}

absl::Status Problem(const FieldLocator& where, absl::string_view field_path,
                     absl::string_view message) {
  return absl::InvalidArgumentError(FieldErrorText(where(field_path), field_path, message));
}

absl::Status ValidateTarget(const Plan& plan, const FieldLocator& where) {
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
  if (target.mysql_client() != dbload::v1::MY_SQL_CLIENT_UNSPECIFIED &&
      target.driver() != "mysql") {
    return Problem(
        where, "target.mysql_client",
        absl::StrCat("only with driver: mysql; the target's driver is ", target.driver()));
  }
  if (target.engine() == dbload::v1::ENGINE_EVENT_LOOPS &&
      target.mysql_client() == dbload::v1::MY_SQL_CLIENT_CONNECTOR_CPP) {
    return Problem(where, "target.engine",
                   "event_loops needs a client that does not block its thread; MySQL "
                   "Connector/C++ (mysql_client: connector_cpp) blocks in every call: use "
                   "threads, or mysql_client: connector_c");
  }
  if (target.event_loops() > 0 && target.engine() != dbload::v1::ENGINE_EVENT_LOOPS) {
    return Problem(where, "target.event_loops", "only with engine: event_loops");
  }
  if (target.connects_at_once() > 0 && target.engine() != dbload::v1::ENGINE_EVENT_LOOPS) {
    return Problem(where, "target.connects_at_once",
                   "only with engine: event_loops (with threads, each connection opens on its own "
                   "thread)");
  }
  if (target.timer_slack_ns() != 0) {
    if (target.engine() != dbload::v1::ENGINE_EVENT_LOOPS) {
      return Problem(where, "target.timer_slack",
                     "only with engine: event_loops (with threads, each connection sleeps on "
                     "its own until its arrival)");
    }
    if (target.timer_slack_ns() < 0 || target.timer_slack_ns() > kMaxTimerSlack) {
      return Problem(where, "target.timer_slack",
                     absl::StrCat("must be from 0 to ", FormatDurationNanos(kMaxTimerSlack),
                                  ", got ", FormatDurationNanos(target.timer_slack_ns())));
    }
  }
  if (target.pipeline() && target.driver() != "postgresql") {
    return Problem(where, "target.pipeline",
                   absl::StrCat("pipelining is PostgreSQL's (libpq's pipeline mode); the target's "
                                "driver is ",
                                target.driver()));
  }
  if (target.event_loops() > kMaxEventLoops) {
    return Problem(where, "target.event_loops",
                   absl::StrCat("expected ", IntegerRange(0, kMaxEventLoops),
                                " (0: one per core), got ", target.event_loops()));
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

absl::Status ValidateLoad(const Plan& plan, const FieldLocator& where) {
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
                           : absl::StrCat("expected ", IntegerRange(1, kMaxClosedClients), ", got ",
                                          closed.clients()));
      }
      if (closed.think_time_ns() < 0) {
        return Problem(
            where, "load.closed.think_time",
            absl::StrCat("must be >= 0, got ", FormatDurationNanos(closed.think_time_ns())));
      }
      if (plan.target().pool() < PeakClients(plan)) {
        return Problem(
            where, "target.pool",
            absl::StrCat("a closed loop needs a connection per client: must be at "
                         "least ",
                         staged ? "the most clients its stages run" : "load.closed.clients", " (",
                         PeakClients(plan), "), got ", plan.target().pool()));
      }
      return absl::OkStatus();
    }
  }
  return Problem(where, "load", "unknown load shape");
}

// Limits of one stage's level: amounts in range, a staircase that rises and ends.
absl::Status ValidateLevel(const Level& level, const std::string& path, bool clients,
                           const FieldLocator& where) {
  const double low = clients ? 1 : 0;
  const double high = clients ? kMaxClosedClients : kMaxOpenRate;
  auto amount = [&](absl::string_view field, double value) -> absl::Status {
    const std::string field_path =
        level.shape() == Level::CONSTANT && field == "from" ? path : JoinFieldPath(path, field);
    if (clients ? !(value >= low) : !(value > low)) {
      return Problem(where, field_path,
                     absl::StrCat("must be ", clients ? ">= 1" : "> 0", ", got ", FormatRate(value),
                                  clients ? "" : " (a rate ramp starts at a small rate, e.g. 1)"));
    }
    if (value > high) {
      return Problem(
          where, field_path,
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
    return Problem(where, JoinFieldPath(path, "max"),
                   absl::StrCat("must be at least from (", FormatRate(level.from()), "), got ",
                                FormatRate(level.max())));
  }
  if (level.every_ns() <= 0) {
    return Problem(where, JoinFieldPath(path, "every"),
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(level.every_ns())));
  }
  if ((level.max() - level.from()) / level.step() > kMaxStaircaseSteps) {
    return Problem(where, JoinFieldPath(path, "step"),
                   absl::StrCat("makes more than ", kMaxStaircaseSteps,
                                " steps from from to max; take bigger steps"));
  }
  return absl::OkStatus();
}

// A knee search: a rising sequence of steps, long enough to judge, and an SLO to judge them by.
absl::Status ValidateKnee(const Stage& stage, const std::string& path, bool open,
                          const FieldLocator& where) {
  const KneeSearch& knee = stage.knee();
  const std::string knee_path = JoinFieldPath(path, "knee");
  for (const char* other : {"rate", "clients", "duration", "queries"}) {
    const bool set = (std::string_view(other) == "rate" && stage.has_rate()) ||
                     (std::string_view(other) == "clients" && stage.has_clients()) ||
                     (std::string_view(other) == "duration" && stage.duration_ns() != 0) ||
                     (std::string_view(other) == "queries" && stage.queries() != 0);
    if (set) {
      return Problem(where, JoinFieldPath(path, other),
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
    return Problem(where, JoinFieldPath(knee_path, "every"),
                   absl::StrCat("must be at least 1s (a step is judged on whole reporting "
                                "intervals), got ",
                                FormatDurationNanos(knee.every_ns())));
  }
  if (knee.p99_ns() < 0) {
    return Problem(where, JoinFieldPath(knee_path, "p99"),
                   absl::StrCat("must be > 0, got ", FormatDurationNanos(knee.p99_ns())));
  }
  for (const auto& [field, value] :
       {std::pair{"errors", knee.errors()}, std::pair{"achieved", knee.achieved()}}) {
    if (!(value >= 0 && value <= 1)) {
      return Problem(where, JoinFieldPath(knee_path, field),
                     absl::StrCat("expected a fraction from 0 to 1, got ", FormatRate(value)));
    }
  }
  if (knee.achieved() > 0 && !open) {
    return Problem(where, JoinFieldPath(knee_path, "achieved"),
                   "only an open loop has a target rate to achieve");
  }
  if (knee.p99_ns() == 0 && knee.errors() == 0 && knee.achieved() == 0) {
    return Problem(where, knee_path,
                   "missing an SLO; set p99 (a time), errors or achieved (fractions), or several");
  }
  return absl::OkStatus();
}

absl::Status ValidateStages(const Plan& plan, const FieldLocator& where) {
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
      return Problem(where, JoinFieldPath(path, open ? "clients" : "rate"),
                     absl::StrCat("the plan's load is ", open ? "open" : "closed",
                                  ", so a stage gives its ", wanted));
    }
    const Level& level = open ? stage.rate() : stage.clients();
    if (level.shape() == Level::SHAPE_UNSPECIFIED) {
      return Problem(where, JoinFieldPath(path, wanted),
                     absl::StrCat("missing; every stage gives its ", wanted,
                                  ": a number, {from, to} or {from, step, every, max}"));
    }
    absl::Status level_ok = ValidateLevel(level, JoinFieldPath(path, wanted), !open, where);
    if (!level_ok.ok()) return level_ok;
    if (stage.duration_ns() < 0) {
      return Problem(where, JoinFieldPath(path, "duration"),
                     absl::StrCat("must be > 0, got ", FormatDurationNanos(stage.duration_ns())));
    }
    if (level.shape() == Level::RAMP && stage.duration_ns() == 0) {
      return Problem(where, JoinFieldPath(path, "duration"),
                     "missing; a ramp needs a duration to ramp over");
    }
    if (StageLength(stage) == 0 && stage.queries() == 0) {
      return Problem(where, JoinFieldPath(path, "duration"),
                     "missing; a stage lasts a duration, a number of queries, or both");
    }
  }
  if (plan.stages_size() > 0 && plan.stop().queries() > 0) {
    return Problem(where, "stop.queries",
                   "with stages, put query counts on the stages (stages.N.queries)");
  }
  return absl::OkStatus();
}

absl::Status ValidateAbort(const Plan& plan, const FieldLocator& where) {
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

// A pipeline sends every statement of a transaction before the first answer: no statement can
// bind a value an earlier one captures.
absl::Status ValidatePipeline(const Plan& plan, const FieldLocator& where) {
  if (!plan.target().pipeline()) return absl::OkStatus();
  if (plan.workload() == kTpccWorkloadName) {
    return Problem(where, "target.pipeline",
                   "workload tpcc reads values in the middle of its transactions (the next order "
                   "id, the customer by name, the oldest new order), which a pipeline does not "
                   "have until the transaction's end; run it without pipeline");
  }
  for (const v1::Scenario& scenario : plan.workload_spec().scenarios()) {
    if (scenario.name() != plan.scenario()) continue;
    for (const v1::QueryType& query_type : scenario.query_types()) {
      for (int s = 0; s < query_type.statements_size(); ++s) {
        for (const v1::Generator& param : query_type.statements(s).params()) {
          if (param.captured().empty()) continue;
          return Problem(
              where, "target.pipeline",
              absl::StrCat("query type ", query_type.name(), ", statement ", s + 1,
                           " binds the value captured as '", param.captured(),
                           "', which a pipeline does not have until the transaction's end; run "
                           "this scenario without pipeline"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// tpcc's keying and think times are its terminals' waits between transactions: a closed loop's.
absl::Status ValidateTerminalWaits(const Plan& plan, const FieldLocator& where) {
  const auto waits = plan.workload_options().find("terminal_waits");
  if (plan.workload() != kTpccWorkloadName || waits == plan.workload_options().end() ||
      waits->second != "true" || !plan.load().has_open()) {
    return absl::OkStatus();
  }
  return Problem(where, "workload_options.terminal_waits",
                 "keying and think times are the waits of terminals, a closed loop's; this "
                 "plan's load is open (use load.closed.clients)");
}

// The limits of plan/plan_limits.h that a plan carries: its stages, and its workload (a
// coordinator or agent receives it as a proto, without the file the parser checked).
absl::Status ValidateSize(const Plan& plan, const FieldLocator& where) {
  if (plan.stages_size() > kMaxStages) {
    return Problem(
        where, "stages",
        absl::StrCat(plan.stages_size(), " stages; a plan may have at most ", kMaxStages));
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
      return Problem(
          where, "stages",
          absl::StrCat(scenario.query_types_size(), " query types in ", 1 + plan.stages_size(),
                       " scopes (the run and its ", plan.stages_size(), " stages) make ", scopes,
                       " sets of histograms in the report, more than its ", kMaxQueryTypeScopes,
                       "; use fewer stages or query types"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePlanAt(const Plan& plan, const FieldLocator& where) {
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
  if (absl::Status status = ValidatePipeline(plan, where); !status.ok()) return status;
  if (absl::Status status = ValidateTerminalWaits(plan, where); !status.ok()) return status;
  return ValidateSize(plan, where);
}

void ApplyPlanDefaults(Plan& plan) {
  if (plan.has_target()) {
    Target& target = *plan.mutable_target();
    if (target.engine() == dbload::v1::ENGINE_UNSPECIFIED) {
      target.set_engine(plan.load().has_open() && target.driver() != "mysql"
                            ? dbload::v1::ENGINE_EVENT_LOOPS
                            : dbload::v1::ENGINE_THREADS);
    }
    if (target.driver() == "mysql" &&
        target.mysql_client() == dbload::v1::MY_SQL_CLIENT_UNSPECIFIED) {
      target.set_mysql_client(dbload::v1::MY_SQL_CLIENT_CONNECTOR_C);
    }
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
  const FieldLocation where{std::string(source_name)};
  return ValidatePlanAt(plan, [&where](absl::string_view) { return where; });
}

}  // namespace dbload
