#include "common/workloads/loader.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/param_generator.h"
#include "common/random.h"
#include "common/sql_text.h"

namespace dbload {
namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;
using db::Value;

constexpr int64_t kSeedOfLoad = 0x10ad;
// A spec built in code (oltp's) may leave batch at 0: the parser's default applies then too.
constexpr int64_t kDefaultLoadBatch = 10'000;
// A batch that fails with a retryable error (deadlock, serialization) is tried this often more.
constexpr int kRetries = 5;

absl::Status ToStatus(const ExecOutcome& outcome, absl::string_view doing) {
  if (outcome.ok()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(doing, ": ", outcome.error->message, " [", outcome.error->code, "]"));
}

// A name as a SQL string literal. Names are plain identifiers (the parser checks), so doubling
// quotes is all the escaping they can need.
std::string Literal(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

int64_t ToInt(absl::string_view text) {
  int64_t value = 0;
  (void)std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

absl::StatusOr<int64_t> CountOf(Session& session, const std::string& sql) {
  absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(sql, 1);
  if (!rows.ok()) return rows.status();
  int64_t value = 0;
  if (rows->empty() ||
      std::from_chars(rows->front().data(), rows->front().data() + rows->front().size(), value)
              .ec != std::errc()) {
    return absl::InternalError(absl::StrCat("`", sql, "` did not return one integer"));
  }
  return value;
}

// One contiguous share of a table's rows, loaded on its own connection.
struct Part {
  int index = 0;
  int64_t first = 1;  // rows first … last
  int64_t last = 0;
  int64_t done = 0;   // rows committed so far, from `first` on
};

class Loader {
 public:
  Loader(const v1::WorkloadSpec& spec, db::Driver& driver, const LoadOptions& options,
         const ProgressCallback& progress)
      : spec_(spec), driver_(driver), dialect_(driver.dialect()), options_(options),
        progress_(progress) {}

  absl::Status Run() {
    driver_.ThreadStart();
    absl::Status status = RunOnThisThread();
    driver_.ThreadEnd();
    return status;
  }

 private:
  absl::Status RunOnThisThread() {
    absl::StatusOr<std::unique_ptr<Session>> session = Connect();
    if (!session.ok()) return session.status();
    Session& main = **session;
    if (absl::Status status = ToStatus(
            main.ExecuteSql(absl::StrCat(
                "CREATE TABLE IF NOT EXISTS ", kLoadStateTable,
                " (workload VARCHAR(200) NOT NULL, tbl VARCHAR(200) NOT NULL, part INTEGER NOT "
                "NULL, parts INTEGER NOT NULL, rows_done BIGINT NOT NULL, phase VARCHAR(40) NOT "
                "NULL, PRIMARY KEY (workload, tbl, part))")),
            "creating the load state table");
        !status.ok()) {
      return status;
    }
    if (options_.stage != LoadOptions::Stage::kPartsOnly) ReportFreeSpace(main);
    for (const v1::Table& table : spec_.tables()) {
      if (absl::Status status = LoadTable(main, table); !status.ok()) return status;
    }
    if (options_.stage != LoadOptions::Stage::kAll) return absl::OkStatus();
    return ValidateWorkloadData(spec_, main, dialect_);
  }

  absl::StatusOr<std::unique_ptr<Session>> Connect() {
    absl::StatusOr<std::unique_ptr<Session>> session = driver_.Connect();
    if (!session.ok()) {
      return absl::Status(session.status().code(),
                          absl::StrCat("target: ", session.status().message()));
    }
    return session;
  }

  void Say(PrepareProgress progress) {
    if (!progress_) return;
    std::lock_guard lock(progress_mu_);
    progress_(progress);
  }

  // Load goes only to this machine, so the server's data directory is a local path: its free
  // space is worth a line before a long load. PostgreSQL shows data_directory only to
  // privileged users; without it there is nothing to say.
  void ReportFreeSpace(Session& session) {
    absl::StatusOr<std::vector<std::string>> dir = session.FetchColumn(
        dialect_ == Dialect::kPostgreSql
            ? "SELECT setting FROM pg_settings WHERE name = 'data_directory'"
            : "SELECT @@datadir",
        1);
    struct statvfs fs;
    if (!dir.ok() || dir->empty() || dir->front().empty() ||
        statvfs(dir->front().c_str(), &fs) != 0) {
      return;
    }
    const double free_gib = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) /
                            (1024.0 * 1024 * 1024);
    Say({.note = absl::StrFormat("free space where the server keeps its data (%s): %.1f GiB",
                                 dir->front(), free_gib)});
  }

  std::string StateWhere(const v1::Table& table, int part) const {
    return absl::StrCat(" WHERE workload = ", Literal(spec_.name()), " AND tbl = ",
                        Literal(table.name()), " AND part = ", part);
  }

  absl::Status SetPhase(Session& session, const v1::Table& table, absl::string_view phase) {
    return ToStatus(session.ExecuteSql(absl::StrCat("UPDATE ", kLoadStateTable, " SET phase = ",
                                                    Literal(phase), StateWhere(table, -1))),
                    absl::StrCat("recording the load state of ", table.name()));
  }

  absl::StatusOr<bool> TableExists(Session& session, const v1::Table& table) {
    // PostgreSQL's information_schema hides tables the user may not read; pg_tables does not,
    // and a table of someone else's is exactly what must be found here.
    const std::string sql =
        dialect_ == Dialect::kPostgreSql
            ? absl::StrCat("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = "
                           "current_schema() AND tablename = ",
                           Literal(table.name()))
            : absl::StrCat("SELECT table_name FROM information_schema.tables WHERE "
                           "table_schema = DATABASE() AND table_name = ",
                           Literal(table.name()));
    absl::StatusOr<std::vector<std::string>> found = session.FetchColumn(sql, 1);
    if (!found.ok()) return found.status();
    return !found->empty();
  }

  // The table's row and its parts' rows in one transaction: a load is either recorded whole
  // or not at all.
  absl::Status RecordNewLoad(Session& session, const v1::Table& table, int parts) {
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return ToStatus(begun, "BEGIN");
    std::string insert = absl::StrCat("INSERT INTO ", kLoadStateTable,
                                      " (workload, tbl, part, parts, rows_done, phase) VALUES");
    for (int part = -1; part < parts; ++part) {
      absl::StrAppend(&insert, part == -1 ? " " : ", ", "(", Literal(spec_.name()), ", ",
                      Literal(table.name()), ", ", part, ", ", parts, ", 0, 'loading')");
    }
    if (absl::Status status = ToStatus(session.ExecuteSql(insert),
                                       absl::StrCat("recording the load state of ", table.name()));
        !status.ok()) {
      session.Rollback();
      return status;
    }
    return ToStatus(session.Commit(), "COMMIT");
  }

  absl::Status LoadTable(Session& session, const v1::Table& table) {
    absl::StatusOr<std::vector<std::string>> state = session.FetchColumn(
        absl::StrCat("SELECT CONCAT(phase, '|', parts) FROM ", kLoadStateTable,
                     StateWhere(table, -1)),
        1);
    if (!state.ok()) return state.status();
    absl::StatusOr<bool> exists = TableExists(session, table);
    if (!exists.ok()) return exists.status();
    std::string phase;
    int parts = options_.parallel;
    if (!state->empty()) {
      const std::vector<std::string> fields = absl::StrSplit(state->front(), '|');
      phase = fields[0];
      if (fields.size() == 2) parts = static_cast<int>(ToInt(fields[1]));
    } else if (options_.stage == LoadOptions::Stage::kPartsOnly) {
      return absl::FailedPreconditionError(absl::StrCat(
          "table ", table.name(), ": no load recorded in ", kLoadStateTable,
          " (the set-up stage of a split load must run before the agents load their parts)"));
    } else if (*exists) {
      return absl::AlreadyExistsError(absl::StrCat(
          "table ", table.name(), " already exists and was not created by dbload prepare (",
          kLoadStateTable, " has no entry for it); dbload does not write into tables it did not "
          "create: drop it, or prepare into another database"));
    } else {
      if (absl::Status status = RecordNewLoad(session, table, parts); !status.ok()) return status;
      phase = "loading";
    }
    if (phase == "done") {
      Say({table.name(), static_cast<uint64_t>(table.data().rows()),
           static_cast<uint64_t>(table.data().rows())});
      return absl::OkStatus();
    }
    if (!*exists) {
      absl::StatusOr<std::string> create = SqlFor(table.create(), dialect_, table.name());
      if (!create.ok()) return create.status();
      if (absl::Status status =
              ToStatus(session.ExecuteSql(*create), absl::StrCat("creating ", table.name()));
          !status.ok()) {
        return status;
      }
    }
    if (options_.stage == LoadOptions::Stage::kSetUpOnly) return absl::OkStatus();
    if (options_.stage == LoadOptions::Stage::kPartsOnly) {
      return phase == "loading" ? LoadParts(session, table, parts) : absl::OkStatus();
    }
    if (phase == "loading") {
      if (absl::Status status = LoadParts(session, table, parts); !status.ok()) return status;
      phase = "index:0";
      if (absl::Status status = SetPhase(session, table, phase); !status.ok()) return status;
    }
    // Indexes after the data: building one over the loaded rows beats maintaining it per row.
    int built = 0;
    if (absl::StartsWith(phase, "index:")) built = static_cast<int>(ToInt(phase.substr(6)));
    for (int i = built; i < table.indexes_size(); ++i) {
      absl::StatusOr<std::string> sql = SqlFor(table.indexes(i), dialect_, table.name());
      // Indexes may be written for one dialect only (PostgreSQL's primary key built after
      // loading, where InnoDB declares it up front); the other has nothing to build.
      if (absl::Status status =
              sql.ok() ? ToStatus(session.ExecuteSql(*sql), absl::StrCat("indexing ", table.name()))
                       : absl::OkStatus();
          !status.ok()) {
        return status;
      }
      if (absl::Status status = SetPhase(session, table, absl::StrCat("index:", i + 1));
          !status.ok()) {
        return status;
      }
    }
    if (absl::Status status = RunEach(session, table.after_load(), table, "after loading");
        !status.ok()) {
      return status;
    }
    if (absl::Status status = Settle(session, table); !status.ok()) return status;
    return SetPhase(session, table, "done");
  }

  // A freshly loaded table left as it is gets vacuumed and analyzed by the server in the
  // background soon after (PostgreSQL's autovacuum, InnoDB's statistics recalculation): during
  // the first measured run, whose first reads would also pay for setting every row's hint bits
  // (PostgreSQL). Doing it now, as pgbench -i does, keeps that work out of the measurements.
  absl::Status Settle(Session& session, const v1::Table& table) {
    std::string sql;
    switch (dialect_) {
      case Dialect::kPostgreSql:
        sql = absl::StrCat("VACUUM (ANALYZE) ", table.name());
        break;
      case Dialect::kMySql:
        sql = absl::StrCat("ANALYZE TABLE ", table.name());
        break;
      case Dialect::kNoop:
        return absl::OkStatus();
    }
    return ToStatus(session.ExecuteSql(sql), absl::StrCat("vacuuming and analyzing ", table.name()));
  }

  // Steps may be written for one dialect only; the other skips them.
  absl::Status RunEach(Session& session,
                       const google::protobuf::RepeatedPtrField<v1::DialectSql>& steps,
                       const v1::Table& table, absl::string_view doing) {
    for (const v1::DialectSql& step : steps) {
      absl::StatusOr<std::string> sql = SqlFor(step, dialect_, table.name());
      if (!sql.ok()) continue;
      if (absl::Status status =
              ToStatus(session.ExecuteSql(*sql), absl::StrCat(doing, " ", table.name()));
          !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  // Every part on its own connection and thread; the first failure stops the others at their
  // next batch (what they committed stays, and a rerun resumes it).
  absl::Status LoadParts(Session& session, const v1::Table& table, int parts) {
    absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(
        absl::StrCat("SELECT CONCAT(part, '|', rows_done) FROM ", kLoadStateTable,
                     " WHERE workload = ", Literal(spec_.name()), " AND tbl = ",
                     Literal(table.name()), " AND part >= 0 ORDER BY part"),
        static_cast<size_t>(kMaxLoadParallel));
    if (!rows.ok()) return rows.status();
    const int64_t total = table.data().rows();
    std::vector<Part> plan;
    int64_t committed = 0;
    const bool some_parts = options_.stage == LoadOptions::Stage::kPartsOnly;
    int recorded = 0;
    for (const std::string& row : *rows) {
      const std::vector<std::string> fields = absl::StrSplit(row, '|');
      if (fields.size() != 2) continue;
      ++recorded;
      Part part;
      part.index = static_cast<int>(ToInt(fields[0]));
      if (some_parts && (part.index < options_.first_part ||
                         part.index >= options_.first_part + options_.part_count)) {
        continue;
      }
      part.first = total * part.index / parts + 1;
      part.last = total * (part.index + 1) / parts;
      part.done = std::min(ToInt(fields[1]), part.last - part.first + 1);
      committed += part.done;
      plan.push_back(part);
    }
    if (recorded != parts) {
      return absl::DataLossError(absl::StrCat(kLoadStateTable, " holds ", recorded, " of the ",
                                              parts, " parts of ", table.name(),
                                              "; run `dbload cleanup` and prepare again"));
    }
    if (!some_parts && committed == total) {
      Say({table.name(), static_cast<uint64_t>(total), static_cast<uint64_t>(total)});
    } else if (committed > 0) {
      Say({.note = absl::StrFormat("%s: resuming after %d committed rows (in %d part%s)",
                                   table.name(), committed, parts, parts == 1 ? "" : "s")});
    }
    loaded_ = committed;
    stop_ = false;
    std::vector<absl::Status> results(plan.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < plan.size(); ++i) {
      threads.emplace_back([this, &table, &plan, &results, i] {
        driver_.ThreadStart();
        results[i] = LoadPart(table, plan[i]);
        if (!results[i].ok()) stop_ = true;
        driver_.ThreadEnd();
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const absl::Status& result : results) {
      if (!result.ok()) return result;
    }
    return absl::OkStatus();
  }

  absl::Status LoadPart(const v1::Table& table, Part part) {
    // Nothing left (a finished part, or a table without data: created, indexed, left empty).
    if (part.first + part.done > part.last) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<Session>> connected = Connect();
    if (!connected.ok()) return connected.status();
    Session& session = **connected;
    if (absl::Status status = RunEach(session, table.before_load(), table, "before loading");
        !status.ok()) {
      return status;
    }
    const v1::TableData& data = table.data();
    const int64_t batch = data.batch() > 0 ? data.batch() : kDefaultLoadBatch;
    std::vector<std::unique_ptr<ParamGenerator>> generators;
    std::vector<std::string> columns;
    for (int c = 0; c < data.columns_size(); ++c) {
      absl::StatusOr<std::unique_ptr<ParamGenerator>> generator = MakeParamGenerator(
          data.columns(c).generator(),
          {.seed = MixSeed(MixSeed(kSeedOfLoad, std::hash<std::string>{}(table.name())),
                           static_cast<uint64_t>(c) * 1'000'003 +
                               static_cast<uint64_t>(part.first + part.done))});
      if (!generator.ok()) return generator.status();
      generators.push_back(*std::move(generator));
      columns.push_back(data.columns(c).name());
    }
    const bool server_side = data.columns_size() == 0;
    if (server_side) {
      absl::StatusOr<std::string> sql = SqlFor(data.generate(), dialect_, table.name());
      if (!sql.ok()) return sql.status();
      if (absl::Status status = session.Prepare(
              0, {absl::StrCat("load_", table.name()),
                  dialect_ == Dialect::kPostgreSql ? NumberPlaceholders(*sql) : *sql});
          !status.ok()) {
        return status;
      }
    }
    std::vector<Value> values;
    std::vector<std::string> texts;
    int attempt = 0;
    for (int64_t first = part.first + part.done; first <= part.last && !stop_;) {
      if (options_.should_stop && options_.should_stop()) {
        stop_ = true;
        return absl::AbortedError(absl::StrCat("loading ", table.name(), " stopped at row ",
                                               first, " (what was committed stays)"));
      }
      const int64_t last = std::min(part.last, first + batch - 1);
      if (ExecOutcome begun = session.Begin(); !begun.ok()) return ToStatus(begun, "BEGIN");
      ExecOutcome loaded;
      if (server_side) {
        const Value bounds[] = {first, last};
        loaded = session.Execute(0, bounds);
      } else {
        const size_t cells = static_cast<size_t>(last - first + 1) * generators.size();
        values.resize(cells);
        texts.resize(cells);
        size_t cell = 0;
        for (int64_t row = first; row <= last; ++row) {
          for (auto& generator : generators) {
            values[cell] = generator->Next({.row = row}, texts[cell]);
            ++cell;
          }
        }
        loaded = session.BulkInsert(table.name(), columns, values);
      }
      if (loaded.ok()) {
        loaded = session.ExecuteSql(absl::StrCat("UPDATE ", kLoadStateTable, " SET rows_done = ",
                                                 last - part.first + 1,
                                                 StateWhere(table, part.index)));
      }
      if (loaded.ok()) loaded = session.Commit();
      if (!loaded.ok()) {
        session.Rollback();
        // Parts load side by side, and InnoDB can pick one of two neighbouring batches as a
        // deadlock victim: the batch was rolled back whole, so it is simply tried again.
        if (loaded.error->error_class == db::ErrorClass::kRetryable && ++attempt <= kRetries) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
          continue;
        }
        return ToStatus(loaded, absl::StrCat("loading rows ", first, "-", last, " of ",
                                             table.name()));
      }
      attempt = 0;
      const uint64_t so_far = loaded_ += static_cast<uint64_t>(last - first + 1);
      Say({table.name(), so_far, static_cast<uint64_t>(data.rows())});
      first = last + 1;
    }
    return absl::OkStatus();
  }

  const v1::WorkloadSpec& spec_;
  db::Driver& driver_;
  const Dialect dialect_;
  const LoadOptions options_;
  const ProgressCallback& progress_;
  std::mutex progress_mu_;
  std::atomic<uint64_t> loaded_{0};  // rows of the current table, over all parts
  std::atomic<bool> stop_{false};    // a part failed: the others stop at their next batch
};

}  // namespace

absl::StatusOr<std::string> SqlFor(const v1::DialectSql& sql, Dialect dialect,
                                   std::string_view what) {
  const std::string& own = dialect == Dialect::kMySql ? sql.mysql() : sql.postgresql();
  if (!own.empty()) return own;
  if (!sql.any().empty()) return sql.any();
  if (dialect == Dialect::kNoop) return sql.postgresql().empty() ? sql.mysql() : sql.postgresql();
  const std::string_view dialect_name = db::DialectName(dialect);
  return absl::InvalidArgumentError(absl::StrCat(
      absl::string_view(what.data(), what.size()), ": the workload has no SQL for ",
      absl::string_view(dialect_name.data(), dialect_name.size())));
}

absl::Status LoadWorkloadData(const v1::WorkloadSpec& spec, db::Driver& driver,
                              const LoadOptions& options, const ProgressCallback& progress) {
  if (options.parallel < 1 || options.parallel > kMaxLoadParallel) {
    return absl::InvalidArgumentError(absl::StrCat("parallel: expected 1 to ", kMaxLoadParallel,
                                                   ", got ", options.parallel));
  }
  return Loader(spec, driver, options, progress).Run();
}

absl::Status ValidateWorkloadData(const v1::WorkloadSpec& spec, Session& session,
                                  Dialect dialect) {
  std::vector<std::string> failures;
  auto expect = [&](const std::string& what, const std::string& sql, int64_t wanted) {
    absl::StatusOr<int64_t> got = CountOf(session, sql);
    if (!got.ok()) {
      failures.push_back(absl::StrCat(what, ": ", got.status().message()));
    } else if (*got != wanted) {
      failures.push_back(absl::StrCat(what, ": expected ", wanted, ", got ", *got));
    }
  };
  for (const v1::Table& table : spec.tables()) {
    expect(absl::StrCat("rows of ", table.name()),
           absl::StrCat("SELECT COUNT(*) FROM ", table.name()), table.data().rows());
  }
  for (const v1::Check& check : spec.checks()) {
    absl::StatusOr<std::string> sql = SqlFor(check.sql(), dialect, check.name());
    if (!sql.ok()) continue;  // a check for the other dialect
    expect(check.name(), *sql, check.expect());
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("validation of workload ", spec.name(), " failed: ",
                                          absl::StrJoin(failures, "; ")));
}

absl::Status DropWorkloadData(const v1::WorkloadSpec& spec, Session& session) {
  absl::StatusOr<std::vector<std::string>> ours = session.FetchColumn(
      absl::StrCat("SELECT tbl FROM ", kLoadStateTable, " WHERE workload = ", Literal(spec.name()),
                   " AND part = -1"),
      100'000);
  if (!ours.ok()) {
    // No state table: dbload never loaded anything here, so there is nothing of ours to drop.
    return absl::OkStatus();
  }
  for (int t = spec.tables_size() - 1; t >= 0; --t) {
    const v1::Table& table = spec.tables(t);
    if (std::find(ours->begin(), ours->end(), table.name()) == ours->end()) continue;
    if (absl::Status status = ToStatus(
            session.ExecuteSql(absl::StrCat("DROP TABLE IF EXISTS ", table.name())),
            absl::StrCat("dropping ", table.name()));
        !status.ok()) {
      return status;
    }
    if (absl::Status status = ToStatus(
            session.ExecuteSql(absl::StrCat("DELETE FROM ", kLoadStateTable, " WHERE workload = ",
                                            Literal(spec.name()), " AND tbl = ",
                                            Literal(table.name()))),
            "updating the load state");
        !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<std::vector<std::string>> left =
      session.FetchColumn(absl::StrCat("SELECT tbl FROM ", kLoadStateTable), 1);
  if (left.ok() && left->empty()) session.ExecuteSql(absl::StrCat("DROP TABLE ", kLoadStateTable));
  return absl::OkStatus();
}

}  // namespace dbload
