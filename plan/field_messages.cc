#include "plan/field_messages.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/quote.h"

namespace dbload {
namespace {

// A key as it appears inside a dotted path: as written when it is a plain short name.
std::string PathComponent(absl::string_view key) {
  const bool plain =
      !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  return plain ? std::string(key) : Quote(key);
}

}  // namespace

std::string FieldErrorText(const FieldLocation& where, absl::string_view field_path,
                           absl::string_view message) {
  if (where.from_override) {
    return absl::StrCat(where.text, ": --set ", field_path, ": ", message);
  }
  if (field_path.empty()) return absl::StrCat(where.text, ": ", message);
  return absl::StrCat(where.text, ": ", field_path, ": ", message);
}

std::string JoinFieldPath(absl::string_view parent, absl::string_view key) {
  if (parent.empty()) return PathComponent(key);
  return absl::StrCat(parent, ".", PathComponent(key));
}

std::string IntegerRange(uint64_t min, uint64_t max) {
  return absl::StrCat("an integer from ", min, " to ", max);
}

}  // namespace dbload
