#include "coordinator/run_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/run_outcome.h"
#include "report/report.h"

namespace dbload {

namespace {

// Run ids are the coordinator's own ("run-7-1a2b3c4d"); anything else could escape the directory.
bool IsSafeRunId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RunStore>> RunStore::Open(const std::string& dir) {
  const std::string runs = (std::filesystem::path(dir) / "runs").string();
  std::error_code error;
  std::filesystem::create_directories(runs, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--state-dir ", dir, ": cannot create ", runs, ": ", error.message()));
  }
  return std::unique_ptr<RunStore>(new RunStore(runs));
}

absl::Status RunStore::Save(const v1::RunReport& report) const {
  if (!IsSafeRunId(report.run_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot save a report of run '", report.run_id(), "': not a run id"));
  }
  return SaveReportJson((std::filesystem::path(runs_dir_) / (report.run_id() + ".json")).string(),
                        report);
}

absl::StatusOr<std::vector<v1::RunReport>> RunStore::LoadAll() const {
  std::vector<v1::RunReport> reports;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(runs_dir_, error)) {
    const std::filesystem::path& path = entry.path();
    if (path.extension() != ".json") continue;  // e.g. RUN.json.tmp of an unfinished write
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    if (!in) return absl::DataLossError(absl::StrCat(path.string(), ": cannot read"));
    absl::StatusOr<v1::RunReport> report = ParseReportJson(content.str());
    if (!report.ok()) {
      return absl::DataLossError(absl::StrCat(path.string(), ": ", report.status().message()));
    }
    if (report->run_id() != path.stem().string()) {
      return absl::DataLossError(absl::StrCat(path.string(), ": holds the report of run '",
                                              report->run_id(), "', not of ",
                                              path.stem().string()));
    }
    reports.push_back(*std::move(report));
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot list ", runs_dir_, ": ", error.message()));
  }
  return reports;
}

void MarkInterruptedByRestart(v1::RunReport& report) {
  if (RunStateOf(report) != v1::RUN_STATE_RUNNING) return;
  SetRunState(report, v1::RUN_STATE_INTERRUPTED);
  report.set_end_reason_kind(v1::END_REASON_INTERRUPTED);
  report.set_end_reason(
      absl::StrFormat("interrupted: the coordinator stopped during the run; these are the numbers "
                      "saved after %.1f s",
                      report.total_duration_s()));
}

}  // namespace dbload
