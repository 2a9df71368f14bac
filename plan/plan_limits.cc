#include "plan/plan_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace dbload {
namespace {

// One statement, whether written once for both dialects or once per dialect.
int StatementsOf(const v1::DialectSql& sql) {
  return sql.any().empty() && sql.postgresql().empty() && sql.mysql().empty() ? 0 : 1;
}

absl::Status CheckSql(const v1::DialectSql& sql, const std::string& path) {
  for (const std::string* text : {&sql.any(), &sql.postgresql(), &sql.mysql()}) {
    if (text->size() > kMaxStatementBytes) {
      return FieldError(path, absl::StrCat("the SQL is ", text->size(), " bytes, more than the ",
                                           kMaxStatementBytes, " one statement may have"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWorkloadLimits(const v1::WorkloadSpec& spec) {
  int query_types = 0;
  int statements = 0;
  const auto count_statements = [&statements](const v1::DialectSql& sql,
                                              const std::string& path) -> absl::Status {
    statements += StatementsOf(sql);
    if (statements > kMaxStatements) {
      return FieldError(path, absl::StrCat("the workload has more than ", kMaxStatements,
                                           " statements, the most one may have"));
    }
    return CheckSql(sql, path);
  };
  for (int t = 0; t < spec.tables_size(); ++t) {
    const v1::Table& table = spec.tables(t);
    const std::string path = absl::StrCat("tables.", t);
    if (absl::Status s = count_statements(table.create(), path + ".create"); !s.ok()) return s;
    if (absl::Status s = count_statements(table.data().generate(), path + ".data.generate");
        !s.ok()) {
      return s;
    }
    for (int i = 0; i < table.indexes_size(); ++i) {
      if (absl::Status s = count_statements(table.indexes(i), absl::StrCat(path, ".indexes.", i));
          !s.ok()) {
        return s;
      }
    }
    for (int i = 0; i < table.before_load_size(); ++i) {
      if (absl::Status s =
              count_statements(table.before_load(i), absl::StrCat(path, ".before_load.", i));
          !s.ok()) {
        return s;
      }
    }
    for (int i = 0; i < table.after_load_size(); ++i) {
      if (absl::Status s =
              count_statements(table.after_load(i), absl::StrCat(path, ".after_load.", i));
          !s.ok()) {
        return s;
      }
    }
  }
  for (int i = 0; i < spec.invariants_size(); ++i) {
    if (absl::Status s =
            count_statements(spec.invariants(i).sql(), absl::StrCat("invariants.", i, ".sql"));
        !s.ok()) {
      return s;
    }
  }
  for (int c = 0; c < spec.checks_size(); ++c) {
    if (absl::Status s = count_statements(spec.checks(c).sql(), absl::StrCat("checks.", c, ".sql"));
        !s.ok()) {
      return s;
    }
  }
  for (int s = 0; s < spec.scenarios_size(); ++s) {
    const v1::Scenario& scenario = spec.scenarios(s);
    const std::string path = absl::StrCat("scenarios.", s, ".query_types");
    if (scenario.query_types_size() > kMaxQueryTypes) {
      return FieldError(path,
                        absl::StrCat(scenario.query_types_size(),
                                     " query types; a scenario may have at most ", kMaxQueryTypes));
    }
    query_types += scenario.query_types_size();
    if (query_types > kMaxQueryTypes) {
      return FieldError(path, absl::StrCat("the workload has more than ", kMaxQueryTypes,
                                           " query types over its scenarios, the most one may "
                                           "have"));
    }
    const auto check_tries = [](const v1::Retry& retry, const std::string& at) -> absl::Status {
      if (retry.max_tries() <= kMaxTries) return absl::OkStatus();
      return FieldError(at + ".max_tries", absl::StrCat("must be at most ", kMaxTries,
                                                        " (tries in all, the first included)"));
    };
    if (absl::Status st = check_tries(scenario.retry(), absl::StrCat("scenarios.", s, ".retry"));
        !st.ok()) {
      return st;
    }
    for (int q = 0; q < scenario.query_types_size(); ++q) {
      const v1::QueryType& type = scenario.query_types(q);
      if (absl::Status st = check_tries(type.retry(), absl::StrCat(path, ".", q, ".retry"));
          !st.ok()) {
        return st;
      }
      const std::string type_path = absl::StrCat(path, ".", q, ".statements");
      if (type.statements_size() > kMaxStatementsPerQueryType) {
        return FieldError(type_path, absl::StrCat(type.statements_size(),
                                                  " statements; a query type may have at most ",
                                                  kMaxStatementsPerQueryType));
      }
      for (int i = 0; i < type.statements_size(); ++i) {
        if (absl::Status st =
                count_statements(type.statements(i).sql(), absl::StrCat(type_path, ".", i, ".sql"));
            !st.ok()) {
          return st;
        }
      }
    }
  }
  if (const size_t bytes = spec.ByteSizeLong(); bytes > kMaxWorkloadSpecBytes) {
    return FieldError("", absl::StrCat("the workload is ", bytes,
                                       " bytes once read, more than "
                                       "the ",
                                       kMaxWorkloadSpecBytes, " a plan may carry"));
  }
  return absl::OkStatus();
}

std::string WorkersField(const v1::Plan& plan) {
  if (plan.load().has_open()) return "target.pool";
  return plan.stages_size() > 0 ? "stages" : "load.closed.clients";
}

uint32_t EventLoopsFor(const v1::Target& target, uint32_t cores) {
  if (target.engine() != v1::ENGINE_EVENT_LOOPS) return 0;
  if (target.event_loops() > 0) return target.event_loops();
  return std::max<uint32_t>(cores, 1);
}

uint32_t ConnectsAtOnce(const v1::Target& target) {
  return target.connects_at_once() > 0 ? target.connects_at_once() : kDefaultConnectsAtOnce;
}

absl::Status CheckAgentResources(const v1::Plan& plan, uint64_t workers, bool explain,
                                 const AgentResources& resources, const std::string& agent) {
  if (workers == 0) return absl::OkStatus();
  const std::string what = plan.load().has_open() ? "connections" : "clients";
  const uint64_t loops = EventLoopsFor(plan.target(), resources.cores);
  const uint64_t worker_threads = loops > 0 ? std::min<uint64_t>(loops, workers) : workers;
  const uint64_t threads = worker_threads + kRunThreadsBesideWorkers;
  if (resources.threads > 0 && threads > resources.threads) {
    return FieldError(
        WorkersField(plan),
        absl::StrCat("agent ", agent, " cannot run ", workers, " ", what, ": they need ", threads,
                     loops > 0 ? " threads (their event loops" : " threads (one each", ", plus ",
                     kRunThreadsBesideWorkers, "), and it can start ", resources.threads, " more (",
                     resources.threads_bound, "); use fewer ", what,
                     " per agent (more agents), or raise "
                     "the limit"));
  }
  // The noop driver opens nothing; the others one connection per worker.
  if (plan.target().driver() == "noop") return absl::OkStatus();
  const uint64_t files = workers + (explain ? 1 : 0) + kReservedFiles;
  if (resources.files > 0 && files > resources.files) {
    return FieldError(
        WorkersField(plan),
        absl::StrCat("agent ", agent, " cannot open ", workers, " connections: they need ", files,
                     " file descriptors (one each, plus ", kReservedFiles, " of its own",
                     explain ? ", plus 1 for EXPLAIN" : "", "), and it can open ", resources.files,
                     " more (", resources.files_bound, "); use fewer ", what,
                     " per agent (more agents), or raise the limit (ulimit -n)"));
  }
  return absl::OkStatus();
}

absl::Status CheckServerConnections(const v1::Plan& plan, uint64_t connections,
                                    uint64_t max_connections) {
  if (max_connections == 0 || connections + kServerConnectionMargin <= max_connections) {
    return absl::OkStatus();
  }
  return FieldError(
      WorkersField(plan),
      absl::StrCat(
          "the run needs ", connections,
          " connections over all agents, and the server allows "
          "max_connections ",
          max_connections, ", of which dbload leaves ", kServerConnectionMargin,
          " free (its probe, reserved connections): use at most ",
          max_connections > kServerConnectionMargin ? max_connections - kServerConnectionMargin : 0,
          " connections, or raise max_connections"));
}

}  // namespace dbload
