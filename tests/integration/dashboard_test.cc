// The Grafana dashboard (dashboards/dbload.json) against real data. Grafana is not packaged
// here, so the test does what Grafana would: it reads the JSON, resolves the template variables
// with their own label_values() queries, substitutes them and Grafana's built-in intervals into
// every panel's PromQL and runs each query over the HTTP API of a real Prometheus 2.42
// (tests/harness/dbenv) that scraped
//  - a real dbload-coordinator (--metrics) with two real dbload-agent processes, which ran two
//    short runs of a workload written here: one against PostgreSQL (open loop, two stages, so
//    that the stage annotation has boundaries to show) and one against MariaDB (closed loop, a
//    connection per transaction, for the connect-time panel);
//    a hot row locked with FOR UPDATE NOWAIT makes some transactions fail for real (SQLSTATE
//    55P03 / errno 1205, both classified retryable), so that "errors by class" has data;
//  - real prometheus-node-exporter, prometheus-postgres-exporter and prometheus-mysqld-exporter
//    processes on free loopback ports, pointed at the same servers.
// Every query of every panel (and of the annotation) must return at least one finite value; a
// failure names the panel and the query as run. Every metric name the dashboard uses must appear
// on the coordinator's or an exporter's /metrics page (a typo otherwise passes as "no data").
//
// DBLOAD_DASHBOARD_SKIP_PROBE=1 skips the queries of the database probe's metrics
// (dbload_db_*, dbload_probe_*, dbload_generator_*, dbload_agent_cpu_utilization), for a tree
// without the probe; without it every panel is checked.
//
// Every process started here is stopped by its PID (Child's destructor, dbenv stop), also when
// the test fails.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/harness/child_process.h"
#include "tests/harness/http_get.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || \
    !defined(DBLOAD_AGENT_BINARY) || !defined(DBLOAD_DASHBOARD)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY, DBLOAD_AGENT_BINARY, DBLOAD_DASHBOARD needed"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::HttpGet;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Prometheus scrapes every second (dbenv), so Grafana's $__rate_interval, max($__interval +
// scrape interval, 4 × scrape interval), is 4 s at a 1 s step.
constexpr int kStepS = 1;
constexpr char kRateInterval[] = "4s";

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A port nobody listens on right now (the kernel's pick; released for the exporter to take).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("%%%02X", c);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The dashboard's JSON.

json LoadDashboard() {
  std::ifstream in(DBLOAD_DASHBOARD);
  EXPECT_TRUE(in) << "cannot read " << DBLOAD_DASHBOARD;
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Every panel, rows and the panels inside collapsed rows included.
std::vector<json> AllPanels(const json& dashboard) {
  std::vector<json> panels;
  for (const json& panel : dashboard.value("panels", json::array())) {
    panels.push_back(panel);
    for (const json& inner : panel.value("panels", json::array())) panels.push_back(inner);
  }
  return panels;
}

bool IsRow(const json& panel) { return panel.value("type", "") == "row"; }

// One query of the dashboard: a panel's target, the stage annotation or a variable.
struct DashboardQuery {
  std::string where;  // "panel 'TITLE'" or "annotation 'NAME'"
  std::string expr;
  bool instant = false;
  int step_s = kStepS;
};

int StepSeconds(const json& annotation) {
  int seconds = kStepS;
  const std::string text = annotation.value("step", "");
  absl::string_view step = text;
  if (absl::ConsumeSuffix(&step, "s")) {
    EXPECT_TRUE(absl::SimpleAtoi(step, &seconds)) << text;
  }
  return seconds;
}

std::vector<DashboardQuery> PanelAndAnnotationQueries(const json& dashboard) {
  std::vector<DashboardQuery> queries;
  for (const json& panel : AllPanels(dashboard)) {
    for (const json& target : panel.value("targets", json::array())) {
      queries.push_back({.where = absl::StrCat("panel '", panel.value("title", ""), "'"),
                         .expr = target.value("expr", ""),
                         .instant = target.value("instant", false)});
    }
  }
  for (const json& annotation : dashboard["annotations"].value("list", json::array())) {
    if (annotation["datasource"].value("type", "") != "prometheus") continue;
    queries.push_back({.where = absl::StrCat("annotation '", annotation.value("name", ""), "'"),
                       .expr = annotation.value("expr", ""),
                       .step_s = StepSeconds(annotation)});
  }
  return queries;
}

std::string VariableQuery(const json& variable) {
  const json& query = variable["query"];
  return query.is_object() ? query.value("query", "") : query.get<std::string>();
}

// The metric names an expression reads: identifiers outside strings, label matchers, range
// brackets and the label lists of by/without/on/ignoring/group_*, that are not functions,
// keywords, aggregation operators or numbers.
std::set<std::string> MetricNames(absl::string_view expr) {
  // Aggregations may put their grouping before the parenthesis (`sum by (x) (…)`).
  static const std::set<std::string> kKeywords = {
      "and",     "or",           "unless",   "bool",       "offset",      "by",
      "without", "on",           "ignoring", "group_left", "group_right", "sum",
      "min",     "max",          "avg",      "group",      "stddev",      "stdvar",
      "count",   "count_values", "bottomk",  "topk",       "quantile"};
  static const std::set<std::string> kLabelLists = {"by",       "without",    "on",
                                                    "ignoring", "group_left", "group_right"};
  auto is_start = [](char c) { return absl::ascii_isalpha(c) || c == '_' || c == ':'; };
  auto is_part = [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == ':'; };
  std::set<std::string> names;
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < expr.size() && absl::ascii_isspace(expr[i])) ++i;
  };
  auto skip_until = [&](char close) {  // past the matching `close`, strings inside skipped
    while (i < expr.size() && expr[i] != close) {
      if (expr[i] == '"') {
        for (++i; i < expr.size() && expr[i] != '"'; ++i) {
          if (expr[i] == '\\') ++i;
        }
      }
      ++i;
    }
    ++i;
  };
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"') {
      ++i;
      skip_until('"');
    } else if (c == '{') {
      ++i;
      skip_until('}');
    } else if (c == '[') {
      ++i;
      skip_until(']');
    } else if (absl::ascii_isdigit(c)) {
      while (i < expr.size() && (is_part(expr[i]) || expr[i] == '.')) ++i;
    } else if (is_start(c)) {
      const size_t begin = i;
      while (i < expr.size() && is_part(expr[i])) ++i;
      const std::string word(expr.substr(begin, i - begin));
      skip_spaces();
      const bool call = i < expr.size() && expr[i] == '(';
      if (kLabelLists.count(word) && call) {
        ++i;
        skip_until(')');
      } else if (!call && !kKeywords.count(word)) {
        names.insert(word);
      }
    } else {
      ++i;
    }
  }
  return names;
}

bool IsProbeMetric(absl::string_view name) {
  return absl::StartsWith(name, "dbload_db_") || absl::StartsWith(name, "dbload_probe_") ||
         absl::StartsWith(name, "dbload_generator_") || name == "dbload_agent_cpu_utilization";
}

bool SkipProbe() {
  const char* value = std::getenv("DBLOAD_DASHBOARD_SKIP_PROBE");
  return value != nullptr && std::string(value) == "1";
}

// Grafana's formatting of a multi-value variable in a Prometheus query: regex-escaped values,
// alternated in parentheses (what "All" becomes when the variable has no custom all value).
std::string RegexAlternation(const std::vector<std::string>& values) {
  std::vector<std::string> escaped;
  for (const std::string& value : values) {
    std::string out;
    for (char c : value) {
      if (absl::StrContains("\\^$.|?*+()[]{}", c)) out += '\\';
      out += c;
    }
    escaped.push_back(out);
  }
  if (escaped.size() == 1) return escaped[0];
  return absl::StrCat("(", absl::StrJoin(escaped, "|"), ")");
}

// $name and ${name}, longest names first, a name ending where an identifier would.
std::string Substitute(const std::string& expr, const std::map<std::string, std::string>& values) {
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    bool replaced = false;
    if (expr[i] == '$') {
      for (const std::string& name : names) {
        const std::string braced = absl::StrCat("${", name, "}");
        const std::string plain = absl::StrCat("$", name);
        if (expr.compare(i, braced.size(), braced) == 0) {
          out += values.at(name);
          i += braced.size();
          replaced = true;
        } else if (expr.compare(i, plain.size(), plain) == 0 &&
                   (i + plain.size() == expr.size() ||
                    !(absl::ascii_isalnum(expr[i + plain.size()]) ||
                      expr[i + plain.size()] == '_'))) {
          out += values.at(name);
          i += plain.size();
          replaced = true;
        }
        if (replaced) break;
      }
    }
    if (!replaced) out += expr[i++];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The structure Grafana needs to import the dashboard anywhere.

// A legend that names a quantile names the one its query asks for: "p99.9" for quantile="0.999"
// or histogram_quantile(0.999, …).
TEST(DashboardStructureTest, EveryQuantileIsLabelledAsTheOneItShows) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object());
  static const std::regex asked(R"re((?:quantile="|histogram_quantile\()(0\.\d+))re");
  static const std::regex named(R"( p(\d+(?:\.\d+)?)$)");
  int checked = 0;
  for (const json& panel : AllPanels(dashboard)) {
    for (const json& target : panel.value("targets", json::array())) {
      const std::string expr = target.value("expr", "");
      const std::string legend = target.value("legendFormat", "");
      std::smatch quantile, label;
      if (!std::regex_search(expr, quantile, asked) || !std::regex_search(legend, label, named)) {
        continue;
      }
      // 0.999 → "99.9", 0.5 → "50", as a legend writes it.
      const std::string percent = absl::StrFormat("%g", std::stod(quantile[1].str()) * 100);
      EXPECT_EQ(label[1].str(), percent)
          << "panel '" << panel.value("title", "") << "': " << legend << " for " << expr;
      ++checked;
    }
  }
  EXPECT_GE(checked, 12);
}

TEST(DashboardStructureTest, ImportableAndWellFormed) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object()) << DBLOAD_DASHBOARD << " is not a JSON object";

  // Grafana 9 and 10 write schema versions 36 to 39.
  EXPECT_GE(dashboard.value("schemaVersion", 0), 36);
  EXPECT_LE(dashboard.value("schemaVersion", 0), 39);
  EXPECT_FALSE(dashboard.value("title", "").empty());
  EXPECT_FALSE(dashboard.value("uid", "").empty());

  // The import asks for a Prometheus data source, and a datasource variable lets viewers switch.
  ASSERT_TRUE(dashboard.contains("__inputs"));
  bool prometheus_input = false;
  for (const json& input : dashboard["__inputs"]) {
    prometheus_input |=
        input.value("type", "") == "datasource" && input.value("pluginId", "") == "prometheus";
  }
  EXPECT_TRUE(prometheus_input) << "no __inputs entry of a prometheus data source";
  std::map<std::string, json> variables;
  for (const json& variable : dashboard["templating"]["list"]) {
    variables[variable.value("name", "")] = variable;
  }
  ASSERT_TRUE(variables.count("datasource"));
  EXPECT_EQ(variables["datasource"].value("type", ""), "datasource");
  EXPECT_EQ(variables["datasource"].value("query", ""), "prometheus");
  const json expected_ds = {{"type", "prometheus"}, {"uid", "${datasource}"}};
  for (const char* name : {"run", "scenario", "query_type"}) {
    ASSERT_TRUE(variables.count(name)) << "no variable " << name;
    const json& variable = variables[name];
    EXPECT_EQ(variable.value("type", ""), "query") << name;
    EXPECT_TRUE(variable.value("includeAll", false)) << name << " has no All";
    EXPECT_TRUE(absl::StartsWith(VariableQuery(variable), "label_values("))
        << name << ": " << VariableQuery(variable);
    EXPECT_EQ(variable["datasource"], expected_ds) << name;
  }

  std::set<int> ids;
  int panels = 0, queries = 0;
  auto check_layout = [](const std::vector<json>& group, const std::string& what) {
    // Panels of one group (the top level, or one collapsed row) never overlap.
    for (size_t a = 0; a < group.size(); ++a) {
      for (size_t b = a + 1; b < group.size(); ++b) {
        const json& p = group[a]["gridPos"];
        const json& q = group[b]["gridPos"];
        const bool apart = p["x"].get<int>() + p["w"].get<int>() <= q["x"].get<int>() ||
                           q["x"].get<int>() + q["w"].get<int>() <= p["x"].get<int>() ||
                           p["y"].get<int>() + p["h"].get<int>() <= q["y"].get<int>() ||
                           q["y"].get<int>() + q["h"].get<int>() <= p["y"].get<int>();
        EXPECT_TRUE(apart) << what << ": '" << group[a].value("title", "") << "' overlaps '"
                           << group[b].value("title", "") << "'";
      }
    }
  };
  std::vector<json> top;
  for (const json& panel : AllPanels(dashboard)) {
    const std::string title = panel.value("title", "");
    EXPECT_FALSE(title.empty()) << "a panel without a title: " << panel.dump().substr(0, 200);
    ASSERT_TRUE(panel.contains("id") && panel["id"].is_number_integer()) << title;
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "duplicate id " << panel["id"];
    ASSERT_TRUE(panel.contains("gridPos")) << title;
    const json& pos = panel["gridPos"];
    for (const char* key : {"x", "y", "w", "h"}) {
      ASSERT_TRUE(pos.contains(key) && pos[key].is_number_integer()) << title << " gridPos." << key;
    }
    EXPECT_GE(pos["x"].get<int>(), 0) << title;
    EXPECT_GE(pos["y"].get<int>(), 0) << title;
    EXPECT_GT(pos["w"].get<int>(), 0) << title;
    EXPECT_GT(pos["h"].get<int>(), 0) << title;
    EXPECT_LE(pos["x"].get<int>() + pos["w"].get<int>(), 24) << title << " is wider than the grid";
    if (IsRow(panel)) {
      EXPECT_FALSE(panel.contains("targets")) << "row " << title;
      if (panel.value("collapsed", false)) {
        check_layout(panel["panels"].get<std::vector<json>>(), "row " + title);
      }
      continue;
    }
    ++panels;
    EXPECT_EQ(panel["datasource"], expected_ds) << title;
    ASSERT_TRUE(panel.contains("targets") && !panel["targets"].empty()) << title << ": no query";
    std::set<std::string> refs;
    for (const json& target : panel["targets"]) {
      ++queries;
      EXPECT_FALSE(target.value("expr", "").empty()) << title << ": a target without expr";
      EXPECT_EQ(target["datasource"], expected_ds) << title;
      EXPECT_TRUE(refs.insert(target.value("refId", "")).second) << title << ": refId repeats";
    }
  }
  for (const json& panel : dashboard["panels"]) top.push_back(panel);
  check_layout(top, "top level");

  // The rows the dashboard promises, the exporters' one collapsed.
  std::map<std::string, bool> rows;
  for (const json& panel : dashboard["panels"]) {
    if (IsRow(panel)) rows[panel.value("title", "")] = panel.value("collapsed", false);
  }
  ASSERT_TRUE(rows.count("Exporters (where present)"));
  EXPECT_TRUE(rows["Exporters (where present)"]);

  // Stage boundaries come from dbload_run_stage.
  bool stage_annotation = false;
  for (const DashboardQuery& query : PanelAndAnnotationQueries(dashboard)) {
    stage_annotation |= absl::StartsWith(query.where, "annotation") &&
                        MetricNames(query.expr).count("dbload_run_stage");
  }
  EXPECT_TRUE(stage_annotation) << "no annotation reads dbload_run_stage";
  std::cout << "dashboard: " << panels << " panels, " << queries << " queries, " << ids.size()
            << " ids\n";
}

TEST(DashboardStructureTest, MetricNamesAreReadFromPromQL) {
  EXPECT_EQ(
      MetricNames(R"(histogram_quantile(0.99, sum by (run, le) (rate(a_bucket{x="b{c}"}[4s]))))"),
      (std::set<std::string>{"a_bucket"}));
  EXPECT_EQ(MetricNames(R"(m1{run=~"$run"} unless on (run, stage) (m1 offset 10s))"),
            (std::set<std::string>{"m1"}));
  EXPECT_EQ(MetricNames("1 - avg by (instance) (rate(n[1m])) / m2"),
            (std::set<std::string>{"n", "m2"}));
  EXPECT_EQ(
      Substitute(
          "x{r=~\"$run\",q=~\"${query_type}\"}[$__rate_interval] $__interval",
          {{"run", "(a|b)"}, {"query_type", "q"}, {"__rate_interval", "4s"}, {"__interval", "1s"}}),
      "x{r=~\"(a|b)\",q=~\"q\"}[4s] 1s");
  EXPECT_EQ(RegexAlternation({"a.b", "c"}), R"((a\.b|c))");
}

// ---------------------------------------------------------------------------------------------
// Every query against a real Prometheus that scraped real runs.

constexpr char kWorkload[] = R"yaml(name: dash
scenarios:
  - name: mixed
    query_types:
      - name: point_select
        weight: 4
        statements:
          - sql: SELECT n FROM dash_lock WHERE id = ?
            params: [{uniform: {min: 1, max: 10}}]
      # Every transaction wants row 1 and holds it 20 ms: the others fail at once (NOWAIT).
      - name: hot_row_update
        weight: 1
        transaction: true
        statements:
          - sql: SELECT n FROM dash_lock WHERE id = ? FOR UPDATE NOWAIT
            params: [1]
          - sql: UPDATE dash_lock SET n = n + 1 WHERE id = ?
            params: [1]
          - sql: {postgresql: "SELECT pg_sleep(0.02)", mysql: "SELECT SLEEP(0.02)"}
)yaml";

class DashboardQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<testing::ScratchDir>("dbload_dashboard_test");
    dir_ = scratch_->path();
  }

  void TearDown() override {
    // Agents first, then the coordinator, the exporters, then the servers; each by its PID.
    agents_.clear();
    coordinator_.reset();
    exporters_.clear();
    EXPECT_TRUE(prometheus_.Stop().ok());
    EXPECT_TRUE(native_prometheus_.Stop().ok());
    EXPECT_TRUE(databases_.Stop().ok());
    scratch_.reset();
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    return scratch_->Write(name, content);
  }

  // A table the workload reads and locks, owned by the benchmark user (made afresh, also in a
  // reused DBLOAD_DBENV_DIR environment).
  void CreateTables() {
    const std::string create =
        "DROP TABLE IF EXISTS dash_lock; CREATE TABLE dash_lock (id INT PRIMARY KEY, n INT NOT "
        "NULL)";
    testing::Psql(databases_, "bench",
                  absl::StrCat(create,
                               "; INSERT INTO dash_lock SELECT g, g FROM "
                               "generate_series(1, 10) g; ALTER TABLE dash_lock OWNER TO "
                               "bench"));
    testing::Mariadb(databases_, absl::StrCat("USE bench; ", create,
                                              "; INSERT INTO dash_lock VALUES (1,1),(2,2),(3,3),"
                                              "(4,4),(5,5),(6,6),(7,7),(8,8),(9,9),(10,10)"));
  }

  // Starts an exporter on a free port and waits until its /metrics answers.
  void StartExporter(const std::string& name, std::vector<std::string> argv) {
    const int port = FreePort();
    ASSERT_GT(port, 0);
    argv.push_back(absl::StrCat("--web.listen-address=127.0.0.1:", port));
    exporters_[name] = std::make_unique<Child>(argv);
    exporter_ports_[name] = port;
    const auto deadline = Clock::now() + seconds(15);
    std::string error;
    while (!HttpGet(port, "/metrics", error)) {
      ASSERT_TRUE(exporters_[name]->running()) << name << " exited: " << exporters_[name]->err();
      ASSERT_LT(Clock::now(), deadline) << name << " never served /metrics: " << error;
      std::this_thread::sleep_for(milliseconds(100));
    }
  }

  void StartCoordinatorAndAgents() {
    coordinator_ = std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"});
    const std::regex listening(R"(listening on (127\.0\.0\.1:\d+))");
    const std::regex metrics(R"(metrics on http://127\.0\.0\.1:(\d+)/metrics)");
    ASSERT_TRUE(coordinator_->PumpUntil(
        [&](const std::string& out) {
          return std::regex_search(out, listening) && std::regex_search(out, metrics);
        },
        seconds(10)))
        << coordinator_->out() << coordinator_->err();
    std::smatch match;
    const std::string out = coordinator_->out();
    ASSERT_TRUE(std::regex_search(out, match, listening));
    address_ = match[1];
    ASSERT_TRUE(std::regex_search(out, match, metrics));
    metrics_port_ = std::stoi(match[1]);
    for (int i = 1; i <= 2; ++i) {
      agents_.push_back(std::make_unique<Child>(std::vector<std::string>{
          DBLOAD_AGENT_BINARY, "--coordinator", address_, "--name", absl::StrCat("dash-", i)}));
    }
  }

  // Two Prometheus servers scraping the coordinator and the exporters every second, one with
  // native histograms enabled (the coordinator then exposes its latency histograms as native
  // ones), once each has scraped every target (new targets reach the scrape loops every 5 s).
  void StartPrometheus() {
    std::vector<std::string> targets = {absl::StrCat("127.0.0.1:", metrics_port_)};
    for (const auto& [name, port] : exporter_ports_) {
      targets.push_back(absl::StrCat("127.0.0.1:", port));
    }
    native_prometheus_.set_native_histograms(true);
    for (TestServers* prometheus : {&prometheus_, &native_prometheus_}) {
      const absl::Status started = prometheus->Start({"prometheus"}, true, targets);
      ASSERT_TRUE(started.ok()) << started;
    }
    prometheus_port_ = prometheus_.GetInt("PROMETHEUS_PORT");
    native_prometheus_port_ = native_prometheus_.GetInt("PROMETHEUS_PORT");
    const auto deadline = Clock::now() + seconds(20);
    for (const int port : {prometheus_port_, native_prometheus_port_}) {
      while (true) {
        const absl::StatusOr<json> up = Api(port, "/api/v1/query?query=" + UrlEncode("up == 1"));
        ASSERT_TRUE(up.ok()) << up.status();
        if ((*up)["result"].size() == targets.size() + 1) break;  // + Prometheus itself
        ASSERT_LT(Clock::now(), deadline) << "Prometheus never scraped every target: " << *up;
        std::this_thread::sleep_for(milliseconds(250));
      }
    }
  }

  // A run through `dbload submit --wait` on both agents; its run id.
  std::string Submit(const std::string& plan_name, const std::string& plan) {
    const std::string path = WriteFile(plan_name, plan);
    const ProcessResult run =
        RunProcess({DBLOAD_BINARY, "submit", path, "--coordinator", address_, "--min-agents", "2",
                    "--wait-for-agents", "15s", "--wait"},
                   seconds(60));
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    const std::string header = run.out.substr(0, run.out.find('\n'));
    const std::vector<std::string> words = absl::StrSplit(header, ' ');
    EXPECT_GE(words.size(), 2u) << run.Describe();
    // The coordinator and agents write a few lines per run: read them so no pipe fills up.
    coordinator_->Pump(milliseconds(20));
    for (auto& agent : agents_) agent->Pump(milliseconds(20));
    if (run.exit_code != 0 || words.size() < 2) return "";
    EXPECT_TRUE(absl::StrContains(run.out, "hot_row_update")) << run.out;
    return words[1];
  }

  std::string TargetYaml(const std::string& driver, const std::string& port_key,
                         const std::string& password_key) {
    return absl::StrCat("target:\n  driver: ", driver,
                        "\n  host: 127.0.0.1\n  port: ", databases_.Get(port_key),
                        "\n  user: bench\n  password_file: ", databases_.Get(password_key),
                        "\n  database: bench\n  pool: 4\n  connect_timeout: 5s\n");
  }

  // GET on the API of the Prometheus on `port`: the `data` of a successful answer.
  absl::StatusOr<json> Api(int port, const std::string& target) {
    std::string error;
    const std::optional<std::string> body = HttpGet(port, target, error);
    if (!body) return absl::UnavailableError(absl::StrCat(target, ": ", error));
    json answer = json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object() || answer.value("status", "") != "success") {
      return absl::InternalError(absl::StrCat(target, ": ", body->substr(0, 400)));
    }
    return answer["data"];
  }

  // The metric names a /metrics page shows: the names of its samples, and of its histograms
  // (the name of a native histogram's series).
  std::set<std::string> ExposedNames(int port) {
    std::string error;
    const std::optional<std::string> page = HttpGet(port, "/metrics", error);
    EXPECT_TRUE(page.has_value()) << "port " << port << ": " << error;
    std::set<std::string> names;
    for (absl::string_view line : absl::StrSplit(page.value_or(""), '\n')) {
      absl::string_view histogram = line;
      if (absl::ConsumePrefix(&histogram, "# TYPE ") &&
          absl::ConsumeSuffix(&histogram, " histogram")) {
        names.insert(std::string(histogram));
      }
      if (line.empty() || line[0] == '#') continue;
      names.insert(std::string(line.substr(0, line.find_first_of("{ "))));
    }
    return names;
  }

  std::unique_ptr<testing::ScratchDir> scratch_;
  std::string dir_;
  TestServers databases_;
  TestServers prometheus_;
  TestServers native_prometheus_;
  std::map<std::string, std::unique_ptr<Child>> exporters_;
  std::map<std::string, int> exporter_ports_;
  std::unique_ptr<Child> coordinator_;
  std::vector<std::unique_ptr<Child>> agents_;
  std::string address_;
  int metrics_port_ = 0;
  int prometheus_port_ = 0;
  int native_prometheus_port_ = 0;
};

TEST_F(DashboardQueryTest, EveryPanelShowsDataOfRealRuns) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object());

  const absl::Status started = databases_.Start({"postgres", "mariadb"});
  ASSERT_TRUE(started.ok()) << started;
  ASSERT_NO_FATAL_FAILURE(CreateTables());
  ASSERT_NO_FATAL_FAILURE(
      StartExporter("node", {"/usr/bin/prometheus-node-exporter", "--collector.disable-defaults",
                             "--collector.cpu", "--collector.meminfo", "--collector.diskstats"}));
  ASSERT_NO_FATAL_FAILURE(StartExporter(
      "postgres", {"/usr/bin/env",
                   absl::StrCat("DATA_SOURCE_NAME=host=", databases_.Get("PG_SOCKET_DIR"), " port=",
                                databases_.Get("PG_PORT"), " user=", databases_.Get("PG_SUPERUSER"),
                                " dbname=bench sslmode=disable"),
                   "/usr/bin/prometheus-postgres-exporter", "--log.level=warn"}));
  ASSERT_NO_FATAL_FAILURE(StartExporter(
      "mysqld", {"/usr/bin/env",
                 absl::StrCat("DATA_SOURCE_NAME=", databases_.Get("MARIADB_SUPERUSER"), "@unix(",
                              databases_.Get("MARIADB_SOCKET"), ")/"),
                 "/usr/bin/prometheus-mysqld-exporter", "--log.level=warn"}));
  ASSERT_NO_FATAL_FAILURE(StartCoordinatorAndAgents());
  ASSERT_NO_FATAL_FAILURE(StartPrometheus());

  // Two short runs: PostgreSQL open loop in two stages, MariaDB closed loop.
  WriteFile("dash.yaml", kWorkload);
  const double begin = WallSeconds();
  const std::string pg_run =
      Submit("postgresql.yaml",
             absl::StrCat(
                 "name: dash-postgresql\n", TargetYaml("postgresql", "PG_PORT", "PG_PASSWORD_FILE"),
                 "workload: ./dash.yaml\nscenario: mixed\nload: {open: {arrival: poisson}}\n"
                 "stages:\n  - {name: low, duration: 3s, rate: 100}\n"
                 "  - {name: high, duration: 3s, rate: 200}\nwarmup: 0s\nseed: 7\n"));
  const double pg_finished = WallSeconds();
  const std::string mariadb_run = Submit(
      "mariadb.yaml", absl::StrCat("name: dash-mariadb\n",
                                   TargetYaml("mysql", "MARIADB_PORT", "MARIADB_PASSWORD_FILE"),
                                   // A connection per transaction, for the connect-time panel.
                                   "  connect: per_transaction\n"
                                   "workload: ./dash.yaml\nscenario: mixed\n"
                                   "load: {closed: {clients: 4, think_time: 1ms}}\nwarmup: 0s\n"
                                   "stop: {duration: 4s}\nseed: 8\n"));
  ASSERT_FALSE(pg_run.empty());
  ASSERT_FALSE(mariadb_run.empty());
  std::this_thread::sleep_for(seconds(3));  // the last intervals scraped
  const double end = WallSeconds();
  const std::string range = absl::StrFormat("&start=%.3f&end=%.3f", begin - 5, end);

  // What the pages show, for the metric-name check.
  std::set<std::string> exposed = ExposedNames(metrics_port_);
  for (const auto& [name, port] : exporter_ports_) exposed.merge(ExposedNames(port));

  // Everything below on both Prometheus servers: the dashboard reads classic buckets or native
  // histograms, whichever the server stored.
  std::vector<DashboardQuery> checked;
  const bool skip_probe = SkipProbe();
  std::vector<std::string> skipped;
  int ran = 0;
  for (const auto& [kind, port] :
       {std::pair<const char*, int>{"classic", prometheus_port_},
        std::pair<const char*, int>{"native", native_prometheus_port_}}) {
    SCOPED_TRACE(absl::StrCat("the Prometheus with ", kind, " histograms"));
    // The variables, resolved as Grafana does on a time-range refresh, each from its own
    // label_values() query with the variables before it substituted; "All" of each.
    std::map<std::string, std::string> values = {
        {"__interval", absl::StrCat(kStepS, "s")},
        {"__interval_ms", absl::StrCat(kStepS * 1000)},
        {"__rate_interval", kRateInterval},
        {"__range", absl::StrFormat("%.0fs", end - begin + 5)},
        {"__range_s", absl::StrFormat("%.0f", end - begin + 5)},
        {"datasource", "prometheus"}};
    std::map<std::string, std::vector<std::string>> resolved;
    for (const json& variable : dashboard["templating"]["list"]) {
      if (variable.value("type", "") != "query") continue;
      const std::string name = variable.value("name", "");
      const std::string query = Substitute(VariableQuery(variable), values);
      static const std::regex label_values(R"(^label_values\((.*),\s*(\w+)\)$)");
      std::smatch match;
      ASSERT_TRUE(std::regex_match(query, match, label_values)) << name << ": " << query;
      checked.push_back({.where = "variable " + name, .expr = match[1].str()});
      const absl::StatusOr<json> series =
          Api(port, absl::StrCat("/api/v1/series?match[]=", UrlEncode(match[1].str()), range));
      ASSERT_TRUE(series.ok()) << "variable " << name << ": " << series.status();
      std::set<std::string> found;
      for (const json& labels : *series) found.insert(labels.value(match[2].str(), ""));
      found.erase("");
      ASSERT_FALSE(found.empty()) << "variable " << name << " has no value: " << query;
      resolved[name].assign(found.begin(), found.end());
      values[name] = RegexAlternation(resolved[name]);
    }
    EXPECT_EQ(resolved["run"], (std::vector<std::string>{std::min(pg_run, mariadb_run),
                                                         std::max(pg_run, mariadb_run)}));
    EXPECT_EQ(resolved["scenario"], std::vector<std::string>{"mixed"});
    EXPECT_EQ(resolved["query_type"], (std::vector<std::string>{"hot_row_update", "point_select"}));

    // Every panel's and annotation's query over the runs, as Grafana asks for it.
    for (DashboardQuery query : PanelAndAnnotationQueries(dashboard)) {
      checked.push_back(query);
      query.expr = Substitute(query.expr, values);
      const std::set<std::string> names = MetricNames(query.expr);
      if (skip_probe && std::any_of(names.begin(), names.end(), IsProbeMetric)) {
        skipped.push_back(absl::StrCat(query.where, ": ", query.expr));
        continue;
      }
      ++ran;
      const std::string target =
          query.instant ? absl::StrCat("/api/v1/query?query=", UrlEncode(query.expr),
                                       absl::StrFormat("&time=%.3f", end))
                        : absl::StrCat("/api/v1/query_range?query=", UrlEncode(query.expr), range,
                                       "&step=", query.step_s);
      const absl::StatusOr<json> data = Api(port, target);
      if (!data.ok()) {
        ADD_FAILURE() << query.where << ": " << query.expr << "\n  failed: " << data.status();
        continue;
      }
      int finite = 0;
      for (const json& series : (*data)["result"]) {
        std::vector<json> points;
        if (series.contains("value")) points.push_back(series["value"]);
        for (const json& point : series.value("values", json::array())) points.push_back(point);
        for (const json& point : points) {
          double value = 0;
          if (absl::SimpleAtod(point[1].get<std::string>(), &value) && std::isfinite(value)) {
            ++finite;
          }
        }
      }
      EXPECT_GT(finite, 0) << query.where << " shows no data: " << query.expr
                           << "\n  Prometheus: " << data->dump().substr(0, 300);
      // The stage annotation: Grafana draws a region per stage from its first to its last point,
      // so its edges are the boundaries. The staged run's two stages, in order, and nothing once
      // the run has ended (the coordinator keeps exporting a finished run's last stage).
      if (absl::StartsWith(query.where, "annotation") && names.count("dbload_run_stage")) {
        std::map<std::string, std::pair<double, double>> stages;  // run/stage → first, last
        for (const json& series : (*data)["result"]) {
          const std::string key = absl::StrCat(series["metric"].value("run", ""), "/",
                                               series["metric"].value("stage", ""));
          for (const json& point : series.value("values", json::array())) {
            const double t = point[0].get<double>();
            auto it = stages.try_emplace(key, t, t).first;
            it->second.first = std::min(it->second.first, t);
            it->second.second = std::max(it->second.second, t);
          }
        }
        const std::string low = pg_run + "/low", high = pg_run + "/high";
        if (stages.size() != 2 || !stages.count(low) || !stages.count(high)) {
          ADD_FAILURE() << query.where << " does not show stages low and high of " << pg_run << ": "
                        << query.expr << "\n  Prometheus: " << data->dump().substr(0, 600);
          continue;
        }
        EXPECT_LT(stages[low].second, stages[high].first) << query.where << ": stages overlap";
        // Prometheus sees the run finished at its next scrape (each second, later on a busy
        // machine); without the state condition the stage would last until the end of the range,
        // 7 s or more after (the MariaDB run and the wait for the last scrapes).
        EXPECT_LT(stages[high].second, pg_finished + 3)
            << query.where << " still shows the last stage at "
            << absl::StrFormat("%.3f", stages[high].second) << ", after the run ended at "
            << absl::StrFormat("%.3f", pg_finished) << ": " << query.expr;
      }
    }
  }

  // Every metric name exists on a page Prometheus scraped (probe metrics exempt when skipped).
  for (const DashboardQuery& query : checked) {
    for (const std::string& name : MetricNames(query.expr)) {
      if (skip_probe && IsProbeMetric(name)) continue;
      EXPECT_TRUE(exposed.count(name))
          << query.where << " reads " << name
          << ", which neither the coordinator nor an exporter exposes: " << query.expr;
    }
  }

  std::cout << "runs " << pg_run << " (PostgreSQL, 2 stages), " << mariadb_run << " (MariaDB); "
            << ran << " queries returned data checks, " << skipped.size() << " skipped\n";
  for (const std::string& line : skipped) std::cout << "  skipped (probe): " << line << "\n";
  if (HasFailure()) {
    coordinator_->Pump(milliseconds(100));
    std::cerr << "--- coordinator ---\n" << coordinator_->err() << "\n";
    for (size_t i = 0; i < agents_.size(); ++i) {
      agents_[i]->Pump(milliseconds(100));
      std::cerr << "--- agent " << i + 1 << " ---\n" << agents_[i]->err() << "\n";
    }
  }
}

}  // namespace
}  // namespace dbload
