#ifndef DBLOAD_BASE_QUOTE_H_
#define DBLOAD_BASE_QUOTE_H_

// How messages show the user's text (a value from a file, a flag, an environment variable's
// name): the plan's checks on the proto, and the YAML readers (yaml/yaml_text.h), quote it alike.

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dbload {

// User text in a message: quoted, escaped and shortened, so that a stray binary blob or a
// megabyte-long line cannot make the message unreadable.
inline std::string Quote(absl::string_view text) {
  constexpr size_t kShown = 64;
  if (text.size() <= kShown) return absl::StrCat("\"", absl::Utf8SafeCHexEscape(text), "\"");
  return absl::StrCat("\"", absl::Utf8SafeCHexEscape(text.substr(0, kShown)), "\"...");
}

}  // namespace dbload

#endif  // DBLOAD_BASE_QUOTE_H_
