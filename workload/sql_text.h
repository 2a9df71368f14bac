#ifndef DBLOAD_WORKLOAD_SQL_TEXT_H_
#define DBLOAD_WORKLOAD_SQL_TEXT_H_

#include <functional>
#include <string>
#include <string_view>

namespace dbload {

// Workload SQL is written with `?` placeholders for both dialects. These helpers find them the
// way the servers' parsers would: not inside 'strings', "identifiers", `identifiers` or
// -- comments.

int CountPlaceholders(std::string_view sql);

// How often `{repeat}` (a statement's repeated part) occurs, outside strings and comments.
int CountRepeatMarks(std::string_view sql);

// `?` → $1, $2 … (PostgreSQL's placeholders), numbering from `first`.
std::string NumberPlaceholders(std::string_view sql, int first = 1);

// Replaces every placeholder outside strings and comments by replace(n): `?` (n = 0, 1, … in
// order) or, with `numbered`, PostgreSQL's `$N` (n = N - 1).
std::string ReplacePlaceholders(std::string_view sql, bool numbered,
                                const std::function<std::string(int)>& replace);

// Replaces the one `{repeat}` with `unit` written `count` times, separated by ", ".
std::string ExpandRepeat(std::string_view sql, std::string_view unit, int count);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_SQL_TEXT_H_
