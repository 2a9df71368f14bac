#include "db/server_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dbload::db {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A client library that records what the core asks of it; `server_up` decides whether
// connections open, and LoseConnection() plays a connection error reported by the library.
class ScriptedSession final : public ServerSession {
 public:
  ScriptedSession()
      : ServerSession({.not_prepared = "NP",
                       .wrong_parameters = "WP",
                       .bad_bulk_shape = "BS",
                       .cannot_reconnect = "RC",
                       .transaction_lost = "TL",
                       .statement_name_prefix = "s"}) {}

  ExecOutcome Execute(int id, std::span<const Value> params, bool) override {
    if (auto error = CheckExecute(id, params.size())) return ExecOutcome{.error = error};
    log.push_back("execute " + std::to_string(id));
    return ExecOutcome{.rows = 1};
  }

  void LoseConnection() { ConnectionLost(); }

  bool server_up = true;
  bool reject_sql = false;  // PrepareOnServer answers with a fatal error
  std::vector<std::string> log;
  int opens = 0;

 private:
  absl::Status OpenConnection() override {
    ++opens;
    return server_up ? absl::OkStatus() : absl::UnavailableError("refused");
  }
  void CloseConnection() override { log.push_back("close"); }
  std::optional<DbError> PrepareOnServer(int id, const std::string& sql, int& parameters) override {
    if (!server_up) return DbError{ErrorClass::kConnection, "gone", "server gone"};
    if (reject_sql) return DbError{ErrorClass::kFatal, "syntax", "bad sql"};
    log.push_back("prepare " + std::to_string(id) + " " + sql);
    parameters = 1;
    return std::nullopt;
  }
  void ForgetStatement(int id) override { log.push_back("forget " + std::to_string(id)); }
  ExecOutcome RunSql(std::string_view sql) override {
    log.push_back(std::string(sql));
    return {};
  }
  ExecOutcome RunBegin() override { return RunSql("BEGIN"); }
  ExecOutcome RunCommit() override { return RunSql("COMMIT"); }
  ExecOutcome RunRollback() override { return RunSql("ROLLBACK"); }
  ExecOutcome RunBulkInsert(std::string_view, std::span<const std::string>,
                            std::span<const Value> values) override {
    return ExecOutcome{.rows = static_cast<int64_t>(values.size())};
  }
  absl::StatusOr<std::vector<std::string>> RunFetchColumn(std::string_view, size_t) override {
    return std::vector<std::string>{"1"};
  }
  void ExplainLostCommit(DbError& error) override {
    error.message = "lost COMMIT: " + error.message;
  }
};

TEST(ServerSessionTest, StatementsAreCheckedBeforeAnythingIsSent) {
  ScriptedSession session;
  ASSERT_TRUE(session.Open().ok());
  const Value one[] = {int64_t{1}};
  EXPECT_EQ(session.Execute(3, one, false).error->code, "NP");
  ASSERT_TRUE(session.Prepare(3, {"q", "SELECT ?"}).ok());
  const ExecOutcome wrong = session.Execute(3, {}, false);
  EXPECT_EQ(wrong.error->code, "WP");
  EXPECT_EQ(wrong.error->message, "statement 3 (s3) takes 1 parameters, got 0");
  EXPECT_TRUE(session.Execute(3, one, false).ok());
  const std::string columns[] = {"a", "b"};
  EXPECT_EQ(session.BulkInsert("t", columns, one).error->code, "BS");
  EXPECT_THAT(session.log, ElementsAre("prepare 3 SELECT ?", "execute 3"));
}

TEST(ServerSessionTest, RejectedStatementIsForgottenAndReplacedOneIsDroppedFirst) {
  ScriptedSession session;
  ASSERT_TRUE(session.Open().ok());
  ASSERT_TRUE(session.Prepare(0, {"a", "SELECT 1"}).ok());
  session.reject_sql = true;
  const absl::Status rejected = session.Prepare(0, {"b", "SELEC"});
  EXPECT_EQ(rejected.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rejected.message(), HasSubstr("prepare statement 0 (b): [syntax] bad sql"));
  EXPECT_THAT(session.log, ElementsAre("prepare 0 SELECT 1", "forget 0", "forget 0"));
  const Value one[] = {int64_t{1}};
  EXPECT_EQ(session.Execute(0, one, false).error->code, "NP");
}

TEST(ServerSessionTest, StatementPreparedWithoutServerIsPreparedOnReconnect) {
  ScriptedSession session;
  session.server_up = false;
  EXPECT_FALSE(session.Open().ok());
  const absl::Status prepared = session.Prepare(1, {"q", "SELECT ?"});
  EXPECT_EQ(prepared.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(prepared.message(), HasSubstr("[RC]"));
  session.server_up = true;
  const Value one[] = {int64_t{1}};
  EXPECT_TRUE(session.Execute(1, one, false).ok());
  EXPECT_THAT(session.log, ElementsAre("close", "prepare 1 SELECT ?", "execute 1"));
}

TEST(ServerSessionTest, ConnectionLostInATransactionFailsEveryCallUntilRollback) {
  ScriptedSession session;
  ASSERT_TRUE(session.Open().ok());
  ASSERT_TRUE(session.Prepare(0, {"q", "UPDATE t SET a = ?"}).ok());
  ASSERT_TRUE(session.Begin().ok());
  session.LoseConnection();
  const Value one[] = {int64_t{1}};
  EXPECT_EQ(session.Execute(0, one, false).error->code, "TL");
  EXPECT_EQ(session.ExecuteSql("SELECT 1").error->code, "TL");
  EXPECT_EQ(session.FetchColumn("SELECT 1", 1).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(session.Rollback().ok());  // the server rolled it back: nothing is sent
  EXPECT_EQ(session.opens, 1);
  EXPECT_TRUE(session.Execute(0, one, false).ok());  // reconnects and prepares again
  EXPECT_EQ(session.opens, 2);
  EXPECT_THAT(session.log, ElementsAre("prepare 0 UPDATE t SET a = ?", "BEGIN", "close",
                                       "prepare 0 UPDATE t SET a = ?", "execute 0"));
}

TEST(ServerSessionTest, CommitAfterLostConnectionFailsOnceAndEndsTheTransaction) {
  ScriptedSession session;
  ASSERT_TRUE(session.Open().ok());
  ASSERT_TRUE(session.Begin().ok());
  session.LoseConnection();
  EXPECT_EQ(session.Commit().error->code, "TL");
  session.server_up = false;
  // Outside a transaction now: the commit tries to reconnect, and says what a lost COMMIT means.
  const ExecOutcome commit = session.Commit();
  EXPECT_EQ(commit.error->code, "RC");
  EXPECT_THAT(commit.error->message, HasSubstr("lost COMMIT: "));
  session.server_up = true;
  EXPECT_TRUE(session.Commit().ok());
}

}  // namespace
}  // namespace dbload::db
