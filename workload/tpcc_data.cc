#include "workload/tpcc_data.h"

#include <algorithm>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/random.h"

namespace dbload::tpcc {

namespace {

// One row's cells, written in column order.
class Cells {
 public:
  Cells(std::span<db::Value> values, std::span<std::string> texts)
      : values_(values), texts_(texts) {}
  void Int(int64_t value) { values_[next_++] = value; }
  void Null() { values_[next_++] = std::monostate(); }
  void Text(std::string text) {
    texts_[next_] = std::move(text);
    values_[next_] = std::string_view(texts_[next_]);
    ++next_;
  }
  // An exact decimal, written as text so that no binary fraction reaches the NUMERIC column.
  void Decimal(int64_t units, int scale) { Text(DecimalText(units, scale)); }

 private:
  std::span<db::Value> values_;
  std::span<std::string> texts_;
  size_t next_ = 0;
};

// The moment the load ran, as both servers read a timestamp: C_SINCE, H_DATE, O_ENTRY_D.
std::string LoadTime() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

// Street 1 and 2, city, state and zip (clause 4.3.3.1's addresses).
void Address(Random& random, Cells& cells) {
  cells.Text(AlphanumericString(random, 10, 20));
  cells.Text(AlphanumericString(random, 10, 20));
  cells.Text(AlphanumericString(random, 10, 20));
  cells.Text(AlphanumericString(random, 2, 2));
  cells.Text(ZipCode(random));
}

// A row number (1 …) as the keys of a table whose rows go `per` to each key above: row 30,001
// of customer is warehouse 2, district 1, customer 1.
struct Keys {
  int64_t warehouse, district, id;
};
Keys KeysOf(int64_t row, int64_t per_district) {
  const int64_t index = row - 1;
  return {.warehouse = index / (per_district * kDistrictsPerWarehouse) + 1,
          .district = index / per_district % kDistrictsPerWarehouse + 1,
          .id = index % per_district + 1};
}

// Sources whose rows are independent of each other: a function of (row, random, cells).
class SimpleSource final : public RowSource {
 public:
  using Make = std::function<void(int64_t row, Random& random, Cells& cells)>;
  SimpleSource(std::vector<std::string> columns, uint64_t seed, Make make)
      : columns_(std::move(columns)), random_(seed), make_(std::move(make)) {}
  const std::vector<std::string>& columns() const override { return columns_; }
  void Row(int64_t row, std::span<db::Value> values, std::span<std::string> texts) override {
    Cells cells(values, texts);
    make_(row, random_, cells);
  }

 private:
  const std::vector<std::string> columns_;
  Random random_;
  const Make make_;
};

// ORDERS: O_C_ID runs through a random permutation of the district's customers, the same one
// whichever part makes the district's rows (seeded by the district, not the part).
class OrderSource final : public RowSource {
 public:
  explicit OrderSource(uint64_t seed) : random_(seed), now_(LoadTime()) {}
  const std::vector<std::string>& columns() const override { return columns_; }
  void Row(int64_t row, std::span<db::Value> values, std::span<std::string> texts) override {
    const Keys keys = KeysOf(row, kOrdersPerDistrict);
    if (keys.warehouse != warehouse_ || keys.district != district_) {
      warehouse_ = keys.warehouse;
      district_ = keys.district;
      Random district_random(
          MixSeed(0x7c0c, static_cast<uint64_t>(warehouse_ * kDistrictsPerWarehouse + district_)));
      customers_ = Permutation(district_random, kCustomersPerDistrict);
    }
    Cells cells(values, texts);
    cells.Int(keys.id);
    cells.Int(keys.district);
    cells.Int(keys.warehouse);
    cells.Int(customers_[static_cast<size_t>(keys.id - 1)]);
    cells.Text(now_);
    if (keys.id < kFirstNewOrder) {
      cells.Int(random_.Uniform(1, 10));
    } else {
      cells.Null();
    }
    cells.Int(OrderLineCount(keys.warehouse, keys.district, keys.id));
    cells.Int(1);
  }

 private:
  const std::vector<std::string> columns_ = {
      "o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"};
  Random random_;
  const std::string now_;
  int64_t warehouse_ = 0, district_ = 0;
  std::vector<int32_t> customers_;
};

// ORDER_LINE: O_OL_CNT lines for each order, in key order. A row number is found by counting
// lines district by district, then order by order; rows are then asked for in order.
class OrderLineSource final : public RowSource {
 public:
  explicit OrderLineSource(uint64_t seed) : random_(seed), now_(LoadTime()) {}
  const std::vector<std::string>& columns() const override { return columns_; }
  void Row(int64_t row, std::span<db::Value> values, std::span<std::string> texts) override {
    if (row != next_row_) Seek(row);
    Cells cells(values, texts);
    cells.Int(order_);
    cells.Int(district_);
    cells.Int(warehouse_);
    cells.Int(line_);
    cells.Int(random_.Uniform(1, kItems));
    cells.Int(warehouse_);
    const bool delivered = order_ < kFirstNewOrder;
    if (delivered) {
      cells.Text(now_);
    } else {
      cells.Null();
    }
    cells.Int(5);
    cells.Decimal(delivered ? 0 : random_.Uniform(1, 999'999), 2);
    cells.Text(AlphanumericString(random_, 24, 24));
    // The next row: the next line, order, district.
    ++next_row_;
    if (++line_ <= lines_) return;
    line_ = 1;
    if (++order_ > kOrdersPerDistrict) {
      order_ = 1;
      if (++district_ > kDistrictsPerWarehouse) {
        district_ = 1;
        ++warehouse_;
      }
    }
    lines_ = OrderLineCount(warehouse_, district_, order_);
  }

 private:
  void Seek(int64_t row) {
    int64_t before = 0;  // lines of the districts passed
    warehouse_ = 1;
    district_ = 1;
    for (;;) {
      int64_t in_district = 0;
      for (int64_t o = 1; o <= kOrdersPerDistrict; ++o) {
        in_district += OrderLineCount(warehouse_, district_, o);
      }
      if (before + in_district >= row) break;
      before += in_district;
      if (++district_ > kDistrictsPerWarehouse) {
        district_ = 1;
        ++warehouse_;
      }
    }
    for (order_ = 1;; ++order_) {
      lines_ = OrderLineCount(warehouse_, district_, order_);
      if (before + lines_ >= row) break;
      before += lines_;
    }
    line_ = row - before;
    next_row_ = row;
  }

  const std::vector<std::string> columns_ = {
      "ol_o_id",        "ol_d_id",       "ol_w_id",     "ol_number", "ol_i_id",
      "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"};
  Random random_;
  const std::string now_;
  int64_t next_row_ = 0;  // the row the position below is at; 0: none yet
  int64_t warehouse_ = 0, district_ = 0, order_ = 0, line_ = 0, lines_ = 0;
};

// The column lists of the tables whose sources are simple.
std::unique_ptr<RowSource> Simple(std::string_view table, uint64_t seed) {
  if (table == "item") {
    return std::make_unique<SimpleSource>(
        std::vector<std::string>{"i_id", "i_im_id", "i_name", "i_price", "i_data"}, seed,
        [](int64_t row, Random& random, Cells& cells) {
          cells.Int(row);
          cells.Int(random.Uniform(1, 10'000));
          cells.Text(AlphanumericString(random, 14, 24));
          cells.Decimal(random.Uniform(100, 10'000), 2);
          cells.Text(ItemData(random, IsOriginal(random)));
        });
  }
  if (table == "warehouse") {
    return std::make_unique<SimpleSource>(
        std::vector<std::string>{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state",
                                 "w_zip", "w_tax", "w_ytd"},
        seed, [](int64_t row, Random& random, Cells& cells) {
          cells.Int(row);
          cells.Text(AlphanumericString(random, 6, 10));
          Address(random, cells);
          cells.Decimal(random.Uniform(0, 2'000), 4);
          cells.Decimal(30'000'000, 2);
        });
  }
  if (table == "stock") {
    std::vector<std::string> columns = {"s_i_id", "s_w_id", "s_quantity"};
    for (int d = 1; d <= 10; ++d) columns.push_back(absl::StrFormat("s_dist_%02d", d));
    columns.insert(columns.end(), {"s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"});
    return std::make_unique<SimpleSource>(std::move(columns), seed,
                                          [](int64_t row, Random& random, Cells& cells) {
                                            cells.Int((row - 1) % kItems + 1);
                                            cells.Int((row - 1) / kItems + 1);
                                            cells.Int(random.Uniform(10, 100));
                                            for (int d = 1; d <= 10; ++d)
                                              cells.Text(AlphanumericString(random, 24, 24));
                                            cells.Int(0);
                                            cells.Int(0);
                                            cells.Int(0);
                                            cells.Text(ItemData(random, IsOriginal(random)));
                                          });
  }
  if (table == "district") {
    return std::make_unique<SimpleSource>(
        std::vector<std::string>{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city",
                                 "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"},
        seed, [](int64_t row, Random& random, Cells& cells) {
          cells.Int((row - 1) % kDistrictsPerWarehouse + 1);
          cells.Int((row - 1) / kDistrictsPerWarehouse + 1);
          cells.Text(AlphanumericString(random, 6, 10));
          Address(random, cells);
          cells.Decimal(random.Uniform(0, 2'000), 4);
          cells.Decimal(3'000'000, 2);
          cells.Int(kOrdersPerDistrict + 1);
        });
  }
  if (table == "customer") {
    return std::make_unique<SimpleSource>(
        std::vector<std::string>{"c_id",      "c_d_id",        "c_w_id",        "c_first",
                                 "c_middle",  "c_last",        "c_street_1",    "c_street_2",
                                 "c_city",    "c_state",       "c_zip",         "c_phone",
                                 "c_since",   "c_credit",      "c_credit_lim",  "c_discount",
                                 "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt",
                                 "c_data"},
        seed, [now = LoadTime()](int64_t row, Random& random, Cells& cells) {
          const Keys keys = KeysOf(row, kCustomersPerDistrict);
          cells.Int(keys.id);
          cells.Int(keys.district);
          cells.Int(keys.warehouse);
          cells.Text(AlphanumericString(random, 8, 16));
          cells.Text("OE");
          // The first 1,000 customers of a district take every name once; the others NURand's.
          cells.Text(LastName(keys.id <= 1000
                                  ? keys.id - 1
                                  : NURand(random, kLastNameA, 0, 999, kLoadConstants.last_name)));
          Address(random, cells);
          cells.Text(NumericString(random, 16, 16));
          cells.Text(now);
          cells.Text(random.Uniform(1, 100) <= 10 ? "BC" : "GC");
          cells.Decimal(5'000'000, 2);
          cells.Decimal(random.Uniform(0, 5'000), 4);
          cells.Decimal(-1'000, 2);
          cells.Decimal(1'000, 2);
          cells.Int(1);
          cells.Int(0);
          cells.Text(AlphanumericString(random, 300, 500));
        });
  }
  if (table == "history") {
    return std::make_unique<SimpleSource>(
        std::vector<std::string>{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date",
                                 "h_amount", "h_data"},
        seed, [now = LoadTime()](int64_t row, Random& random, Cells& cells) {
          const Keys keys = KeysOf(row, kCustomersPerDistrict);
          cells.Int(keys.id);
          cells.Int(keys.district);
          cells.Int(keys.warehouse);
          cells.Int(keys.district);
          cells.Int(keys.warehouse);
          cells.Text(now);
          cells.Decimal(1'000, 2);
          cells.Text(AlphanumericString(random, 12, 24));
        });
  }
  if (table == "new_order") {
    return std::make_unique<SimpleSource>(std::vector<std::string>{"no_o_id", "no_d_id", "no_w_id"},
                                          seed, [](int64_t row, Random&, Cells& cells) {
                                            const Keys keys = KeysOf(
                                                row, kOrdersPerDistrict - kFirstNewOrder + 1);
                                            cells.Int(kFirstNewOrder - 1 + keys.id);
                                            cells.Int(keys.district);
                                            cells.Int(keys.warehouse);
                                          });
  }
  return nullptr;
}

// One table: its two CREATE TABLEs (the columns, then the dialects' differences), its rows and
// its primary key (built after loading on PostgreSQL; InnoDB keeps rows in key order, so there
// it is declared up front and the rows come in that order).
void AddTable(v1::WorkloadSpec& spec, const std::string& name, const std::string& columns,
              const std::string& key, int64_t rows) {
  v1::Table& table = *spec.add_tables();
  table.set_name(name);
  table.mutable_create()->set_postgresql(absl::StrCat("CREATE TABLE ", name, " (", columns, ")"));
  std::string mysql_columns = columns;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"timestamp", "datetime"}, {"numeric", "decimal"}}) {
    for (size_t at = mysql_columns.find(from); at != std::string::npos;
         at = mysql_columns.find(from, at + to.size())) {
      mysql_columns.replace(at, from.size(), to);
    }
  }
  table.mutable_create()->set_mysql(absl::StrCat(
      "CREATE TABLE ", name, " (", mysql_columns,
      key.empty() ? "" : absl::StrCat(", PRIMARY KEY (", key, ")"), ") ENGINE = InnoDB"));
  if (!key.empty()) {
    table.add_indexes()->set_postgresql(
        absl::StrCat("ALTER TABLE ", name, " ADD PRIMARY KEY (", key, ")"));
  }
  table.mutable_data()->set_rows(rows);
  table.mutable_data()->set_builtin_rows(absl::StrCat(kTpccWorkloadName, ".", name));
}

void AddCheck(v1::WorkloadSpec& spec, const std::string& name, const std::string& sql,
              int64_t expect) {
  v1::Check& check = *spec.add_checks();
  check.set_name(name);
  check.mutable_sql()->set_any(sql);
  check.set_expect(expect);
}

}  // namespace

int OrderLineCount(int64_t warehouse, int64_t district, int64_t order) {
  const uint64_t mixed = MixSeed(
      0x0c17, static_cast<uint64_t>(
                  (warehouse * kDistrictsPerWarehouse + district) * kOrdersPerDistrict + order));
  return 5 + static_cast<int>(mixed % 11);
}

std::vector<ForeignKey> ForeignKeys() {
  const auto key = [](std::string table, std::string columns, std::string parent,
                      std::string parent_columns) {
    return ForeignKey{.table = table,
                      .name = absl::StrCat("tpcc_", table, "_", parent),
                      .columns = std::move(columns),
                      .parent = parent,
                      .parent_columns = std::move(parent_columns)};
  };
  return {key("stock", "s_i_id", "item", "i_id"),
          key("stock", "s_w_id", "warehouse", "w_id"),
          key("district", "d_w_id", "warehouse", "w_id"),
          key("customer", "c_w_id, c_d_id", "district", "d_w_id, d_id"),
          key("history", "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id"),
          key("history", "h_w_id, h_d_id", "district", "d_w_id, d_id"),
          key("orders", "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id"),
          key("new_order", "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id"),
          key("order_line", "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id"),
          key("order_line", "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id")};
}

v1::WorkloadSpec DataSpec(int64_t warehouses, bool foreign_keys) {
  v1::WorkloadSpec spec;
  spec.set_name(kTpccWorkloadName);
  const int64_t districts = warehouses * kDistrictsPerWarehouse;
  const auto address = [&](std::string_view prefix) {
    std::string out;
    for (std::string_view field : {"street_1 varchar(20)", "street_2 varchar(20)",
                                   "city varchar(20)", "state char(2)", "zip char(9)"}) {
      out.append(", ").append(prefix).append(field);
    }
    return out;
  };
  AddTable(spec, "item",
           "i_id integer NOT NULL, i_im_id integer, i_name varchar(24), i_price numeric(5,2), "
           "i_data varchar(50)",
           "i_id", kItems);
  AddTable(spec, "warehouse",
           absl::StrCat("w_id integer NOT NULL, w_name varchar(10)", address("w_"),
                        ", w_tax numeric(4,4), w_ytd numeric(12,2)"),
           "w_id", warehouses);
  std::string stock = "s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_quantity integer";
  for (int d = 1; d <= 10; ++d)
    absl::StrAppend(&stock, absl::StrFormat(", s_dist_%02d char(24)", d));
  absl::StrAppend(&stock,
                  ", s_ytd integer, s_order_cnt integer, s_remote_cnt integer, s_data varchar(50)");
  AddTable(spec, "stock", stock, "s_w_id, s_i_id", warehouses * kItems);
  AddTable(
      spec, "district",
      absl::StrCat("d_id integer NOT NULL, d_w_id integer NOT NULL, d_name varchar(10)",
                   address("d_"), ", d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id integer"),
      "d_w_id, d_id", districts);
  AddTable(spec, "customer",
           absl::StrCat("c_id integer NOT NULL, c_d_id integer NOT NULL, c_w_id integer NOT NULL, "
                        "c_first varchar(16), c_middle char(2), c_last varchar(16)",
                        address("c_"),
                        ", c_phone char(16), c_since timestamp, c_credit char(2), "
                        "c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance "
                        "numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt integer, "
                        "c_delivery_cnt integer, c_data varchar(500)"),
           "c_w_id, c_d_id, c_id", districts * kCustomersPerDistrict);
  spec.mutable_tables(spec.tables_size() - 1)
      ->add_indexes()
      ->set_any(
          "CREATE INDEX IF NOT EXISTS customer_name ON customer (c_w_id, c_d_id, c_last, "
          "c_first)");
  AddTable(spec, "history",
           "h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, h_w_id integer, "
           "h_date timestamp, h_amount numeric(6,2), h_data varchar(24)",
           "", districts * kCustomersPerDistrict);
  AddTable(spec, "orders",
           "o_id integer NOT NULL, o_d_id integer NOT NULL, o_w_id integer NOT NULL, o_c_id "
           "integer, o_entry_d timestamp, o_carrier_id integer, o_ol_cnt integer, o_all_local "
           "integer",
           "o_w_id, o_d_id, o_id", districts * kOrdersPerDistrict);
  spec.mutable_tables(spec.tables_size() - 1)
      ->add_indexes()
      ->set_any(
          "CREATE INDEX IF NOT EXISTS orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)");
  AddTable(spec, "new_order",
           "no_o_id integer NOT NULL, no_d_id integer NOT NULL, no_w_id integer NOT NULL",
           "no_w_id, no_d_id, no_o_id", districts * (kOrdersPerDistrict - kFirstNewOrder + 1));
  int64_t lines = 0;
  for (int64_t w = 1; w <= warehouses; ++w) {
    for (int64_t d = 1; d <= kDistrictsPerWarehouse; ++d) {
      for (int64_t o = 1; o <= kOrdersPerDistrict; ++o) lines += OrderLineCount(w, d, o);
    }
  }
  AddTable(spec, "order_line",
           "ol_o_id integer NOT NULL, ol_d_id integer NOT NULL, ol_w_id integer NOT NULL, "
           "ol_number integer NOT NULL, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d "
           "timestamp, ol_quantity integer, ol_amount numeric(6,2), ol_dist_info char(24)",
           "ol_w_id, ol_d_id, ol_o_id, ol_number", lines);

  if (foreign_keys) {
    // Index steps of the child, after its own key: the loader runs a table's steps after its
    // rows, and the parents come earlier in load order, keys built. IF NOT EXISTS on MariaDB,
    // which commits DDL by itself: a step an interrupted prepare had begun runs again.
    for (const ForeignKey& fk : ForeignKeys()) {
      v1::Table& table = *std::find_if(spec.mutable_tables()->begin(), spec.mutable_tables()->end(),
                                       [&](const v1::Table& t) { return t.name() == fk.table; });
      v1::DialectSql& step = *table.add_indexes();
      const std::string references =
          absl::StrCat("(", fk.columns, ") REFERENCES ", fk.parent, " (", fk.parent_columns, ")");
      step.set_postgresql(absl::StrCat("ALTER TABLE ", fk.table, " ADD CONSTRAINT ", fk.name,
                                       " FOREIGN KEY ", references));
      step.set_mysql(absl::StrCat("ALTER TABLE ", fk.table, " ADD CONSTRAINT ", fk.name,
                                  " FOREIGN KEY IF NOT EXISTS ", references));
    }
  }
  for (v1::Check& check : ConsistencyChecks()) *spec.add_checks() = std::move(check);
  // What clause 4.3.3.1 fixes beyond the counts, each query counting the exceptions.
  AddCheck(spec, "each district's orders name each of its customers once",
           "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id FROM orders GROUP BY o_w_id, o_d_id "
           "HAVING COUNT(DISTINCT o_c_id) <> 3000 OR MIN(o_c_id) <> 1 OR MAX(o_c_id) <> 3000) x",
           0);
  AddCheck(spec, "each order has O_OL_CNT lines",
           "SELECT COUNT(*) FROM orders o WHERE o_ol_cnt <> (SELECT COUNT(*) FROM order_line l "
           "WHERE l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id)",
           0);
  AddCheck(spec, "the undelivered orders are the new orders",
           "SELECT COUNT(*) FROM orders o WHERE (o_carrier_id IS NULL) <> EXISTS (SELECT 1 FROM "
           "new_order n WHERE n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = "
           "o.o_id)",
           0);
  return spec;
}

std::vector<v1::Check> ConsistencyChecks() {
  v1::WorkloadSpec checks;
  AddCheck(checks, "consistency condition 1 (clause 3.3.2.1): W_YTD = sum(D_YTD)",
           "SELECT COUNT(*) FROM warehouse w WHERE w_ytd <> (SELECT SUM(d_ytd) FROM district d "
           "WHERE d.d_w_id = w.w_id)",
           0);
  AddCheck(checks,
           "consistency condition 2 (clause 3.3.2.2): D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
           "SELECT COUNT(*) FROM district d WHERE d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders "
           "o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) OR d_next_o_id - 1 <> (SELECT "
           "MAX(no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id)",
           0);
  AddCheck(checks,
           "consistency condition 3 (clause 3.3.2.3): max(NO_O_ID) - min(NO_O_ID) + 1 = the "
           "district's new orders",
           "SELECT COUNT(*) FROM (SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id "
           "HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)) x",
           0);
  AddCheck(
      checks,
      "consistency condition 4 (clause 3.3.2.4): sum(O_OL_CNT) = the district's order lines",
      "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS line_count FROM orders "
      "GROUP BY o_w_id, o_d_id) o WHERE line_count <> (SELECT COUNT(*) FROM order_line l WHERE "
      "l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id)",
      0);
  return {checks.checks().begin(), checks.checks().end()};
}

std::unique_ptr<RowSource> MakeTpccRowSource(std::string_view table, uint64_t seed) {
  if (table == "orders") return std::make_unique<OrderSource>(seed);
  if (table == "order_line") return std::make_unique<OrderLineSource>(seed);
  return Simple(table, seed);
}

}  // namespace dbload::tpcc
