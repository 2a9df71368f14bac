#include "plan/target_secrets.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/bounded_file.h"
#include "base/quote.h"

namespace dbload {
namespace {

using dbload::v1::Target;

// A password is a line, not a document; the bound keeps a mistaken path (/dev/zero) harmless.
constexpr size_t kMaxPasswordBytes = 64 * 1024;

}  // namespace

absl::StatusOr<std::string> ReadTargetPassword(const Target& target) {
  if (!target.password_file().empty() && !target.password_env().empty()) {
    return absl::InvalidArgumentError("target: set either password_file or password_env, not both");
  }
  if (!target.password_file().empty()) {
    // The status of a failed read names the file and the reason, never the content.
    absl::StatusOr<std::string> content =
        ReadBoundedFile(target.password_file(), kMaxPasswordBytes, "target.password_file");
    if (!content.ok()) return content.status();
    if (content->size() > kMaxPasswordBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("target.password_file ", target.password_file(), " is larger than ",
                       kMaxPasswordBytes, " bytes; it should hold just the password"));
    }
    // Editors end files with a newline; passwords do not end with one.
    while (!content->empty() && (content->back() == '\n' || content->back() == '\r')) {
      content->pop_back();
    }
    return content;
  }
  if (!target.password_env().empty()) {
    const char* value = std::getenv(target.password_env().c_str());
    if (value == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("target.password_env: environment variable ", Quote(target.password_env()),
                       " is not set"));
    }
    return std::string(value);
  }
  return std::string();
}

}  // namespace dbload
