#include "common/workloads/oltp.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/field_error.h"

namespace dbload {

namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;

// sysbench's value templates: '#' is a random digit.
constexpr std::string_view kCTemplate =
    "###########-###########-###########-###########-###########-"
    "###########-###########-###########-###########-###########";
constexpr std::string_view kPadTemplate =
    "###########-###########-###########-###########-###########";

void FillTemplate(Random& random, std::string_view pattern, std::string& out) {
  out.assign(pattern);
  for (char& c : out) {
    if (c == '#') c = static_cast<char>('0' + random.Uniform(0, 9));
  }
}

std::string TableName(int table) { return absl::StrCat("sbtest", table); }

class PointSelectWorker final : public ScenarioWorker {
 public:
  PointSelectWorker(const OltpOptions& options, uint64_t seed)
      : options_(options), uniform_(options.rand_type == "uniform"), random_(seed) {}
  int NextQueryType() override { return 0; }
  ExecOutcome Run(int, Session& session) override {
    const int table = static_cast<int>(random_.Uniform(1, options_.tables));
    const db::Value id = NextId();
    return session.Execute(table - 1, std::span(&id, 1));
  }

 private:
  int64_t NextId() {
    if (uniform_) return random_.Uniform(1, options_.table_size);
    return SpecialDistribution(random_, 1, options_.table_size, options_);
  }

  const OltpOptions& options_;
  const bool uniform_;
  Random random_;
};

class PointSelectScenario final : public Scenario {
 public:
  explicit PointSelectScenario(OltpOptions options) : options_(std::move(options)) {}
  const std::vector<std::string>& query_types() const override { return query_types_; }
  std::vector<db::StatementSpec> Statements(Dialect dialect) const override {
    std::vector<db::StatementSpec> statements;
    const char* placeholder = dialect == Dialect::kPostgreSql ? "$1" : "?";
    for (int t = 1; t <= options_.tables; ++t) {
      statements.push_back({absl::StrCat("point_select_", t),
                            absl::StrCat("SELECT c FROM ", TableName(t), " WHERE id=", placeholder)});
    }
    return statements;
  }
  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const override {
    return std::make_unique<PointSelectWorker>(options_, MixSeed(slot.run_seed, slot.index));
  }

 private:
  OltpOptions options_;  // workers refer to it: the scenario outlives them
  std::vector<std::string> query_types_ = {"point_select"};
};

class OltpWorkload final : public Workload {
 public:
  explicit OltpWorkload(OltpOptions options) : options_(std::move(options)) {}

  std::vector<std::string> ScenarioNames() const override { return {"point_select"}; }

  absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const override {
    if (name == "point_select") return std::make_unique<PointSelectScenario>(options_);
    return FieldError("scenario", absl::StrCat("workload oltp has no scenario '", name,
                                               "' (it has: ",
                                               absl::StrJoin(ScenarioNames(), ", "), ")"));
  }

  absl::Status Prepare(Session& session, Dialect dialect,
                       const std::function<void(const PrepareProgress&)>& progress) const override;
  absl::Status Cleanup(Session& session) const override;

 private:
  OltpOptions options_;
};

absl::Status ToStatus(const ExecOutcome& outcome, const std::string& doing) {
  if (outcome.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(doing, ": ", outcome.error->message, " [",
                                          outcome.error->code, "]"));
}

absl::Status OltpWorkload::Prepare(Session& session, Dialect dialect,
                                   const std::function<void(const PrepareProgress&)>& progress) const {
  const std::string schema_filter = dialect == Dialect::kPostgreSql
                                        ? "table_schema = current_schema()"
                                        : "table_schema = DATABASE()";
  for (int t = 1; t <= options_.tables; ++t) {
    const ExecOutcome exists = session.ExecuteSql(
        absl::StrCat("SELECT 1 FROM information_schema.tables WHERE ", schema_filter,
                     " AND table_name = '", TableName(t), "'"));
    if (absl::Status s = ToStatus(exists, "checking for existing tables"); !s.ok()) return s;
    if (exists.rows > 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("table ", TableName(t),
                       " already exists; dbload prepare does not write into existing tables "
                       "(run `dbload cleanup` first, or run against the existing data)"));
    }
  }
  // sysbench's default is auto_inc: ids 1..table_size assigned by the database in insert order.
  const std::string id_def =
      dialect == Dialect::kPostgreSql ? "SERIAL" : "INTEGER NOT NULL AUTO_INCREMENT";
  const std::string engine = dialect == Dialect::kMySql ? " ENGINE = InnoDB" : "";
  Random random(MixSeed(0x5b7e57, 0));
  std::string c, pad;
  constexpr int64_t kBatch = 1'000;
  for (int t = 1; t <= options_.tables; ++t) {
    const std::string table = TableName(t);
    if (absl::Status s = ToStatus(
            session.ExecuteSql(absl::StrCat("CREATE TABLE ", table, "(id ", id_def,
                                            ", k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) "
                                            "DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT "
                                            "NULL, PRIMARY KEY (id))",
                                            engine)),
            absl::StrCat("creating ", table));
        !s.ok()) {
      return s;
    }
    for (int64_t done = 0; done < options_.table_size;) {
      const int64_t rows = std::min(kBatch, options_.table_size - done);
      std::string insert = absl::StrCat("INSERT INTO ", table, "(k, c, pad) VALUES");
      for (int64_t r = 0; r < rows; ++r) {
        FillTemplate(random, kCTemplate, c);
        FillTemplate(random, kPadTemplate, pad);
        absl::StrAppend(&insert, r == 0 ? "" : ",", "(", random.Uniform(1, options_.table_size),
                        ",'", c, "','", pad, "')");
      }
      if (absl::Status s = ToStatus(session.ExecuteSql(insert), absl::StrCat("loading ", table));
          !s.ok()) {
        return s;
      }
      done += rows;
      if (progress) progress({table, static_cast<uint64_t>(done), static_cast<uint64_t>(options_.table_size)});
    }
    if (absl::Status s = ToStatus(
            session.ExecuteSql(absl::StrCat("CREATE INDEX k_", t, " ON ", table, "(k)")),
            absl::StrCat("indexing ", table));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status OltpWorkload::Cleanup(Session& session) const {
  for (int t = 1; t <= options_.tables; ++t) {
    if (absl::Status s = ToStatus(session.ExecuteSql(absl::StrCat("DROP TABLE IF EXISTS ",
                                                                  TableName(t))),
                                  absl::StrCat("dropping ", TableName(t)));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t SpecialDistribution(Random& random, int64_t low, int64_t high, const OltpOptions& options) {
  const double span = static_cast<double>(high - low);
  // Draw once; its position decides both the branch and, for the hot spot, the value.
  const double draw = random.NextDouble() * 100.0 / (100.0 - options.rand_spec_res);
  if (draw < 1.0) {
    double sum = 0;
    for (int i = 0; i < options.rand_spec_iter; ++i) sum += random.NextDouble();
    return low + static_cast<int64_t>(sum * span / options.rand_spec_iter);
  }
  // The hot spot reuses the uniform draw itself, as sysbench 1.0.20 does; that draw is known to
  // be in the upper rand_spec_res % of [0, 1) here, so values fill the upper part of the central
  // window. Kept deliberately, so that the key distribution is sysbench's.
  const double position = draw * (100.0 - options.rand_spec_res) / 100.0;
  const double hot_width = span * options.rand_spec_pct / 100.0;
  const double value = position * (hot_width + 1) + span / 2 - hot_width / 2;
  return low + static_cast<int64_t>(value);
}

absl::StatusOr<OltpOptions> ParseOltpOptions(const std::map<std::string, std::string>& options) {
  OltpOptions parsed;
  for (const auto& option : options) {
    // Named copies: clang does not let lambdas capture structured bindings.
    const std::string& key = option.first;
    const std::string& value = option.second;
    int64_t number = 0;
    const bool numeric = absl::SimpleAtoi(value, &number);
    auto need_positive = [&](int64_t max) -> absl::Status {
      if (!numeric || number < 1 || number > max) {
        return FieldError(absl::StrCat("workload_options.", key),
                          absl::StrCat("expected an integer from 1 to ", max, ", got '", value, "'"));
      }
      return absl::OkStatus();
    };
    absl::Status status;
    if (key == "tables") {
      status = need_positive(10'000);
      parsed.tables = static_cast<int>(number);
    } else if (key == "table_size") {
      status = need_positive(int64_t{2'000'000'000});
      parsed.table_size = number;
    } else if (key == "rand_type") {
      if (value != "special" && value != "uniform") {
        status = FieldError("workload_options.rand_type",
                            absl::StrCat("expected 'special' or 'uniform', got '", value, "'"));
      }
      parsed.rand_type = value;
    } else if (key == "rand_spec_pct") {
      status = need_positive(100);
      parsed.rand_spec_pct = static_cast<int>(number);
    } else if (key == "rand_spec_res") {
      status = need_positive(99);
      parsed.rand_spec_res = static_cast<int>(number);
    } else if (key == "rand_spec_iter") {
      status = need_positive(1'000);
      parsed.rand_spec_iter = static_cast<int>(number);
    } else {
      status = FieldError(absl::StrCat("workload_options.", key),
                          "unknown option of workload oltp (known: tables, table_size, rand_type, "
                          "rand_spec_pct, rand_spec_res, rand_spec_iter)");
    }
    if (!status.ok()) return status;
  }
  return parsed;
}

std::unique_ptr<Workload> MakeOltpWorkload(OltpOptions options) {
  return std::make_unique<OltpWorkload>(std::move(options));
}

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(
    const std::string& name, const std::map<std::string, std::string>& options) {
  if (name == "oltp") {
    absl::StatusOr<OltpOptions> parsed = ParseOltpOptions(options);
    if (!parsed.ok()) return parsed.status();
    return MakeOltpWorkload(*std::move(parsed));
  }
  return FieldError("workload", absl::StrCat("unknown workload '", name, "' (built-in: ",
                                             absl::StrJoin(BuiltinWorkloadNames(), ", "), ")"));
}

std::vector<std::string> BuiltinWorkloadNames() { return {"oltp"}; }

}  // namespace dbload
