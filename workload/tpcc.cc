#include "workload/tpcc.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/code_workloads.h"
#include "base/field_error.h"
#include "base/random.h"
#include "workload/sql_text.h"
#include "workload/tpcc_data.h"
#include "workload/tpcc_random.h"

namespace dbload::tpcc {

namespace {

using db::Dialect;
using db::ExecOutcome;
using db::Session;
using db::Value;

enum class Transaction { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel };
constexpr int kTransactions = 5;

// The statements of the five transactions, in clause 2's order; the ids of the last two kinds
// run on per district (S_DIST_01 … S_DIST_10 are columns, not values).
enum StatementId : int {
  // New-Order (clause 2.4.2.2)
  kWarehouseTax,
  kDistrictForUpdate,
  kDistrictNextOrder,
  kCustomerDiscount,
  kInsertOrder,
  kInsertNewOrder,
  kItemPrice,
  kUpdateStock,
  // Payment (clause 2.5.2.2)
  kPayWarehouse,
  kWarehouseAddress,
  kPayDistrict,
  kDistrictAddress,
  kCountCustomersByName,
  kCustomerByName,
  kPayCustomerRead,
  kPayCustomerUpdate,
  kInsertHistory,
  // Order-Status (clause 2.6.2.2)
  kCustomerBalance,
  kLastOrder,
  kOrderLines,
  // Delivery (clause 2.7.4.2)
  kOldestNewOrder,
  kDeleteNewOrder,
  kOrderCustomer,
  kSetCarrier,
  kDeliverLines,
  kCreditCustomer,
  // Stock-Level (clause 2.8.2.2)
  kDistrictNextOrderId,
  kLowStock,
  // New-Order, per district: + district - 1
  kStockForUpdate,
  kInsertOrderLine = kStockForUpdate + kDistrictsPerWarehouse,
  kStatementCount = kInsertOrderLine + kDistrictsPerWarehouse,
};

std::string DistrictColumn(int64_t district) { return absl::StrFormat("s_dist_%02d", district); }

// Each statement with `?` placeholders, in `dialect` where the two differ.
std::string StatementSql(int id, Dialect dialect) {
  const bool postgresql = dialect == Dialect::kPostgreSql;
  if (id >= kInsertOrderLine) {
    return absl::StrCat(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
        "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, "
        "?, (SELECT ",
        DistrictColumn(id - kInsertOrderLine + 1), " FROM stock WHERE s_i_id = ? AND s_w_id = ?))");
  }
  if (id >= kStockForUpdate) {
    return absl::StrCat("SELECT s_quantity, s_data, ", DistrictColumn(id - kStockForUpdate + 1),
                        " FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE");
  }
  switch (static_cast<StatementId>(id)) {
    case kWarehouseTax:
      return "SELECT w_tax FROM warehouse WHERE w_id = ?";
    case kDistrictForUpdate:
      return "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE";
    case kDistrictNextOrder:
      return "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?";
    case kCustomerDiscount:
      return "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? "
             "AND c_id = ?";
    case kInsertOrder:
      return "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, "
             "o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)";
    case kInsertNewOrder:
      return "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
    case kItemPrice:
      // In cents: the first column is what the driver returns, as an integer.
      return absl::StrCat("SELECT CAST(i_price * 100 AS ", postgresql ? "integer" : "signed",
                          "), i_name, i_data FROM item WHERE i_id = ?");
    case kUpdateStock:
      return "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, "
             "s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";
    case kPayWarehouse:
      return "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
    case kWarehouseAddress:
      return "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse "
             "WHERE w_id = ?";
    case kPayDistrict:
      return "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
    case kDistrictAddress:
      return "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district "
             "WHERE d_w_id = ? AND d_id = ?";
    case kCountCustomersByName:
      return "SELECT COUNT(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?";
    case kCustomerByName:
      return "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY "
             "c_first LIMIT 1 OFFSET ?";
    case kPayCustomerRead:
      return "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "
             "c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer "
             "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";
    case kPayCustomerUpdate:
      // A bad-credit customer's C_DATA takes the payment's keys and amount at its left, the
      // rest shifted right and cut at 500 characters (clause 2.5.2.2).
      return absl::StrCat(
          "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, "
          "c_payment_cnt = c_payment_cnt + 1, c_data = CASE WHEN c_credit = 'BC' THEN ",
          postgresql ? "SUBSTR(CAST(? AS varchar(500)) || c_data, 1, 500)"
                     : "SUBSTRING(CONCAT(?, c_data), 1, 500)",
          " ELSE c_data END WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
    case kInsertHistory:
      return "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, "
             "h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, (SELECT CONCAT(w_name, '    ', "
             "d_name) FROM warehouse, district WHERE w_id = ? AND d_w_id = ? AND d_id = ?))";
    case kCustomerBalance:
      return "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND "
             "c_d_id = ? AND c_id = ?";
    case kLastOrder:
      return "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? "
             "AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
    case kOrderLines:
      return "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM "
             "order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
    case kOldestNewOrder:
      return "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id "
             "LIMIT 1 FOR UPDATE";
    case kDeleteNewOrder:
      return "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?";
    case kOrderCustomer:
      return "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
    case kSetCarrier:
      return "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
    case kDeliverLines:
      return "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND "
             "ol_d_id = ? AND ol_o_id = ?";
    case kCreditCustomer:
      return "UPDATE customer SET c_balance = c_balance + (SELECT SUM(ol_amount) FROM order_line "
             "WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?), c_delivery_cnt = "
             "c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
    case kDistrictNextOrderId:
      return "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?";
    case kLowStock:
      return "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND "
             "ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id "
             "AND s_quantity < ?";
    default:
      return "";
  }
}

std::string StatementName(int id) {
  static constexpr const char* kNames[] = {
      "warehouse_tax",    "district_for_update", "district_next_order", "customer_discount",
      "insert_order",     "insert_new_order",    "item_price",          "update_stock",
      "pay_warehouse",    "warehouse_address",   "pay_district",        "district_address",
      "count_by_name",    "customer_by_name",    "pay_customer_read",   "pay_customer_update",
      "insert_history",   "customer_balance",    "last_order",          "order_lines",
      "oldest_new_order", "delete_new_order",    "order_customer",      "set_carrier",
      "deliver_lines",    "credit_customer",     "district_next_o_id",  "low_stock"};
  static_assert(std::size(kNames) == kStockForUpdate);
  if (id >= kInsertOrderLine) return absl::StrCat("insert_order_line_", id - kInsertOrderLine + 1);
  if (id >= kStockForUpdate) return absl::StrCat("stock_for_update_", id - kStockForUpdate + 1);
  return kNames[id];
}

// SQLSTATE 02000 (no_data): the row the transaction needs is not there, the data is not TPC-C's
// as loaded (a prepare with other options, rows deleted by hand).
ExecOutcome Failure(std::string message) { return WorkloadFailure("02000", std::move(message)); }

// One order line's input (clause 2.4.1.5).
struct Line {
  int64_t item = 0;
  int64_t supply_warehouse = 0;
  int64_t quantity = 0;
};

// A transaction's input, drawn by Run and kept for Retry (a retried transaction is the same
// business transaction: the specification's terminal would submit the same screen again).
struct Input {
  int64_t district = 0;
  int64_t customer = 0;  // by id, when by_name is false
  bool by_name = false;
  std::string last_name;  // by name
  int64_t customer_warehouse = 0, customer_district = 0;
  int64_t amount_cents = 0;  // Payment's H_AMOUNT
  std::vector<Line> lines;   // New-Order's
  bool rollback = false;     // New-Order's last item is unused (clause 2.4.1.4)
  int64_t carrier = 0;       // Delivery's
  int64_t threshold = 0;     // Stock-Level's
};

class TpccWorker final : public ScenarioWorker {
 public:
  // `only`: the one transaction of a single-transaction scenario (its query type 0); none: the
  // standard mix, query type i being Transaction i.
  TpccWorker(const TpccOptions& options, std::optional<Transaction> only, const WorkerSlot& slot)
      : only_(only),
        warehouses_(options.warehouses),
        terminal_waits_(options.terminal_waits),
        terminal_(TerminalOf(slot.index, slot.count, options.warehouses)),
        random_(MixSeed(slot.run_seed, slot.index)) {
    // One set of C constants for the whole run (every terminal draws the same): from the run's
    // seed and a stream no worker's index reaches.
    Random run_random(MixSeed(slot.run_seed, uint64_t{1} << 40));
    constants_ = RunConstants(kLoadConstants, run_random);
    input_.lines.reserve(15);
  }

  int NextQueryType() override {
    if (const std::optional<Transaction> keyed = std::exchange(keyed_, std::nullopt)) {
      return QueryTypeOf(*keyed);
    }
    return QueryTypeOf(Deal());
  }

  // The think time after the last transaction and the keying time of the next, which is dealt
  // now for it (clause 5.2.5: r uniform in (0, 1], think time −ln(r) × mean, at most 10 × mean).
  int64_t PauseNs() override {
    if (!terminal_waits_) return 0;
    double seconds = 0;
    if (last_ran_.has_value()) {
      const double mean = kMeanThinkS[static_cast<size_t>(*last_ran_)];
      seconds += std::min(-std::log(1.0 - random_.NextDouble()) * mean, 10 * mean);
    }
    keyed_ = Deal();
    seconds += kKeyingS[static_cast<size_t>(*keyed_)];
    return static_cast<int64_t>(seconds * 1e9);
  }

  ExecOutcome Run(int query_type, Session& session) override {
    last_ran_ = TransactionOf(query_type);
    Draw(*last_ran_);
    return Retry(query_type, session);
  }

  ExecOutcome Retry(int query_type, Session& session) override {
    rows_ = 0;
    if (ExecOutcome begun = session.Begin(); !begun.ok()) return begun;
    ExecOutcome outcome = Execute(TransactionOf(query_type), session);
    if (outcome.ok() && !rolled_back_) {
      if (ExecOutcome committed = session.Commit(); !committed.ok()) return committed;
      return ExecOutcome{.rows = rows_};
    }
    ExecOutcome rolled = session.Rollback();
    rolled_back_ = false;
    // A statement's error is what the caller classifies, not ROLLBACK's answer.
    if (!outcome.ok()) return outcome;
    if (!rolled.ok()) return rolled;
    return ExecOutcome{.rows = rows_, .rolled_back = true};
  }

 private:
  Transaction TransactionOf(int query_type) const {
    return only_.value_or(static_cast<Transaction>(query_type));
  }
  int QueryTypeOf(Transaction transaction) const {
    return only_.has_value() ? 0 : static_cast<int>(transaction);
  }

  // Dealt from a shuffled deck of 100: the standard mix over every 100 transactions.
  Transaction Deal() {
    if (only_.has_value()) return *only_;
    if (next_card_ == deck_.size()) {
      static constexpr std::pair<Transaction, int> kMix[] = {{Transaction::kNewOrder, 45},
                                                             {Transaction::kPayment, 43},
                                                             {Transaction::kOrderStatus, 4},
                                                             {Transaction::kDelivery, 4},
                                                             {Transaction::kStockLevel, 4}};
      size_t card = 0;
      for (const auto& [transaction, count] : kMix) {
        for (int i = 0; i < count; ++i) deck_[card++] = transaction;
      }
      for (size_t i = deck_.size() - 1; i > 0; --i) {
        std::swap(deck_[i], deck_[static_cast<size_t>(random_.Uniform(0, int64_t(i)))]);
      }
      next_card_ = 0;
    }
    return deck_[next_card_++];
  }

  int64_t OtherWarehouse() {
    const int64_t other = random_.Uniform(1, warehouses_ - 1);
    return other >= terminal_.warehouse ? other + 1 : other;
  }

  void DrawCustomer(int percent_by_name) {
    input_.by_name = random_.Uniform(1, 100) <= percent_by_name;
    if (input_.by_name) {
      input_.last_name = LastName(NURand(random_, kLastNameA, 0, 999, constants_.last_name));
    } else {
      input_.customer =
          NURand(random_, kCustomerIdA, 1, kCustomersPerDistrict, constants_.customer_id);
    }
  }

  // Clause 2.x.1's input of each transaction.
  void Draw(Transaction transaction) {
    input_.district = random_.Uniform(1, kDistrictsPerWarehouse);
    switch (transaction) {
      case Transaction::kNewOrder: {
        input_.customer =
            NURand(random_, kCustomerIdA, 1, kCustomersPerDistrict, constants_.customer_id);
        input_.lines.resize(static_cast<size_t>(random_.Uniform(5, 15)));
        input_.rollback = random_.Uniform(1, 100) == 1;
        for (Line& line : input_.lines) {
          line.item = NURand(random_, kItemIdA, 1, kItems, constants_.item_id);
          line.supply_warehouse = warehouses_ > 1 && random_.Uniform(1, 100) == 1
                                      ? OtherWarehouse()
                                      : terminal_.warehouse;
          line.quantity = random_.Uniform(1, 10);
        }
        // The unused item stays last, so that the rollback comes after all the other lines'
        // work; the others go in key order (see tpcc.h).
        const auto sorted_end = input_.rollback ? input_.lines.end() - 1 : input_.lines.end();
        if (input_.rollback) input_.lines.back().item = kItems + 1;
        std::sort(input_.lines.begin(), sorted_end, [](const Line& a, const Line& b) {
          return std::pair(a.supply_warehouse, a.item) < std::pair(b.supply_warehouse, b.item);
        });
        break;
      }
      case Transaction::kPayment: {
        const bool home = warehouses_ == 1 || random_.Uniform(1, 100) <= 85;
        input_.customer_warehouse = home ? terminal_.warehouse : OtherWarehouse();
        input_.customer_district =
            home ? input_.district : random_.Uniform(1, kDistrictsPerWarehouse);
        DrawCustomer(60);
        input_.amount_cents = random_.Uniform(100, 500'000);
        break;
      }
      case Transaction::kOrderStatus:
        DrawCustomer(60);
        break;
      case Transaction::kDelivery:
        input_.carrier = random_.Uniform(1, 10);
        break;
      case Transaction::kStockLevel:
        input_.threshold = random_.Uniform(10, 20);
        break;
    }
  }

  ExecOutcome Exec(Session& session, int id, std::initializer_list<Value> params,
                   bool capture = false) {
    ExecOutcome outcome =
        session.Execute(id, std::span<const Value>(params.begin(), params.size()), capture);
    rows_ += outcome.rows;
    return outcome;
  }

  // A value the statement must return (a key, a count).
  ExecOutcome Read(Session& session, int id, std::initializer_list<Value> params,
                   std::string_view what, int64_t& value) {
    ExecOutcome outcome = Exec(session, id, params, /*capture=*/true);
    if (outcome.ok()) {
      if (!outcome.first_value.has_value()) return Failure(absl::StrCat("no ", std::string(what)));
      value = *outcome.first_value;
    }
    return outcome;
  }

  // The customer of Payment and Order-Status: by id, or the middle one (position ⌈n/2⌉) of the
  // n with the last name, sorted by C_FIRST (clause 2.5.2.2).
  ExecOutcome Customer(Session& session, int64_t warehouse, int64_t district, int64_t& customer) {
    if (!input_.by_name) {
      customer = input_.customer;
      return {};
    }
    const std::string_view name = input_.last_name;
    int64_t count = 0;
    ExecOutcome counted =
        Read(session, kCountCustomersByName, {warehouse, district, name}, "count", count);
    if (!counted.ok()) return counted;
    if (count == 0) {
      return Failure(absl::StrCat("no customer named ", input_.last_name, " in warehouse ",
                                  warehouse, ", district ", district));
    }
    return Read(session, kCustomerByName, {warehouse, district, name, (count - 1) / 2},
                "customer by name", customer);
  }

  ExecOutcome Execute(Transaction transaction, Session& session) {
    switch (transaction) {
      case Transaction::kNewOrder:
        return NewOrder(session);
      case Transaction::kPayment:
        return Payment(session);
      case Transaction::kOrderStatus:
        return OrderStatus(session);
      case Transaction::kDelivery:
        return Delivery(session);
      case Transaction::kStockLevel:
        return StockLevel(session);
    }
    return {};
  }

  ExecOutcome NewOrder(Session& session) {
    const int64_t w = terminal_.warehouse;
    const int64_t d = input_.district;
    const int64_t c = input_.customer;
    const bool all_local =
        std::all_of(input_.lines.begin(), input_.lines.end(),
                    [&](const Line& line) { return line.supply_warehouse == w; });
    int64_t order = 0;
    ExecOutcome outcome;
    if (!(outcome = Exec(session, kWarehouseTax, {w})).ok() ||
        !(outcome = Read(session, kDistrictForUpdate, {w, d}, "district", order)).ok() ||
        !(outcome = Exec(session, kDistrictNextOrder, {w, d})).ok() ||
        !(outcome = Exec(session, kCustomerDiscount, {w, d, c})).ok() ||
        !(outcome = Exec(session, kInsertOrder,
                         {order, d, w, c, int64_t(input_.lines.size()), int64_t{all_local}}))
             .ok() ||
        !(outcome = Exec(session, kInsertNewOrder, {order, d, w})).ok()) {
      return outcome;
    }
    for (size_t i = 0; i < input_.lines.size(); ++i) {
      const Line& line = input_.lines[i];
      ExecOutcome item = Exec(session, kItemPrice, {line.item}, /*capture=*/true);
      if (!item.ok()) return item;
      if (!item.first_value.has_value()) {
        if (input_.rollback && i + 1 == input_.lines.size()) {
          rolled_back_ = true;  // "Item number is not valid": the business rollback
          return {};
        }
        return Failure(absl::StrCat("no item ", line.item));
      }
      const int64_t price_cents = *item.first_value;
      int64_t quantity = 0;
      if (!(outcome = Read(session, kStockForUpdate + static_cast<int>(d) - 1,
                           {line.item, line.supply_warehouse}, "stock", quantity))
               .ok()) {
        return outcome;
      }
      quantity =
          quantity >= line.quantity + 10 ? quantity - line.quantity : quantity - line.quantity + 91;
      amount_ = DecimalText(line.quantity * price_cents, 2);
      if (!(outcome = Exec(session, kUpdateStock,
                           {quantity, line.quantity, int64_t{line.supply_warehouse != w}, line.item,
                            line.supply_warehouse}))
               .ok() ||
          !(outcome =
                Exec(session, kInsertOrderLine + static_cast<int>(d) - 1,
                     {order, d, w, int64_t(i + 1), line.item, line.supply_warehouse, line.quantity,
                      std::string_view(amount_), line.item, line.supply_warehouse}))
               .ok()) {
        return outcome;
      }
    }
    return {};
  }

  ExecOutcome Payment(Session& session) {
    const int64_t w = terminal_.warehouse;
    const int64_t d = input_.district;
    const int64_t cw = input_.customer_warehouse;
    const int64_t cd = input_.customer_district;
    amount_ = DecimalText(input_.amount_cents, 2);
    const Value amount = std::string_view(amount_);
    int64_t c = 0;
    ExecOutcome outcome;
    if (!(outcome = Exec(session, kPayWarehouse, {amount, w})).ok() ||
        !(outcome = Exec(session, kWarehouseAddress, {w})).ok() ||
        !(outcome = Exec(session, kPayDistrict, {amount, w, d})).ok() ||
        !(outcome = Exec(session, kDistrictAddress, {w, d})).ok() ||
        !(outcome = Customer(session, cw, cd, c)).ok() ||
        !(outcome = Exec(session, kPayCustomerRead, {cw, cd, c})).ok()) {
      return outcome;
    }
    data_ = absl::StrCat(c, " ", cd, " ", cw, " ", d, " ", w, " ", amount_, " ");
    if (!(outcome = Exec(session, kPayCustomerUpdate,
                         {amount, amount, std::string_view(data_), cw, cd, c}))
             .ok()) {
      return outcome;
    }
    return Exec(session, kInsertHistory, {c, cd, cw, d, w, amount, w, w, d});
  }

  ExecOutcome OrderStatus(Session& session) {
    const int64_t w = terminal_.warehouse;
    const int64_t d = input_.district;
    int64_t c = 0, order = 0;
    ExecOutcome outcome;
    if (!(outcome = Customer(session, w, d, c)).ok() ||
        !(outcome = Exec(session, kCustomerBalance, {w, d, c})).ok() ||
        !(outcome = Read(session, kLastOrder, {w, d, c}, "order of the customer", order)).ok()) {
      return outcome;
    }
    return Exec(session, kOrderLines, {w, d, order});
  }

  // The ten districts' oldest new orders, in one transaction; a district without one is
  // skipped (clause 2.7.4.2), and so is one whose oldest another Delivery took first.
  ExecOutcome Delivery(Session& session) {
    const int64_t w = terminal_.warehouse;
    for (int64_t d = 1; d <= kDistrictsPerWarehouse; ++d) {
      ExecOutcome oldest = Exec(session, kOldestNewOrder, {w, d}, /*capture=*/true);
      if (!oldest.ok()) return oldest;
      if (!oldest.first_value.has_value()) continue;
      const int64_t order = *oldest.first_value;
      ExecOutcome deleted = Exec(session, kDeleteNewOrder, {w, d, order});
      if (!deleted.ok()) return deleted;
      if (deleted.rows == 0) continue;
      int64_t c = 0;
      ExecOutcome outcome;
      if (!(outcome = Read(session, kOrderCustomer, {w, d, order}, "order", c)).ok() ||
          !(outcome = Exec(session, kSetCarrier, {input_.carrier, w, d, order})).ok() ||
          !(outcome = Exec(session, kDeliverLines, {w, d, order})).ok() ||
          !(outcome = Exec(session, kCreditCustomer, {w, d, order, w, d, c})).ok()) {
        return outcome;
      }
    }
    return {};
  }

  ExecOutcome StockLevel(Session& session) {
    const int64_t w = terminal_.warehouse;
    const int64_t d = terminal_.district;
    int64_t next = 0;
    ExecOutcome outcome = Read(session, kDistrictNextOrderId, {w, d}, "district", next);
    if (!outcome.ok()) return outcome;
    return Exec(session, kLowStock, {w, d, next, next - 20, w, input_.threshold});
  }

  const std::optional<Transaction> only_;
  const int64_t warehouses_;
  const bool terminal_waits_;
  const Terminal terminal_;
  Random random_;
  NURandConstants constants_;
  std::array<Transaction, 100> deck_{};
  size_t next_card_ = deck_.size();
  std::optional<Transaction> keyed_;     // dealt for PauseNs's keying time, run next
  std::optional<Transaction> last_ran_;  // for PauseNs's think time
  Input input_;
  int64_t rows_ = 0;
  bool rolled_back_ = false;
  // Text the statements bind (Values borrow them).
  std::string amount_;
  std::string data_;
};

class TpccScenario final : public Scenario {
 public:
  TpccScenario(TpccOptions options, std::optional<Transaction> only)
      : options_(options),
        only_(only),
        query_types_(only.has_value()
                         ? std::vector<std::string>{kTransactionNames[static_cast<int>(*only)]}
                         : std::vector<std::string>(std::begin(kTransactionNames),
                                                    std::end(kTransactionNames))) {}

  const std::vector<std::string>& query_types() const override { return query_types_; }

  std::vector<db::StatementSpec> Statements(Dialect dialect) const override {
    std::vector<db::StatementSpec> statements;
    for (int id = 0; id < kStatementCount; ++id) {
      const std::string sql = StatementSql(id, dialect);
      statements.push_back(
          {StatementName(id), dialect == Dialect::kPostgreSql ? NumberPlaceholders(sql) : sql});
    }
    return statements;
  }

  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const override {
    return std::make_unique<TpccWorker>(options_, only_, slot);
  }

  // Contention's errors are tried again with the same input, as a terminal would resubmit.
  std::vector<RetryPolicy> RetryPolicies() const override {
    return std::vector<RetryPolicy>(
        query_types_.size(),
        RetryPolicy{.max_tries = 10,
                    .on = {db::RetryCause::kSerialization, db::RetryCause::kDeadlock}});
  }

  // The terminals' warehouses must be the loaded ones: a run with more would fail on missing
  // rows, one with fewer would leave warehouses unvisited without saying so.
  absl::Status Setup(db::Driver& driver) override {
    if (driver.dialect() == Dialect::kNoop) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<Session>> session = driver.Connect();
    if (!session.ok()) return session.status();
    return db::ReadRolledBack(**session, "workload tpcc",
                              [&] { return CheckLoadedScale(**session, driver.dialect()); });
  }

 private:
  absl::Status CheckLoadedScale(Session& session, Dialect dialect) const {
    absl::StatusOr<std::vector<std::string>> count =
        session.FetchColumn("SELECT COUNT(*) FROM warehouse", 1);
    int64_t loaded = 0;
    if (!count.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("workload tpcc: counting the warehouses: ", count.status().message(),
                       " (load the data with `dbload prepare` first)"));
    }
    if (count->empty() || !absl::SimpleAtoi(count->front(), &loaded) ||
        loaded != options_.warehouses) {
      // The field in the words: this error comes from the agents, past the plan's checks.
      return absl::FailedPreconditionError(
          absl::StrCat("workload_options.warehouses: the run has ", options_.warehouses,
                       " warehouses but the target's warehouse table holds ",
                       count->empty() ? "nothing" : count->front(),
                       " (prepare and run with the same warehouses)"));
    }
    return CheckForeignKeys(session, dialect);
  }

  // The foreign keys must be the ones the options name: a run with them on tables without them
  // would measure another schema than its plan says (and the other way round).
  absl::Status CheckForeignKeys(Session& session, Dialect dialect) const {
    std::vector<std::string> names;
    for (const ForeignKey& fk : ForeignKeys()) names.push_back(absl::StrCat("'", fk.name, "'"));
    const std::string sql = absl::StrCat(
        "SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_type = "
        "'FOREIGN KEY' AND table_schema = ",
        dialect == Dialect::kPostgreSql ? "current_schema()" : "DATABASE()",
        " AND constraint_name IN (", absl::StrJoin(names, ", "), ")");
    absl::StatusOr<std::vector<std::string>> count = session.FetchColumn(sql, 1);
    if (!count.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("workload tpcc: counting the foreign keys: ", count.status().message()));
    }
    const size_t expected = options_.foreign_keys ? names.size() : 0;
    size_t found = 0;
    if (count->size() == 1 && absl::SimpleAtoi(count->front(), &found) && found == expected) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "workload_options.foreign_keys: the run has ", options_.foreign_keys ? "" : "no ",
        "foreign keys but the target's tables have ", count->empty() ? "?" : count->front(),
        " of tpcc's ", names.size(), " (prepare and run with the same foreign_keys)"));
  }

  const TpccOptions options_;
  const std::optional<Transaction> only_;
  const std::vector<std::string> query_types_;
};

class TpccWorkload final : public Workload {
 public:
  explicit TpccWorkload(TpccOptions options) : options_(options) {}

  std::vector<std::string> ScenarioNames() const override {
    std::vector<std::string> names = {kTpccStandardMix};
    names.insert(names.end(), std::begin(kTransactionNames), std::end(kTransactionNames));
    return names;
  }

  absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const override {
    if (name == kTpccStandardMix) return std::make_unique<TpccScenario>(options_, std::nullopt);
    for (int t = 0; t < kTransactions; ++t) {
      if (name == kTransactionNames[t]) {
        return std::make_unique<TpccScenario>(options_, static_cast<Transaction>(t));
      }
    }
    return FieldError("scenario",
                      absl::StrCat("workload tpcc has no scenario '", name,
                                   "' (it has: ", absl::StrJoin(ScenarioNames(), ", "), ")"));
  }

  v1::WorkloadSpec DataSpec() const override {
    return tpcc::DataSpec(options_.warehouses, options_.foreign_keys);
  }

  // Consistency conditions 1–4 after every run: each counts the warehouses or districts that
  // break it.
  std::vector<v1::Invariant> Invariants() const override {
    std::vector<v1::Invariant> invariants;
    for (const v1::Check& check : ConsistencyChecks()) {
      v1::Invariant& invariant = invariants.emplace_back();
      invariant.set_name(check.name());
      *invariant.mutable_sql() = check.sql();
      invariant.set_expect("0");
    }
    return invariants;
  }

 private:
  const TpccOptions options_;
};

}  // namespace

Terminal TerminalOf(uint32_t index, uint32_t count, int64_t warehouses) {
  count = std::max<uint32_t>(count, index + 1);
  const int64_t warehouse_index = int64_t{index} * warehouses / count;
  // The first slot of that warehouse: the least i with i·W/count ≥ warehouse_index.
  const int64_t first = (warehouse_index * count + warehouses - 1) / warehouses;
  return {.warehouse = warehouse_index + 1,
          .district = (int64_t{index} - first) % kDistrictsPerWarehouse + 1};
}

std::unique_ptr<Workload> MakeTpccWorkload(TpccOptions options) {
  return std::make_unique<TpccWorkload>(options);
}

}  // namespace dbload::tpcc
