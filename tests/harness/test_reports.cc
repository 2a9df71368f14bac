#include "tests/harness/test_reports.h"

#include "absl/status/status.h"
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

}  // namespace dbload::testing
