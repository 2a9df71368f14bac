// libFuzzer target for the report reader (`dbload report FILE.json`): any bytes give a report or
// an error, never a crash; an accepted report renders as text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<dbload::v1::RunReport> report = dbload::ParseReportJson(json);
  if (report.ok()) (void)dbload::RenderReportText(*report);
  return 0;
}
