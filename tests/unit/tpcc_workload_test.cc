// The tpcc workload's transactions (workload/tpcc.h) against a session that answers like a
// loaded TPC-C database: what each transaction sends, with which values, in the specification's
// mix and proportions (clause 2's inputs, clause 5.2.3's mix). The real servers' side is in
// tests/integration/tpcc_test.cc.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/stub_session.h"
#include "workload/tpcc.h"

namespace dbload::tpcc {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

struct Call {
  std::string sql;  // or BEGIN / COMMIT / ROLLBACK
  std::vector<db::Value> params;
  std::vector<std::string> texts;  // the text parameters, copied (Values borrow them)
  int64_t Int(size_t i) const {
    const auto* value = i < params.size() ? std::get_if<int64_t>(&params[i]) : nullptr;
    return value == nullptr ? -1 : *value;
  }
};

// Answers as a loaded database would: every district's next order 3001, every price 12.34,
// every stock quantity `stock_quantity`, three customers of each last name; item 100,001 does
// not exist. Records every call.
class TpccSession final : public StubSession {
 public:
  explicit TpccSession(std::vector<db::StatementSpec> statements)
      : statements_(std::move(statements)) {}

  db::ExecOutcome Execute(int id, std::span<const db::Value> params, bool capture) override {
    Call& call = calls.emplace_back(
        Call{.sql = statements_[id].sql, .params = {params.begin(), params.end()}});
    for (const db::Value& value : params) {
      if (const auto* text = std::get_if<std::string_view>(&value)) call.texts.emplace_back(*text);
    }
    if (fail_next) {
      fail_next = false;
      return {.error = db::DbError{.error_class = db::ErrorClass::kRetryable, .code = "40P01"}};
    }
    const std::string& sql = call.sql;
    std::optional<int64_t> first;
    if (absl::StartsWith(sql, "SELECT d_next_o_id")) first = 3001;
    if (absl::StartsWith(sql, "SELECT CAST(i_price")) {
      if (call.Int(0) > 100'000) return {.rows = 0};
      first = 1234;
    }
    if (absl::StartsWith(sql, "SELECT s_quantity")) first = stock_quantity;
    if (absl::StartsWith(sql, "SELECT COUNT(*) FROM customer")) first = 3;
    if (absl::StartsWith(sql, "SELECT c_id")) first = 77;
    if (absl::StartsWith(sql, "SELECT o_id")) first = 2999;
    if (absl::StartsWith(sql, "SELECT no_o_id")) first = 2101;
    if (absl::StartsWith(sql, "SELECT o_c_id")) first = 42;
    if (absl::StartsWith(sql, "DELETE FROM new_order")) return {.rows = delete_rows};
    return {.rows = 1, .first_value = capture ? first : std::nullopt};
  }
  db::ExecOutcome Begin() override { return Record("BEGIN"); }
  db::ExecOutcome Commit() override { return Record("COMMIT"); }
  db::ExecOutcome Rollback() override { return Record("ROLLBACK"); }

  // The calls whose SQL starts with `prefix`.
  std::vector<const Call*> Starting(std::string_view prefix) const {
    std::vector<const Call*> found;
    for (const Call& call : calls) {
      if (call.sql.starts_with(prefix)) found.push_back(&call);
    }
    return found;
  }

  std::vector<Call> calls;
  int64_t stock_quantity = 50;
  int64_t delete_rows = 1;
  bool fail_next = false;

 private:
  db::ExecOutcome Record(std::string what) {
    calls.push_back(Call{.sql = std::move(what)});
    return {};
  }
  std::vector<db::StatementSpec> statements_;
};

std::unique_ptr<Scenario> StandardMix(int64_t warehouses) {
  absl::StatusOr<std::unique_ptr<Workload>> workload =
      MakeWorkload("tpcc", {{"warehouses", absl::StrCat(warehouses)}});
  EXPECT_TRUE(workload.ok()) << workload.status();
  if (!workload.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = (*workload)->MakeScenario("standard");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return scenario.ok() ? *std::move(scenario) : nullptr;
}

constexpr int kNewOrder = 0, kPayment = 1, kOrderStatus = 2, kDelivery = 3, kStockLevel = 4;

TEST(TpccWorkloadTest, IsBuiltInWithTheStandardMixAndEachTransactionAlone) {
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("tpcc", {});
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_THAT((*workload)->ScenarioNames(), ElementsAre("standard", "new_order", "payment",
                                                        "order_status", "delivery", "stock_level"));
  std::unique_ptr<Scenario> scenario = StandardMix(1);
  ASSERT_NE(scenario, nullptr);
  EXPECT_THAT(scenario->query_types(),
              ElementsAre("new_order", "payment", "order_status", "delivery", "stock_level"));
  EXPECT_THAT((*workload)->MakeScenario("new_order_only").status().message(),
              HasSubstr("workload tpcc has no scenario 'new_order_only' (it has: standard, "
                        "new_order, payment, order_status, delivery, stock_level)"));
  // Alone: one query type, the only one dealt, run as that transaction.
  absl::StatusOr<std::unique_ptr<Scenario>> delivery = (*workload)->MakeScenario("delivery");
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  EXPECT_THAT((*delivery)->query_types(), ElementsAre("delivery"));
  EXPECT_EQ((*delivery)->RetryPolicies().size(), 1u);
  std::unique_ptr<ScenarioWorker> worker = (*delivery)->NewWorker({.run_seed = 3});
  TpccSession session((*delivery)->Statements(db::Dialect::kPostgreSql));
  for (int i = 0; i < 20; ++i) {
    const int type = worker->NextQueryType();
    ASSERT_EQ(type, 0);
    session.calls.clear();
    ASSERT_TRUE(worker->Run(type, session).ok());
    EXPECT_EQ(session.Starting("DELETE FROM new_order").size(), 10u) << "one per district";
    EXPECT_TRUE(session.Starting("INSERT").empty());
  }
  // The consistency conditions are its invariants, each counting what breaks it.
  const std::vector<v1::Invariant> invariants = (*workload)->Invariants();
  ASSERT_EQ(invariants.size(), 4u);
  for (const v1::Invariant& invariant : invariants) {
    EXPECT_THAT(invariant.name(), HasSubstr("consistency condition"));
    EXPECT_EQ(invariant.expect(), "0");
  }
}

TEST(TpccWorkloadTest, OptionsAreCheckedAndNamed) {
  for (const char* bad : {"0", "-1", "two", "100001"}) {
    absl::StatusOr<std::unique_ptr<Workload>> workload =
        MakeWorkload("tpcc", {{"warehouses", bad}});
    ASSERT_FALSE(workload.ok()) << bad;
    EXPECT_THAT(workload.status().message(),
                HasSubstr(absl::StrCat("expected an integer from 1 to 100000, got '", bad, "'")));
  }
  EXPECT_THAT(MakeWorkload("tpcc", {{"scale", "2"}}).status().message(),
              HasSubstr("unknown option of workload tpcc (known: warehouses, terminal_waits, "
                        "foreign_keys)"));
  EXPECT_THAT(MakeWorkload("tpcc", {{"terminal_waits", "yes"}}).status().message(),
              HasSubstr("expected 'true' or 'false', got 'yes'"));
  EXPECT_THAT(MakeWorkload("tpcc", {{"foreign_keys", "1"}}).status().message(),
              HasSubstr("expected 'true' or 'false', got '1'"));
}

// foreign_keys adds clause 1.3's ten foreign keys as steps after each child's rows and key,
// every parent earlier in load order; without it the tables are the same and have none.
TEST(TpccWorkloadTest, ForeignKeysComeAfterTheirParentsKeys) {
  absl::StatusOr<std::unique_ptr<Workload>> plain = MakeWorkload("tpcc", {});
  absl::StatusOr<std::unique_ptr<Workload>> keyed =
      MakeWorkload("tpcc", {{"foreign_keys", "true"}});
  ASSERT_TRUE(plain.ok() && keyed.ok());
  const v1::WorkloadSpec without = (*plain)->DataSpec();
  const v1::WorkloadSpec with = (*keyed)->DataSpec();
  ASSERT_EQ(without.tables_size(), with.tables_size());
  std::map<std::string, int> position;
  int added = 0;
  for (int t = 0; t < with.tables_size(); ++t) {
    const v1::Table& table = with.tables(t);
    position[table.name()] = t;
    const int before = without.tables(t).indexes_size();
    for (int i = 0; i < table.indexes_size(); ++i) {
      const std::string& pg = table.indexes(i).postgresql();
      if (i < before) {
        EXPECT_EQ(table.indexes(i).SerializeAsString(),
                  without.tables(t).indexes(i).SerializeAsString());
        continue;
      }
      ++added;
      EXPECT_THAT(pg, HasSubstr(absl::StrCat("ALTER TABLE ", table.name(), " ADD CONSTRAINT tpcc_",
                                             table.name(), "_")));
      EXPECT_THAT(table.indexes(i).mysql(), HasSubstr(" FOREIGN KEY IF NOT EXISTS ("));
      const std::string parent = pg.substr(pg.find("REFERENCES ") + 11);
      const std::string parent_table = parent.substr(0, parent.find(' '));
      ASSERT_TRUE(position.contains(parent_table)) << parent_table << " after " << table.name();
      EXPECT_LT(position[parent_table], t);
    }
  }
  EXPECT_EQ(added, 10);
  EXPECT_THAT(with.tables(position["order_line"]).indexes(2).postgresql(),
              ::testing::Eq("ALTER TABLE order_line ADD CONSTRAINT tpcc_order_line_stock FOREIGN "
                            "KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)"));
}

// Both dialects prepare the same statements in the same order: PostgreSQL's numbered, MySQL's
// with its own cast; S_DIST_xx comes per district.
TEST(TpccWorkloadTest, StatementsPerDialect) {
  std::unique_ptr<Scenario> scenario = StandardMix(1);
  ASSERT_NE(scenario, nullptr);
  const std::vector<db::StatementSpec> pg = scenario->Statements(db::Dialect::kPostgreSql);
  const std::vector<db::StatementSpec> my = scenario->Statements(db::Dialect::kMySql);
  ASSERT_EQ(pg.size(), my.size());
  std::set<std::string> names;
  for (size_t i = 0; i < pg.size(); ++i) {
    EXPECT_EQ(pg[i].name, my[i].name);
    names.insert(pg[i].name);
    EXPECT_THAT(pg[i].sql, Not(HasSubstr("?"))) << pg[i].name;
    EXPECT_THAT(my[i].sql, Not(HasSubstr("$1"))) << my[i].name;
  }
  EXPECT_EQ(names.size(), pg.size()) << "statement names are unique";
  const auto find = [](const std::vector<db::StatementSpec>& all, const std::string& name) {
    for (const db::StatementSpec& statement : all) {
      if (statement.name == name) return statement.sql;
    }
    return std::string("(none)");
  };
  EXPECT_EQ(find(pg, "stock_for_update_7"),
            "SELECT s_quantity, s_data, s_dist_07 FROM stock WHERE s_i_id = $1 AND s_w_id = $2 "
            "FOR UPDATE");
  EXPECT_THAT(find(my, "item_price"), HasSubstr("CAST(i_price * 100 AS signed)"));
  EXPECT_THAT(find(pg, "item_price"), HasSubstr("CAST(i_price * 100 AS integer)"));
  EXPECT_THAT(find(pg, "insert_order_line_10"), HasSubstr("(SELECT s_dist_10 FROM stock"));
}

TEST(TpccWorkloadTest, TerminalsTakeWarehousesInBlocksAndTheirDistrictsInTurn) {
  // 20 terminals, 2 warehouses: 10 each, one per district.
  for (uint32_t i = 0; i < 20; ++i) {
    const Terminal terminal = TerminalOf(i, 20, 2);
    EXPECT_EQ(terminal.warehouse, i < 10 ? 1 : 2) << i;
    EXPECT_EQ(terminal.district, i % 10 + 1) << i;
  }
  // 3 over 2: the first warehouse gets two.
  EXPECT_EQ(TerminalOf(0, 3, 2).warehouse, 1);
  EXPECT_EQ(TerminalOf(1, 3, 2).warehouse, 1);
  EXPECT_EQ(TerminalOf(1, 3, 2).district, 2);
  EXPECT_EQ(TerminalOf(2, 3, 2).warehouse, 2);
  EXPECT_EQ(TerminalOf(2, 3, 2).district, 1);
  // Two agents of two slots each (0-1, 2-3) share no warehouse.
  EXPECT_EQ(TerminalOf(0, 4, 2).warehouse, 1);
  EXPECT_EQ(TerminalOf(1, 4, 2).warehouse, 1);
  EXPECT_EQ(TerminalOf(2, 4, 2).warehouse, 2);
  EXPECT_EQ(TerminalOf(3, 4, 2).warehouse, 2);
  // Fewer terminals than warehouses: spread over them; 11 terminals of one warehouse wrap
  // around its districts.
  EXPECT_EQ(TerminalOf(1, 2, 10).warehouse, 6);
  EXPECT_EQ(TerminalOf(10, 11, 1).district, 1);
  EXPECT_EQ(TerminalOf(7, 0, 3).warehouse, 3) << "a count below the slot is taken as the slot + 1";
}

TEST(TpccWorkloadTest, EveryHundredTransactionsAreTheStandardMix) {
  std::unique_ptr<Scenario> scenario = StandardMix(1);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 5, .index = 0});
  for (int deck = 0; deck < 10; ++deck) {
    std::map<int, int> counts;
    for (int i = 0; i < 100; ++i) ++counts[worker->NextQueryType()];
    EXPECT_THAT(counts, ElementsAre(Pair(kNewOrder, 45), Pair(kPayment, 43), Pair(kOrderStatus, 4),
                                    Pair(kDelivery, 4), Pair(kStockLevel, 4)));
  }
}

// Clause 5.2.5: before each transaction its keying time, after it a think time of mean 12 s
// (New-Order, Payment), 10 s (Order-Status) or 5 s, negative exponential and at most 10 means;
// the transaction keyed is the one run next. Without the option, no pause.
TEST(TpccWorkloadTest, TerminalWaitsAreClause5_2_5s) {
  absl::StatusOr<std::unique_ptr<Workload>> workload =
      MakeWorkload("tpcc", {{"terminal_waits", "true"}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  std::unique_ptr<Scenario> scenario = *(*workload)->MakeScenario("standard");
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 8});
  TpccSession session(scenario->Statements(db::Dialect::kMySql));
  std::map<int, std::vector<double>> thinks;  // by the transaction before
  int previous = -1;
  for (int i = 0; i < 20'000; ++i) {
    const double pause_s = static_cast<double>(worker->PauseNs()) / 1e9;
    const int next = worker->NextQueryType();
    const double keying = kKeyingS[next];
    if (previous < 0) {
      EXPECT_EQ(pause_s, keying) << "the first pause is its keying time alone";
    } else {
      ASSERT_GE(pause_s, keying);
      ASSERT_LE(pause_s - keying, 10 * kMeanThinkS[previous] + 1e-6);
      thinks[previous].push_back(pause_s - keying);
    }
    ASSERT_TRUE(worker->Run(next, session).ok());
    session.calls.clear();
    previous = next;
  }
  for (const auto& [transaction, values] : thinks) {
    double sum = 0;
    for (double v : values) sum += v;
    const double mean = sum / static_cast<double>(values.size());
    // The exponential's mean, cut at 10 means (which takes e^-10 of it away), within 4 standard
    // errors.
    EXPECT_NEAR(mean, kMeanThinkS[transaction],
                4 * kMeanThinkS[transaction] / std::sqrt(static_cast<double>(values.size())))
        << kTransactionNames[transaction];
  }
  std::unique_ptr<ScenarioWorker> no_wait = StandardMix(1)->NewWorker({.run_seed = 8});
  EXPECT_EQ(no_wait->PauseNs(), 0);
}

// Clause 2.4: 5–15 lines, the order numbered from D_NEXT_O_ID, each line's stock and amount
// from what was read, 1 % of lines from another warehouse, and 1 % of New-Orders rolled back
// on their last, unused item after all the other lines' work.
TEST(TpccWorkloadTest, NewOrderFollowsClause2_4) {
  std::unique_ptr<Scenario> scenario = StandardMix(2);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 9, .index = 0, .count = 1});
  constexpr int kOrders = 5'000;
  int rolled_back = 0, lines = 0, remote = 0, not_all_local = 0;
  for (int n = 0; n < kOrders; ++n) {
    TpccSession session(scenario->Statements(db::Dialect::kMySql));
    session.stock_quantity = n % 2 == 0 ? 50 : 12;
    const db::ExecOutcome outcome = worker->Run(kNewOrder, session);
    ASSERT_TRUE(outcome.ok()) << outcome.error->message;
    ASSERT_EQ(session.calls.front().sql, "BEGIN");
    const std::vector<const Call*> order = session.Starting("INSERT INTO orders");
    ASSERT_EQ(order.size(), 1u);
    EXPECT_EQ(order[0]->Int(0), 3001) << "O_ID is the district's D_NEXT_O_ID";
    EXPECT_EQ(order[0]->Int(2), 1) << "the terminal's warehouse";
    const int64_t count = order[0]->Int(4);
    ASSERT_GE(count, 5);
    ASSERT_LE(count, 15);
    const std::vector<const Call*> items = session.Starting("SELECT CAST(i_price");
    ASSERT_EQ(static_cast<int64_t>(items.size()), count) << "every line's item is read";
    const std::vector<const Call*> inserted = session.Starting("INSERT INTO order_line");
    if (outcome.rolled_back) {
      ++rolled_back;
      EXPECT_EQ(session.calls.back().sql, "ROLLBACK");
      EXPECT_EQ(items.back()->Int(0), 100'001) << "the unused item, last";
      EXPECT_EQ(static_cast<int64_t>(inserted.size()), count - 1);
    } else {
      EXPECT_EQ(session.calls.back().sql, "COMMIT");
      ASSERT_EQ(static_cast<int64_t>(inserted.size()), count);
    }
    bool all_local = true;
    std::pair<int64_t, int64_t> previous(0, 0);
    for (size_t i = 0; i < inserted.size(); ++i) {
      const Call& line = *inserted[i];
      EXPECT_EQ(line.Int(3), static_cast<int64_t>(i) + 1) << "OL_NUMBER";
      const int64_t quantity = line.Int(6);
      ASSERT_GE(quantity, 1);
      ASSERT_LE(quantity, 10);
      // OL_AMOUNT = OL_QUANTITY × I_PRICE, exactly.
      EXPECT_EQ(line.texts.at(0),
                absl::StrFormat("%d.%02d", quantity * 1234 / 100, quantity * 1234 % 100));
      const std::pair<int64_t, int64_t> key(line.Int(5), line.Int(4));  // supply, item
      EXPECT_LE(previous, key) << "lines in key order";
      previous = key;
      ++lines;
      if (line.Int(5) != 1) {
        ++remote;
        all_local = false;
      }
    }
    // S_QUANTITY: less the quantity, plus 91 when that would leave fewer than 10.
    for (const Call* update : session.Starting("UPDATE stock")) {
      const int64_t ordered = update->Int(1);
      const int64_t expected = session.stock_quantity >= ordered + 10
                                   ? session.stock_quantity - ordered
                                   : session.stock_quantity - ordered + 91;
      EXPECT_EQ(update->Int(0), expected);
      EXPECT_EQ(update->Int(2), update->Int(4) != 1 ? 1 : 0) << "S_REMOTE_CNT";
    }
    EXPECT_EQ(order[0]->Int(5), all_local ? 1 : 0) << "O_ALL_LOCAL";
    if (!all_local) ++not_all_local;
  }
  EXPECT_NEAR(rolled_back, kOrders / 100, 25);  // 1 % ± 3.5 standard deviations
  EXPECT_NEAR(100.0 * remote / lines, 1.0, 0.3);
  EXPECT_GT(not_all_local, 0);
}

// Clause 2.5: 60 % by last name (the middle of the matching customers), 15 % of customers from
// another warehouse, a bad-credit customer's C_DATA prefixed with the payment.
TEST(TpccWorkloadTest, PaymentFollowsClause2_5) {
  std::unique_ptr<Scenario> scenario = StandardMix(3);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 3, .index = 2, .count = 3});  // warehouse 3
  constexpr int kPayments = 4'000;
  int by_name = 0, remote = 0;
  for (int n = 0; n < kPayments; ++n) {
    TpccSession session(scenario->Statements(db::Dialect::kPostgreSql));
    ASSERT_TRUE(worker->Run(kPayment, session).ok());
    EXPECT_EQ(session.calls.back().sql, "COMMIT");
    const std::vector<const Call*> warehouse = session.Starting("UPDATE warehouse");
    ASSERT_EQ(warehouse.size(), 1u);
    EXPECT_EQ(warehouse[0]->Int(1), 3);
    const std::string amount = warehouse[0]->texts.at(0);
    const std::vector<const Call*> names = session.Starting("SELECT c_id");
    if (!names.empty()) {
      ++by_name;
      EXPECT_EQ(names[0]->Int(3), 1) << "offset of the middle of 3: position 2";
    }
    const std::vector<const Call*> update = session.Starting("UPDATE customer");
    ASSERT_EQ(update.size(), 1u);
    const int64_t customer_warehouse = update[0]->Int(3);
    if (customer_warehouse != 3) ++remote;
    const int64_t customer = update[0]->Int(5);
    if (!names.empty()) {
      EXPECT_EQ(customer, 77);
    }
    // C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT
    EXPECT_EQ(update[0]->texts.at(2),
              absl::StrCat(customer, " ", update[0]->Int(4), " ", customer_warehouse, " ",
                           session.Starting("UPDATE district")[0]->Int(2), " 3 ", amount, " "));
    ASSERT_EQ(session.Starting("INSERT INTO history").size(), 1u);
  }
  EXPECT_NEAR(100.0 * by_name / kPayments, 60, 2.5);
  EXPECT_NEAR(100.0 * remote / kPayments, 15, 2);
}

// Clause 2.7: one transaction over the ten districts; a district whose oldest new order another
// Delivery took (DELETE of no row) is skipped.
TEST(TpccWorkloadTest, DeliveryCoversTheTenDistrictsAndSkipsATakenOrder) {
  std::unique_ptr<Scenario> scenario = StandardMix(1);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 1});
  TpccSession session(scenario->Statements(db::Dialect::kMySql));
  ASSERT_TRUE(worker->Run(kDelivery, session).ok());
  EXPECT_EQ(session.Starting("BEGIN").size(), 1u);
  EXPECT_EQ(session.Starting("DELETE FROM new_order").size(), 10u);
  const std::vector<const Call*> credited = session.Starting("UPDATE customer");
  ASSERT_EQ(credited.size(), 10u);
  EXPECT_EQ(credited[9]->Int(1), 10) << "district 10's lines";
  EXPECT_EQ(credited[9]->Int(5), 42) << "the order's customer";

  TpccSession taken(scenario->Statements(db::Dialect::kMySql));
  taken.delete_rows = 0;
  ASSERT_TRUE(worker->Run(kDelivery, taken).ok());
  EXPECT_EQ(taken.Starting("DELETE FROM new_order").size(), 10u);
  EXPECT_TRUE(taken.Starting("UPDATE").empty());
  EXPECT_EQ(taken.calls.back().sql, "COMMIT");
}

// A retry is the same business transaction: the same input, sent again.
TEST(TpccWorkloadTest, ARetryResendsTheSameInput) {
  std::unique_ptr<Scenario> scenario = StandardMix(2);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 4});
  TpccSession first(scenario->Statements(db::Dialect::kPostgreSql));
  ASSERT_TRUE(worker->Run(kNewOrder, first).ok());
  TpccSession failed(scenario->Statements(db::Dialect::kPostgreSql));
  failed.fail_next = true;
  const db::ExecOutcome deadlocked = worker->Run(kNewOrder, failed);
  ASSERT_FALSE(deadlocked.ok());
  EXPECT_EQ(failed.calls.back().sql, "ROLLBACK");
  TpccSession again(scenario->Statements(db::Dialect::kPostgreSql));
  ASSERT_TRUE(worker->Retry(kNewOrder, again).ok());
  TpccSession next(scenario->Statements(db::Dialect::kPostgreSql));
  ASSERT_TRUE(worker->Run(kNewOrder, next).ok());
  const auto lines = [](const TpccSession& session) {
    std::vector<std::pair<int64_t, int64_t>> items;
    for (const Call* call : session.Starting("SELECT CAST(i_price")) {
      items.emplace_back(call->Int(0), 0);
    }
    for (const Call* call : session.Starting("INSERT INTO orders")) {
      items.emplace_back(call->Int(1), call->Int(3));  // district, customer
    }
    return items;
  };
  // The retry's statements are the failed try's would-be ones: compare with a fresh worker of
  // the same seed, whose second transaction drew the same input.
  std::unique_ptr<ScenarioWorker> twin = scenario->NewWorker({.run_seed = 4});
  TpccSession twin_first(scenario->Statements(db::Dialect::kPostgreSql));
  ASSERT_TRUE(twin->Run(kNewOrder, twin_first).ok());
  TpccSession twin_second(scenario->Statements(db::Dialect::kPostgreSql));
  ASSERT_TRUE(twin->Run(kNewOrder, twin_second).ok());
  EXPECT_EQ(lines(again), lines(twin_second));
  EXPECT_NE(lines(next), lines(again)) << "the next transaction draws anew";
}

// Stock-Level reads the terminal's own district's last 20 orders, below a threshold of 10–20.
TEST(TpccWorkloadTest, StockLevelUsesTheTerminalsDistrict) {
  std::unique_ptr<Scenario> scenario = StandardMix(1);
  ASSERT_NE(scenario, nullptr);
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 2, .index = 6, .count = 10});
  TpccSession session(scenario->Statements(db::Dialect::kMySql));
  ASSERT_TRUE(worker->Run(kStockLevel, session).ok());
  const std::vector<const Call*> low = session.Starting("SELECT COUNT(DISTINCT s_i_id)");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0]->Int(1), 7) << "district of terminal 7 of 10";
  EXPECT_EQ(low[0]->Int(2), 3001);
  EXPECT_EQ(low[0]->Int(3), 2981);
  EXPECT_THAT(low[0]->Int(5), AllOf(::testing::Ge(10), ::testing::Le(20)));
}

}  // namespace
}  // namespace dbload::tpcc
