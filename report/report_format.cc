// The figures every renderer prints the same way: milliseconds, percentiles with their basis,
// statements, human units.
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/code_workloads.h"
#include "plan/durations.h"
#include "report/report.h"
#include "workload/tpcc_options.h"

namespace dbload {

std::string DescribeStatements(uint64_t statements, uint64_t executed, uint64_t errors,
                               uint64_t ignored, double seconds) {
  if (statements == 0) return "";
  std::string text = absl::StrCat(statements);
  std::vector<std::string> parts;
  if (const uint64_t transactions = executed + errors + ignored; transactions > 0) {
    parts.push_back(absl::StrFormat(
        "%.1f per transaction%s",
        static_cast<double>(statements) / static_cast<double>(transactions),
        errors + ignored > 0 ? ", failed and ignored ones included" : ""));
  }
  if (seconds > 0) {
    parts.push_back(absl::StrFormat("%.1f/s", static_cast<double>(statements) / seconds));
  }
  if (!parts.empty()) absl::StrAppend(&text, " (", absl::StrJoin(parts, ", "), ")");
  return text;
}

std::string DescribeRetries(const v1::QueryTypeReport& query_type) {
  std::vector<std::string> causes, committed;
  for (const v1::RetryCount& retry : query_type.retries()) {
    causes.push_back(absl::StrCat(absl::AsciiStrToLower(v1::RetryCause_Name(retry.cause())), " ",
                                  retry.count()));
  }
  for (const v1::TriesCount& tries : query_type.committed_by_tries()) {
    committed.push_back(absl::StrCat("after ", tries.tries(), " tries ", tries.count()));
  }
  std::vector<std::string> parts;
  if (!causes.empty()) parts.push_back(absl::StrJoin(causes, ", "));
  if (!committed.empty()) parts.push_back("committed " + absl::StrJoin(committed, ", "));
  if (query_type.failed_after_retries() > 0) {
    parts.push_back(absl::StrCat("failed after retrying ", query_type.failed_after_retries()));
  }
  return absl::StrJoin(parts, "; ");
}

std::string DescribeExecuted(const v1::QueryTypeReport& query_type) {
  if (query_type.rolled_back() == 0) return absl::StrCat(query_type.executed());
  return absl::StrCat(query_type.executed(), " (", query_type.rolled_back(),
                      " rolled back by the workload)");
}

std::optional<double> TpmC(const v1::RunReport& report) {
  if (report.plan().workload() != kTpccWorkloadName ||
      report.plan().scenario() != kTpccStandardMix || report.queries_duration_s() <= 0) {
    return std::nullopt;
  }
  for (const v1::QueryTypeReport& type : report.query_types()) {
    if (type.name() == "new_order") {
      return 60.0 * static_cast<double>(type.executed()) / report.queries_duration_s();
    }
  }
  return std::nullopt;
}

std::string DescribeTpcc(const v1::RunReport& report) {
  const std::optional<double> tpmc = TpmC(report);
  uint64_t total = 0;
  for (const v1::QueryTypeReport& type : report.query_types()) total += type.executed();
  if (!tpmc || total == 0) return "";
  std::vector<std::string> mix;
  for (const v1::QueryTypeReport& type : report.query_types()) {
    mix.push_back(
        absl::StrFormat("%s %.1f %%", type.name(),
                        100.0 * static_cast<double>(type.executed()) / static_cast<double>(total)));
  }
  // With keying and think times, the efficiency against what W warehouses' terminals can do.
  // The run ran, so its options were read before it; defaults if they no longer read.
  const tpcc::TpccOptions options =
      tpcc::ParseTpccOptions(
          {report.plan().workload_options().begin(), report.plan().workload_options().end()})
          .value_or(tpcc::TpccOptions());
  std::string waits = "no keying or think times";
  if (options.terminal_waits) {
    const double max_tpmc = kTpccMaxTpmCPerWarehouse * static_cast<double>(options.warehouses);
    waits = absl::StrFormat(
        "keying and think times; efficiency %.1f %% of the %d warehouses' %s tpmC maximum",
        100.0 * *tpmc / max_tpmc, options.warehouses, FormatCount(max_tpmc));
  }
  return absl::StrCat("tpmC ", FormatCount(*tpmc),
                      " (New-Orders completed per minute of the measured part, those rolled back "
                      "by the specification's 1 % included; ",
                      waits, "); mix ", absl::StrJoin(mix, ", "));
}

namespace {
// The plan's count, or what 0 means (an agent's cores: see each agent's in the manifest).
std::string DescribeEventLoops(uint32_t loops) {
  if (loops == 0) return ", on event loops (one per core each agent may use)";
  return absl::StrCat(", on ", loops, loops == 1 ? " event loop" : " event loops", " per agent");
}
}  // namespace

std::string DescribeTarget(const v1::Target& target) {
  std::string where = target.socket().empty()
                          ? absl::StrCat(target.host(), ":", target.port())
                          : target.socket();
  return absl::StrCat(
      target.driver(), " ", where,
      target.database().empty() ? "" : absl::StrCat("/", target.database()),
      target.mysql_client() == v1::MY_SQL_CLIENT_CONNECTOR_C     ? " (Connector/C)"
      : target.mysql_client() == v1::MY_SQL_CLIENT_CONNECTOR_CPP ? " (Connector/C++)"
                                                                 : "",
      target.connect() == v1::CONNECT_MODE_PER_TRANSACTION ? ", a connection per transaction" : "",
      target.pipeline() ? ", each transaction pipelined" : "",
      target.engine() == v1::ENGINE_EVENT_LOOPS ? DescribeEventLoops(target.event_loops())
      : target.engine() == v1::ENGINE_THREADS   ? ", a thread per connection"
                                                : "",
      target.timer_slack_ns() > 0
          ? absl::StrCat(", waking up to ", FormatDurationNanos(target.timer_slack_ns()),
                         " late for arrivals (timer_slack)")
          : "");
}

std::string DescribeCommits(const v1::RunReport& r) {
  const v1::CommitReconciliation& c = r.commit_reconciliation();
  const std::string set_up =
      c.setup_statements() == 0
          ? ""
          : absl::StrCat(", each with ", c.setup_statements(), " set-up statement",
                         c.setup_statements() == 1 ? "" : "s");
  std::string out = absl::StrFormat(
      "the database counted %d (%s), the report %d + %d of the connections' own (%d opened%s, "
      "%d statements prepared); difference %+d: %s",
      c.database_commits(), c.counter(), c.report_commits(), c.connection_commits(),
      c.connections_opened(), set_up, c.statements_prepared(), c.difference(), c.verdict());
  if (r.lost_agents_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" (bound %d; %d if they stopped when lost)",
                                          c.lost_bound(), c.lost_bound_if_stopped()));
  }
  return out;
}

std::string ConnectionSetup(const v1::RunManifest& manifest) {
  std::vector<std::string> parts;
  if (!manifest.isolation().empty()) parts.push_back("isolation " + manifest.isolation());
  parts.insert(parts.end(), manifest.session().begin(), manifest.session().end());
  return absl::StrJoin(parts, "; ");
}

std::string StatementsPerSecondCell(uint64_t statements, double seconds) {
  if (statements == 0 || seconds <= 0) return "-";
  return absl::StrFormat("%.0f", static_cast<double>(statements) / seconds);
}

std::string FormatMs(double ms) {
  if (ms >= 100) return absl::StrFormat("%.1f", ms);
  if (ms >= 1) return absl::StrFormat("%.3f", ms);
  return absl::StrFormat("%.4f", ms);
}

const v1::PercentileBasis* BasisOf(const v1::LatencySummary& summary, double percentile) {
  for (const v1::PercentileBasis& b : summary.percentiles()) {
    if (std::fabs(b.percentile() - percentile) < 1e-9) return &b;
  }
  return nullptr;
}

bool RestsOnFewSamples(const v1::LatencySummary& summary, double percentile) {
  const v1::PercentileBasis* b = BasisOf(summary, percentile);
  return b != nullptr && b->few_samples();
}

std::string FormatPercentileMs(const v1::LatencySummary& summary, double percentile,
                               double value_ms) {
  return absl::StrCat(FormatMs(value_ms), RestsOnFewSamples(summary, percentile) ? "*" : "");
}

std::string FormatInterval(const v1::PercentileBasis& b) {
  return absl::StrCat(
      "[", FormatMs(b.ci_low_ms()), ", ",
      b.ci_high_open() ? absl::StrCat(">", FormatMs(b.ci_high_ms())) : FormatMs(b.ci_high_ms()),
      "]");
}

namespace {

// Three significant figures in plain notation: "123", "12.3", "1.23", "0.00123"; trailing zeros
// of a fraction dropped only where `trim` ("0.0006", not "0.000600").
std::string ThreeFigures(double v, bool trim) {
  if (v == 0 || !std::isfinite(v)) return "0";
  const double a = std::fabs(v);
  // Decimals for three significant figures, from the rounded magnitude (9.996 is "10.0").
  int exponent = static_cast<int>(std::floor(std::log10(a)));
  if (std::round(a / std::pow(10.0, exponent - 2)) >= 1000) ++exponent;
  const int decimals = std::clamp(2 - exponent, 0, 12);
  std::string out = absl::StrFormat("%.*f", decimals, v);
  if (trim && out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

std::string WithThousands(double v) {
  const double rounded = std::round(std::fabs(v));
  std::string digits = absl::StrFormat("%.0f", rounded);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 && rounded > 0 ? "-" + out : out;
}

}  // namespace

std::string FormatLatency(double ms) {
  const double a = std::fabs(ms);
  if (a == 0 || !std::isfinite(ms)) return "0 ms";
  if (a < 0.0009995) return absl::StrCat(ThreeFigures(ms * 1e6, false), " ns");
  if (a < 0.9995) return absl::StrCat(ThreeFigures(ms * 1e3, false), " µs");
  if (a < 999.5) return absl::StrCat(ThreeFigures(ms, false), " ms");
  return absl::StrCat(ThreeFigures(ms / 1e3, false), " s");
}

std::string FormatBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a < 999.5)
    return absl::StrCat(a < 1 ? ThreeFigures(bytes, true) : WithThousands(bytes), " B");
  const char* const units[] = {"kB", "MB", "GB", "TB", "PB"};
  double value = bytes / 1000;
  size_t unit = 0;
  while (std::fabs(value) >= 999.5 && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  return absl::StrCat(ThreeFigures(value, false), " ", units[unit]);
}

std::string FormatCount(double value) {
  if (!std::isfinite(value)) return "0";
  if (std::fabs(value) >= 999.5) return WithThousands(value);
  return ThreeFigures(value, true);
}

std::string FormatPerSecond(double per_second) {
  return absl::StrCat(FormatCount(per_second), "/s");
}

std::string FormatSpan(double seconds) {
  // Below a second as a plan writes it, without trailing zeros: "50 ms", "2.5 ms", "800 µs".
  if (seconds * 1e3 < 0.9995) return absl::StrCat(ThreeFigures(seconds * 1e6, true), " µs");
  if (seconds < 0.9995) return absl::StrCat(ThreeFigures(seconds * 1e3, true), " ms");
  const double whole = std::round(seconds);
  if (std::fabs(seconds - whole) > 1e-6 || whole < 60 || static_cast<int64_t>(whole) % 60 != 0) {
    return absl::StrCat(ThreeFigures(seconds, true), " s");
  }
  const int64_t minutes = static_cast<int64_t>(whole) / 60;
  if (minutes < 60) return absl::StrCat(minutes, " min");
  return minutes % 60 == 0 ? absl::StrCat(minutes / 60, " h")
                           : absl::StrCat(minutes / 60, " h ", minutes % 60, " min");
}

}  // namespace dbload
