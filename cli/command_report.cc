// `dbload report` (of a saved JSON file, or of a coordinator's run) and `dbload compare`.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_csv.h"
#include "report/report_html.h"

namespace dbload::cli {
namespace {

// The report in the format asked for (checked by FormatOf).
std::string RenderReportAs(const v1::RunReport& report, const std::string& format) {
  if (format == "json") return RenderReportJson(report);
  if (format == "csv") return RenderReportCsv(report);
  if (format == "html") return RenderReportHtml(report);
  return RenderReportText(report);
}

const std::vector<std::string> kReportFormats = {"text", "json", "csv", "html"};

int ReportFileCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("report", args, {"--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("report", *flags, kReportFormats);
  if (!format.ok()) return Fail(format.status());
  if (flags->positional.size() != 1)
    return Fail(absl::InvalidArgumentError(
        "dbload report: give one JSON report file, or [RUN] --coordinator ADDR"));
  absl::StatusOr<ReportFile> file = LoadReportFile(flags->positional[0]);
  if (!file.ok())
    return Fail(absl::Status(file.status().code(),
                             absl::StrCat("dbload report: ", file.status().message())));
  return Emit("report", *flags, RenderReportAs(file->report, *format));
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args) {
  const bool remote = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "--coordinator" || absl::StartsWith(arg, "--coordinator=");
  });
  if (!remote) return ReportFileCommand(args);
  absl::StatusOr<Flags> flags =
      ParseFlags("report", args, {"--coordinator", "--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("report", *flags, kReportFormats);
  if (!format.ok()) return Fail(format.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("report", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  v1::GetReportRequest request;
  request.set_run_id(ref->run_id);
  v1::RunReport report;
  const grpc::Status got = ref->stub->GetReport(CallContext().get(), request, &report);
  if (!got.ok()) return Fail(RunCallError(*ref, got));
  return Emit("report", *flags, RenderReportAs(report, *format));
}

// `dbload compare A.json B.json […]`: the first report is the baseline.
int CompareCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("compare", args, {"--format", "--output"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<std::string> format = FormatOf("compare", *flags, {"text", "markdown", "html"});
  if (!format.ok()) return Fail(format.status());
  if (flags->positional.size() < 2) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "dbload compare: give at least 2 JSON report files (the first is the baseline), got ",
        flags->positional.size())));
  }
  std::vector<ReportFile> reports;
  for (const std::string& path : flags->positional) {
    absl::StatusOr<ReportFile> file = LoadReportFile(path);
    if (!file.ok()) {
      return Fail(absl::Status(file.status().code(),
                               absl::StrCat("dbload compare: ", file.status().message())));
    }
    reports.push_back(*std::move(file));
  }
  absl::StatusOr<Comparison> comparison = CompareReports(reports);
  if (!comparison.ok()) {
    return Fail(absl::Status(comparison.status().code(),
                             absl::StrCat("dbload compare: ", comparison.status().message())));
  }
  if (*format == "markdown") return Emit("compare", *flags, RenderComparisonMarkdown(*comparison));
  if (*format == "html") return Emit("compare", *flags, RenderComparisonHtml(*comparison, reports));
  return Emit("compare", *flags, RenderComparisonText(*comparison));
}

}  // namespace dbload::cli
