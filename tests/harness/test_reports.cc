#include "tests/harness/test_reports.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/harness/test_servers.h"

namespace dbload::testing {

absl::StatusOr<dbload::v1::RunReport> LoadReport(const std::string& path) {
  absl::StatusOr<std::string> json = ReadFile(path);
  if (!json.ok()) return json.status();
  return ParseReportJson(*json);
}

dbload::v1::RunReport ReadReport(const std::string& path) {
  absl::StatusOr<dbload::v1::RunReport> report = LoadReport(path);
  EXPECT_TRUE(report.ok()) << path << ": " << report.status();
  return report.ok() ? *std::move(report) : dbload::v1::RunReport();
}

std::string PgProbeTrail(const dbload::v1::RunReport& report) {
  std::string trail = "the probe's readings:";
  for (const dbload::v1::ProbeSample& sample : report.probe_samples()) {
    absl::StrAppend(&trail, "\n  at ", sample.elapsed_s(), " s:");
    for (const char* name : {"xact_commit", "xact_rollback", "connections", "dbload_sessions"}) {
      auto value = sample.values().find(absl::StrCat("postgresql/", name));
      if (value != sample.values().end()) absl::StrAppend(&trail, " ", name, " ", value->second);
    }
  }
  return trail;
}

}  // namespace dbload::testing
