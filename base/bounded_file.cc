#include "base/bounded_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dbload {

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes,
                                            std::string_view what_text) {
  const absl::string_view what(what_text.data(), what_text.size());
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", what, " ", path));
  std::string content;
  char buffer[16 * 1024];
  while (content.size() <= max_bytes) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", what, " ", path));
    }
    if (got == 0) break;
    const size_t keep = std::min(static_cast<size_t>(got), max_bytes + 1 - content.size());
    content.append(buffer, keep);
  }
  close(fd);
  return content;
}

}  // namespace dbload
