#ifndef DBLOAD_BASE_FIELD_ERROR_H_
#define DBLOAD_BASE_FIELD_ERROR_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"

namespace dbload {

// An error about one field of a plan, found by code that knows nothing of YAML (a workload that
// does not know an option, say). The field's dotted path travels as a payload, so that the plan
// parser can put the file, line and column in front of the message.
inline constexpr char kFieldPayload[] = "dbload.field";

inline absl::Status FieldError(std::string_view field_path, std::string_view message) {
  absl::Status status = absl::InvalidArgumentError(std::string(message));
  status.SetPayload(kFieldPayload, absl::Cord(std::string(field_path)));
  return status;
}

inline std::optional<std::string> FieldOf(const absl::Status& status) {
  auto payload = status.GetPayload(kFieldPayload);  // an absl::optional here
  if (!payload) return std::nullopt;
  return std::string(*payload);
}

}  // namespace dbload

#endif  // DBLOAD_BASE_FIELD_ERROR_H_
