#include "workload/sql_text.h"

#include "absl/strings/str_cat.h"

namespace dbload {
namespace {

constexpr std::string_view kRepeatMark = "{repeat}";

// Calls on_code(position) for every character of `sql` that is SQL code (outside quotes and
// comments).
template <typename OnCode>
void ForEachCodeCharacter(std::string_view sql, OnCode on_code) {
  char quote = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: still right
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else {
      on_code(i);
    }
  }
}

}  // namespace

int CountPlaceholders(std::string_view sql) {
  int count = 0;
  ForEachCodeCharacter(sql, [&](size_t i) { count += sql[i] == '?'; });
  return count;
}

int CountRepeatMarks(std::string_view sql) {
  int count = 0;
  ForEachCodeCharacter(sql, [&](size_t i) { count += sql.substr(i).starts_with(kRepeatMark); });
  return count;
}

std::string NumberPlaceholders(std::string_view sql, int first) {
  std::string out;
  size_t copied = 0;
  int next = first;
  ForEachCodeCharacter(sql, [&](size_t i) {
    if (sql[i] != '?') return;
    out.append(sql.substr(copied, i - copied));
    absl::StrAppend(&out, "$", next++);
    copied = i + 1;
  });
  out.append(sql.substr(copied));
  return out;
}

std::string ReplacePlaceholders(std::string_view sql, bool numbered,
                                const std::function<std::string(int)>& replace) {
  std::string out;
  size_t copied = 0;
  int next = 0;
  const auto digit = [&](size_t i) { return i < sql.size() && sql[i] >= '0' && sql[i] <= '9'; };
  ForEachCodeCharacter(sql, [&](size_t i) {
    if (i < copied) return;  // inside a `$N` already replaced
    if (!numbered && sql[i] == '?') {
      out.append(sql.substr(copied, i - copied));
      out.append(replace(next++));
      copied = i + 1;
    } else if (numbered && sql[i] == '$' && digit(i + 1)) {
      size_t end = i + 1;
      int number = 0;
      for (; digit(end) && number < 100'000; ++end) number = number * 10 + (sql[end] - '0');
      out.append(sql.substr(copied, i - copied));
      out.append(replace(number - 1));
      copied = end;
    }
  });
  out.append(sql.substr(copied));
  return out;
}

std::string ExpandRepeat(std::string_view sql, std::string_view unit, int count) {
  size_t at = std::string_view::npos;
  ForEachCodeCharacter(sql, [&](size_t i) {
    if (at == std::string_view::npos && sql.substr(i).starts_with(kRepeatMark)) at = i;
  });
  if (at == std::string_view::npos) return std::string(sql);
  std::string out(sql.substr(0, at));
  for (int r = 0; r < count; ++r) {
    if (r > 0) out.append(", ");
    out.append(unit);
  }
  out.append(sql.substr(at + kRepeatMark.size()));
  return out;
}

}  // namespace dbload
