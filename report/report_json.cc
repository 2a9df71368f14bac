// The report's file form: versioned JSON, read back, and written atomically.
#include "report/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "proto/run_outcome.h"

namespace dbload {

std::string RenderReportJson(const v1::RunReport& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  // Cannot fail for a message without Any fields.
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  return json;
}

absl::StatusOr<v1::RunReport> ParseReportJson(const std::string& json) {
  v1::RunReport report;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &report);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a dbload report: ", status.ToString()));
  }
  if (report.format_version() != kReportFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("report format version ",
                                                   report.format_version(), " is not supported"));
  }
  FillEnumsFromText(report);  // a report written before the enums: from its words
  return report;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot write ", temporary, ": ", strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = strerror(errno);
      close(fd);
      unlink(temporary.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write ", temporary, ": ", why));
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = fsync(fd) == 0;
  const std::string sync_error = synced ? "" : strerror(errno);
  close(fd);
  if (!synced) {
    unlink(temporary.c_str());
    return absl::UnavailableError(absl::StrCat("cannot flush ", temporary, ": ", sync_error));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = strerror(errno);
    unlink(temporary.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", why));
  }
  return absl::OkStatus();
}

absl::Status SaveReportJson(const std::string& path, const v1::RunReport& report) {
  return WriteFileAtomically(path, RenderReportJson(report));
}

}  // namespace dbload
