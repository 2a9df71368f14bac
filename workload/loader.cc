#include "workload/loader.h"

#include <signal.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/random.h"
#include "db/dialect_sql.h"
#include "workload/load_state.h"
#include "workload/param_generator.h"
#include "workload/row_source.h"
#include "workload/sql_text.h"

namespace dbload {
namespace {

using db::Dialect;
using db::ExecOutcome;

// Whether `sql` names `table` as a word of its own (any case): "inv_lines" in "FROM inv_lines
// WHERE", not in "inv_lines_archive".
bool MentionsTable(std::string_view sql, std::string_view table) {
  const std::string text = absl::AsciiStrToLower(absl::string_view(sql.data(), sql.size()));
  const std::string name = absl::AsciiStrToLower(absl::string_view(table.data(), table.size()));
  const auto word = [](char c) { return absl::ascii_isalnum(c) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || !word(text[at - 1])) && (end == text.size() || !word(text[end]))) return true;
  }
  return false;
}
using db::Session;
using db::Value;

constexpr int64_t kSeedOfLoad = 0x10ad;
// A spec built in code (oltp's) may leave batch at 0: the parser's default applies then too.
constexpr int64_t kDefaultLoadBatch = 10'000;
// A batch that fails with a retryable error (deadlock, serialization) is tried this often more.
constexpr int kRetries = 5;

int64_t ToInt(absl::string_view text) {
  int64_t value = 0;
  (void)std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Fault injection for tests, harmless in production: see kTestKillAtVariable. Read once.
void TestKillPoint(absl::string_view point) {
  static const char* const wanted = std::getenv(kTestKillAtVariable);
  if (wanted == nullptr || point != wanted) return;
  std::cerr << kTestKillAtVariable << ": killing this process at " << point << std::endl;
  raise(SIGKILL);
}

// A step that sets a session variable (MariaDB's foreign_key_checks before adding a foreign
// key): the setting lives only as long as the connection, so a resumed prepare runs it again.
bool IsSessionSetting(absl::string_view sql) {
  sql = absl::StripLeadingAsciiWhitespace(sql);
  return sql.size() > 4 && absl::StartsWithIgnoreCase(sql, "SET") &&
         absl::ascii_isspace(static_cast<unsigned char>(sql[3]));
}

// MariaDB errors saying that what a step creates is there already: on a resumed prepare, the
// sign of a DDL step that the interrupted one had begun (and the server completed).
bool IsAlreadyThere(Dialect dialect, const ExecOutcome& outcome) {
  if (dialect != Dialect::kMySql || outcome.ok()) return false;
  const std::string& code = outcome.error->code;
  // table exists, duplicate column, duplicate key name, multiple primary key, duplicate
  // foreign key constraint name.
  return code == "1050" || code == "1060" || code == "1061" || code == "1068" || code == "1826";
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
      : spec_(spec),
        driver_(driver),
        dialect_(driver.dialect()),
        options_(options),
        progress_(progress),
        state_sql_(spec.name(), dialect_) {}

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
    if (absl::Status status = StepStatus(main.ExecuteSql(LoadStateSql::CreateTable()),
                                         "creating the load state table");
        !status.ok()) {
      return status;
    }
    if (options_.stage != LoadOptions::Stage::kPartsOnly) {
      if (absl::Status status = LockWorkload(main); !status.ok()) return status;
      ReportFreeSpace(main);
    }
    for (const v1::Table& table : spec_.tables()) {
      if (absl::Status status = LoadTable(main, table); !status.ok()) return status;
    }
    if (options_.stage != LoadOptions::Stage::kAll) return absl::OkStatus();
    // The checks only read: one interrupted runs again whole.
    TestKillPoint("check:before");
    absl::Status valid = ValidateWorkloadData(spec_, main, dialect_);
    if (valid.ok()) TestKillPoint("check:after");
    return valid;
  }

  // One prepare (or its set-up stage) of a workload at a time per database, held until the
  // session closes. The lock is the server session's, so it also outlives a killed dbload for
  // as long as the server still runs that session's last statement: a server completes a
  // CREATE INDEX whose client died before it notices. A resumed prepare waits here until what
  // the killed one had begun is committed or rolled back, and then reads the load state.
  absl::Status LockWorkload(Session& session) {
    const std::optional<db::SessionLockSql> lock =
        db::SessionLock(dialect_, "dbload prepare", spec_.name());
    if (!lock.has_value()) return absl::OkStatus();
    absl::StatusOr<std::vector<std::string>> got = session.FetchColumn(lock->try_lock, 1);
    if (!got.ok()) return got.status();
    if (!got->empty() && (got->front() == "t" || got->front() == "1")) return absl::OkStatus();
    Say({.note = absl::StrCat(
             "waiting for another prepare of workload ", spec_.name(),
             " on this database to end (or for the server to finish the statement a killed "
             "prepare left running)")});
    if (!lock->wait_returns_row) {
      return StepStatus(session.ExecuteSql(lock->wait_lock), "waiting for the prepare lock");
    }
    got = session.FetchColumn(lock->wait_lock, 1);
    if (!got.ok()) return got.status();
    if (got->empty() || got->front() != "1") {
      return absl::DeadlineExceededError(absl::StrCat("another prepare of workload ", spec_.name(),
                                                      " held its lock on this database for a year"));
    }
    return absl::OkStatus();
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
    absl::StatusOr<std::vector<std::string>> dir =
        session.FetchColumn(db::DataDirectoryQuery(dialect_), 1);
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

  absl::Status SetPhase(Session& session, const v1::Table& table, absl::string_view phase) {
    return StepStatus(session.ExecuteSql(state_sql_.SetPhase(table.name(), phase)),
                      absl::StrCat("recording the load state of ", table.name()));
  }

  absl::StatusOr<bool> TableExists(Session& session, const v1::Table& table) {
    const std::string sql = db::TableExistsQuery(dialect_, table.name());
    absl::StatusOr<std::vector<std::string>> found = session.FetchColumn(sql, 1);
    if (!found.ok()) return found.status();
    return !found->empty();
  }

  // The table's row and its parts' rows in one transaction: a load is either recorded whole
  // or not at all. On PostgreSQL the table is created in the same transaction; MariaDB's
  // CREATE TABLE commits the rows first (and is atomic itself), so the state may be there
  // without the table: LoadTable then creates it.
  absl::Status RecordNewLoad(Session& session, const v1::Table& table, int parts,
                             const std::string& create) {
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return StepStatus(begun, "BEGIN");
    const std::string insert = state_sql_.RecordNewLoad(table.name(), parts);
    if (absl::Status status = StepStatus(
            session.ExecuteSql(insert), absl::StrCat("recording the load state of ", table.name()));
        !status.ok()) {
      session.Rollback();
      return status;
    }
    if (absl::Status status = CreateTable(session, table, create); !status.ok()) {
      session.Rollback();
      return status;
    }
    return StepStatus(session.Commit(), "COMMIT");
  }

  absl::Status CreateTable(Session& session, const v1::Table& table, const std::string& create) {
    TestKillPoint(absl::StrCat("create:", table.name(), ":before"));
    if (absl::Status status =
            StepStatus(session.ExecuteSql(create), absl::StrCat("creating ", table.name()));
        !status.ok()) {
      return status;
    }
    TestKillPoint(absl::StrCat("create:", table.name(), ":after"));
    return absl::OkStatus();
  }

  absl::Status LoadTable(Session& session, const v1::Table& table) {
    absl::StatusOr<std::vector<std::string>> state =
        session.FetchColumn(state_sql_.SelectPhase(table.name()), 1);
    if (!state.ok()) return state.status();
    absl::StatusOr<bool> exists = TableExists(session, table);
    if (!exists.ok()) return exists.status();
    absl::StatusOr<std::string> create = SqlFor(table.create(), dialect_, table.name());
    if (!create.ok()) return create.status();
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
      if (absl::Status status = RecordNewLoad(session, table, parts, *create); !status.ok()) {
        return status;
      }
      phase = "loading";
      *exists = true;
    }
    absl::StatusOr<LoadPosition> at = ParsePhase(table, phase);
    if (!at.ok()) return at.status();
    if (at->phase == LoadPosition::Phase::kDone) {
      Say({table.name(), static_cast<uint64_t>(table.data().rows()),
           static_cast<uint64_t>(table.data().rows())});
      return absl::OkStatus();
    }
    if (!*exists) {
      if (absl::Status status = CreateTable(session, table, *create); !status.ok()) return status;
    }
    if (options_.stage == LoadOptions::Stage::kSetUpOnly) return absl::OkStatus();
    if (options_.stage == LoadOptions::Stage::kPartsOnly) {
      return at->phase == LoadPosition::Phase::kLoading ? LoadParts(session, table, parts)
                                                        : absl::OkStatus();
    }
    if (at->phase == LoadPosition::Phase::kLoading) {
      if (absl::Status status = LoadParts(session, table, parts); !status.ok()) return status;
      TestKillPoint(absl::StrCat("load:", table.name(), ":end"));
      at = Following(table, *at);
      if (absl::Status status = SetPhase(session, table, PhaseText(*at)); !status.ok()) {
        return status;
      }
    } else {
      Say({.note = absl::StrCat(table.name(), ": resuming after its rows, at ", PhaseText(*at))});
    }
    return FinishTable(session, table, *at);
  }

  // Indexes after the data (building one over the loaded rows beats maintaining it per row),
  // then after_load, then the vacuum and analyze: each step recorded as it completes, so that
  // an interrupted prepare resumes at the step it was in.
  absl::Status FinishTable(Session& session, const v1::Table& table, LoadPosition at) {
    if (absl::Status status = ReplaySessionSettings(session, table, at); !status.ok()) {
      return status;
    }
    while (at.phase != LoadPosition::Phase::kDone) {
      const LoadPosition next = Following(table, at);
      absl::Status status;
      switch (at.phase) {
        case LoadPosition::Phase::kIndexes:
          status = RunStep(session, table, table.indexes(at.step), at, next);
          break;
        case LoadPosition::Phase::kAfterLoad:
          status = RunStep(session, table, table.after_load(at.step), at, next);
          break;
        case LoadPosition::Phase::kAnalyze:
          TestKillPoint(absl::StrCat("analyze:", table.name(), ":before"));
          // VACUUM runs in no transaction: one interrupted runs again, which costs little.
          status = Settle(session, table);
          if (status.ok()) {
            TestKillPoint(absl::StrCat("analyze:", table.name(), ":after"));
            status = SetPhase(session, table, PhaseText(next));
          }
          break;
        case LoadPosition::Phase::kLoading:
        case LoadPosition::Phase::kDone:
          break;
      }
      if (!status.ok()) return status;
      at = next;
    }
    return absl::OkStatus();
  }

  // The session settings among the steps before `at`, which a resumed prepare's connection
  // does not have (an uninterrupted one ran them on this same connection).
  absl::Status ReplaySessionSettings(Session& session, const v1::Table& table, LoadPosition at) {
    const bool past_indexes =
        at.phase == LoadPosition::Phase::kAfterLoad || at.phase == LoadPosition::Phase::kAnalyze;
    const int indexes = past_indexes                                ? table.indexes_size()
                        : at.phase == LoadPosition::Phase::kIndexes ? at.step
                                                                    : 0;
    const int after_load = at.phase == LoadPosition::Phase::kAnalyze     ? table.after_load_size()
                           : at.phase == LoadPosition::Phase::kAfterLoad ? at.step
                                                                         : 0;
    std::vector<const v1::DialectSql*> earlier;
    for (int i = 0; i < indexes; ++i) earlier.push_back(&table.indexes(i));
    for (int i = 0; i < after_load; ++i) earlier.push_back(&table.after_load(i));
    for (const v1::DialectSql* step : earlier) {
      absl::StatusOr<std::string> sql = SqlFor(*step, dialect_, table.name());
      if (!sql.ok() || !IsSessionSetting(*sql)) continue;
      if (absl::Status status =
              StepStatus(session.ExecuteSql(*sql), absl::StrCat("resuming ", table.name()));
          !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  // One step of indexes or after_load, and `next` recorded as the table's phase in the same
  // transaction: on PostgreSQL, whose DDL is transactional, the step and its record commit
  // together or not at all (a server that completes a step whose client died rolls it back
  // when it finds the client gone). On MariaDB the same holds for DML; DDL commits by itself,
  // so a DDL step the interrupted prepare had begun runs again on resume and must be written
  // so that it can (IF NOT EXISTS).
  absl::Status RunStep(Session& session, const v1::Table& table, const v1::DialectSql& step,
                       LoadPosition at, LoadPosition next) {
    const std::string point = absl::StrCat(
        at.phase == LoadPosition::Phase::kIndexes ? "index:" : "after_load:", table.name(), ":",
        at.step);
    TestKillPoint(absl::StrCat(point, ":before"));
    // Steps may be written for one dialect only (PostgreSQL's primary key built after loading,
    // where InnoDB declares it up front); the other has nothing to do.
    absl::StatusOr<std::string> sql = SqlFor(step, dialect_, table.name());
    if (!sql.ok()) return absl::OkStatus();
    const std::string doing = absl::StrCat(
        at.phase == LoadPosition::Phase::kIndexes ? "indexing " : "after loading ", table.name());
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return StepStatus(begun, "BEGIN");
    ExecOutcome ran = session.ExecuteSql(*sql);
    if (!ran.ok() && dialect_ == Dialect::kPostgreSql && ran.error->code == "25001") {
      // Not allowed in a transaction (VACUUM, CREATE INDEX CONCURRENTLY): it runs on its own
      // and, interrupted, runs again.
      session.Rollback();
      ran = session.ExecuteSql(*sql);
      if (ran.ok()) {
        TestKillPoint(absl::StrCat(point, ":after"));
        return SetPhase(session, table, PhaseText(next));
      }
      return StepStatus(ran, doing);
    }
    if (!ran.ok()) {
      session.Rollback();
      absl::Status status = StepStatus(ran, doing);
      if (!IsAlreadyThere(dialect_, ran)) return status;
      return absl::Status(
          status.code(),
          absl::StrCat(status.message(),
                       " (MariaDB commits DDL by itself, so a step that an interrupted prepare "
                       "had begun runs again when prepare resumes: write it so that it can, e.g. "
                       "CREATE INDEX IF NOT EXISTS, ADD CONSTRAINT name FOREIGN KEY IF NOT EXISTS; "
                       "see workloads/README.md)"));
    }
    TestKillPoint(absl::StrCat(point, ":after"));
    if (absl::Status status = SetPhase(session, table, PhaseText(next)); !status.ok()) {
      session.Rollback();
      return status;
    }
    return StepStatus(session.Commit(), "COMMIT");
  }

  // A freshly loaded table left as it is gets vacuumed and analyzed by the server in the
  // background soon after (PostgreSQL's autovacuum, InnoDB's statistics recalculation): during
  // the first measured run, whose first reads would also pay for setting every row's hint bits
  // (PostgreSQL). Doing it now, as pgbench -i does, keeps that work out of the measurements.
  //
  // An empty table (one the load fills) is not analyzed: PostgreSQL would record it as empty,
  // and a statement the load prepares then keeps the generic plan made for an empty table
  // until autovacuum analyzes it again, however many rows arrive. Measured on PostgreSQL 15:
  // a primary-key lookup's generic plan is a Seq Scan on an analyzed empty table, still after
  // 100,000 inserted rows, and an Index Scan on one never analyzed.
  absl::Status Settle(Session& session, const v1::Table& table) {
    const std::string sql = db::AnalyzeTableSql(dialect_, table.name());
    if (sql.empty()) return absl::OkStatus();
    absl::StatusOr<std::vector<std::string>> any =
        session.FetchColumn(absl::StrCat("SELECT 1 FROM ", table.name(), " LIMIT 1"), 1);
    if (!any.ok()) return any.status();
    if (any->empty()) {
      Say({.note = absl::StrCat(table.name(),
                                ": empty, so not analyzed (the server plans it "
                                "as a table of unknown size until it analyzes it)",
                                AnalyzedEmptyWarning(session, table))});
      return absl::OkStatus();
    }
    return StepStatus(session.ExecuteSql(sql),
                      absl::StrCat("vacuuming and analyzing ", table.name()));
  }

  // For an empty table that PostgreSQL has nevertheless analyzed (an after_load step, or the
  // server): what the scenarios that read it will meet, or "".
  std::string AnalyzedEmptyWarning(Session& session, const v1::Table& table) {
    if (dialect_ != Dialect::kPostgreSql) return "";
    absl::StatusOr<std::vector<std::string>> tuples =
        session.FetchColumn(absl::StrCat("SELECT reltuples FROM pg_class WHERE oid = ",
                                         db::QuoteText(table.name(), dialect_), "::regclass"),
                            1);
    if (!tuples.ok() || tuples->empty() || (*tuples)[0] != "0") return "";
    std::vector<std::string> readers;
    for (const v1::Scenario& scenario : spec_.scenarios()) {
      for (const v1::QueryType& query_type : scenario.query_types()) {
        const bool reads = std::any_of(
            query_type.statements().begin(), query_type.statements().end(),
            [&](const v1::Statement& statement) {
              absl::StatusOr<std::string> text = SqlFor(statement.sql(), dialect_, table.name());
              return text.ok() && MentionsTable(*text, table.name());
            });
        if (reads) readers.push_back(absl::StrCat(scenario.name(), "/", query_type.name()));
      }
    }
    if (readers.empty()) return "";
    return absl::StrCat(
        "; WARNING: it was analyzed while empty (pg_class.reltuples = 0), so the statements "
        "the load prepares for ",
        absl::StrJoin(readers, ", "),
        " may keep plans made for an empty table (sequential scans) however many rows the load "
        "adds, until autovacuum analyzes it: drop the ANALYZE that runs before it has rows, "
        "or set plan_cache_mode = force_custom_plan in the scenario's session");
  }

  // Steps may be written for one dialect only; the other skips them.
  absl::Status RunEach(Session& session,
                       const google::protobuf::RepeatedPtrField<v1::DialectSql>& steps,
                       const v1::Table& table, absl::string_view doing) {
    for (const v1::DialectSql& step : steps) {
      absl::StatusOr<std::string> sql = SqlFor(step, dialect_, table.name());
      if (!sql.ok()) continue;
      if (absl::Status status =
              StepStatus(session.ExecuteSql(*sql), absl::StrCat(doing, " ", table.name()));
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
        state_sql_.SelectParts(table.name()), static_cast<size_t>(kMaxLoadParallel));
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
    batches_ = 0;
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
    const auto seed = [&](uint64_t stream) {
      return MixSeed(MixSeed(kSeedOfLoad, std::hash<std::string>{}(table.name())),
                     stream * 1'000'003 + static_cast<uint64_t>(part.first + part.done));
    };
    for (int c = 0; c < data.columns_size(); ++c) {
      absl::StatusOr<std::unique_ptr<ParamGenerator>> generator =
          MakeParamGenerator(data.columns(c).generator(), {.seed = seed(static_cast<uint64_t>(c))});
      if (!generator.ok()) return generator.status();
      generators.push_back(*std::move(generator));
      columns.push_back(data.columns(c).name());
    }
    std::unique_ptr<RowSource> source;
    if (!data.builtin_rows().empty()) {
      absl::StatusOr<std::unique_ptr<RowSource>> made = MakeRowSource(data.builtin_rows(), seed(0));
      if (!made.ok()) return made.status();
      source = *std::move(made);
      columns = source->columns();
    }
    const bool server_side = data.columns_size() == 0 && source == nullptr;
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
      if (ExecOutcome begun = session.Begin(); !begun.ok()) return StepStatus(begun, "BEGIN");
      ExecOutcome loaded;
      if (server_side) {
        const Value bounds[] = {first, last};
        loaded = session.Execute(0, bounds);
      } else {
        const size_t width = columns.size();
        const size_t cells = static_cast<size_t>(last - first + 1) * width;
        values.resize(cells);
        texts.resize(cells);
        size_t cell = 0;
        for (int64_t row = first; row <= last; ++row) {
          if (source != nullptr) {
            source->Row(row, std::span(values).subspan(cell, width),
                        std::span(texts).subspan(cell, width));
            cell += width;
            continue;
          }
          for (auto& generator : generators) {
            values[cell] = generator->Next({.row = row}, texts[cell]);
            ++cell;
          }
        }
        loaded = session.BulkInsert(table.name(), columns, values);
      }
      if (loaded.ok()) {
        loaded = session.ExecuteSql(
            state_sql_.SetRowsDone(table.name(), part.index, last - part.first + 1));
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
        return StepStatus(loaded,
                          absl::StrCat("loading rows ", first, "-", last, " of ", table.name()));
      }
      attempt = 0;
      TestKillPoint(absl::StrCat("load:", table.name(), ":", ++batches_));
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
  const LoadStateSql state_sql_;
  std::mutex progress_mu_;
  std::atomic<uint64_t> loaded_{0};  // rows of the current table, over all parts
  std::atomic<uint64_t> batches_{0};  // batches of the current table this process committed
  std::atomic<bool> stop_{false};    // a part failed: the others stop at their next batch
};

}  // namespace

absl::Status LoadWorkloadData(const v1::WorkloadSpec& spec, db::Driver& driver,
                              const LoadOptions& options, const ProgressCallback& progress) {
  if (options.parallel < 1 || options.parallel > kMaxLoadParallel) {
    return absl::InvalidArgumentError(absl::StrCat("parallel: expected 1 to ", kMaxLoadParallel,
                                                   ", got ", options.parallel));
  }
  return Loader(spec, driver, options, progress).Run();
}

}  // namespace dbload
