#include "base/nearest_name.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace dbload {
namespace {

// Optimal string alignment distance: edits, plus swapping two neighbours ("hots" -> "host").
int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<absl::string_view> Nearest(absl::string_view name,
                                         const std::vector<absl::string_view>& candidates) {
  const std::string lowered = absl::AsciiStrToLower(name);
  // One typo in a short word, two in a longer one; beyond that a suggestion is a guess.
  const int allowed = std::clamp(static_cast<int>(name.size()) / 3, 1, 2);
  std::optional<absl::string_view> best;
  int best_distance = allowed + 1;
  for (absl::string_view candidate : candidates) {
    const size_t longer = std::max(lowered.size(), candidate.size());
    const size_t shorter = std::min(lowered.size(), candidate.size());
    if (longer - shorter > static_cast<size_t>(allowed)) continue;  // cannot be close enough
    const int distance = EditDistance(lowered, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::optional<std::string> NearestName(std::string_view name,
                                       const std::vector<std::string>& candidates) {
  std::vector<absl::string_view> views(candidates.begin(), candidates.end());
  std::optional<absl::string_view> nearest =
      Nearest(absl::string_view(name.data(), name.size()), views);
  if (!nearest) return std::nullopt;
  return std::string(*nearest);
}

}  // namespace dbload
