#include "workload/param_generator.h"

#include <time.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "base/field_error.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

v1::Generator Spec(const std::string& text) {
  v1::Generator spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

std::unique_ptr<ParamGenerator> Make(const std::string& text, GeneratorPlace place = {.seed = 1}) {
  absl::StatusOr<std::unique_ptr<ParamGenerator>> generator = MakeParamGenerator(Spec(text), place);
  EXPECT_TRUE(generator.ok()) << generator.status();
  return generator.ok() ? *std::move(generator) : nullptr;
}

int64_t Int(const db::Value& value) {
  EXPECT_TRUE(std::holds_alternative<int64_t>(value));
  return std::holds_alternative<int64_t>(value) ? std::get<int64_t>(value) : 0;
}

std::string Text(const db::Value& value) {
  EXPECT_TRUE(std::holds_alternative<std::string_view>(value));
  return std::holds_alternative<std::string_view>(value)
             ? std::string(std::get<std::string_view>(value))
             : std::string();
}

// Draws `count` values of an integer generator.
std::vector<int64_t> Ints(ParamGenerator& generator, int count) {
  std::vector<int64_t> values;
  std::string text;
  for (int i = 0; i < count; ++i) values.push_back(Int(generator.Next({}, text)));
  return values;
}

// "YYYY-MM-DD HH:MM:SS.ffffff" back to Unix microseconds, or nullopt if it is not that shape.
std::optional<int64_t> ParseTimestamp(const std::string& text) {
  if (text.size() != 26) return std::nullopt;
  tm parts{};
  int micros = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d.%6d%c", &parts.tm_year, &parts.tm_mon,
                  &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &micros,
                  &tail) != 7) {
    return std::nullopt;
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&parts)) * 1'000'000 + micros;
}

TEST(ParamGeneratorTest, UniformStaysInRangeAndHitsEveryValue) {
  auto generator = Make("uniform { min: -3 max: 4 }");
  std::set<int64_t> seen;
  for (int64_t value : Ints(*generator, 10'000)) {
    ASSERT_GE(value, -3);
    ASSERT_LE(value, 4);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(ParamGeneratorTest, UniformTakesTheWholeInt64Range) {
  auto generator = Make("uniform { min: -9223372036854775808 max: 9223372036854775807 }");
  int negative = 0;
  for (int64_t value : Ints(*generator, 1000)) negative += value < 0;
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);
  auto single = Make("uniform { min: 7 max: 7 }");
  for (int64_t value : Ints(*single, 100)) ASSERT_EQ(value, 7);
}

TEST(ParamGeneratorTest, ZipfFrequenciesMatchTheory) {
  constexpr int kDraws = 1'000'000;
  constexpr double kExponent = 1.1;
  auto generator = Make("zipf { min: 1 max: 1000 exponent: 1.1 }");
  std::map<int64_t, int> counts;
  std::string text;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t value = Int(generator->Next({}, text));
    ASSERT_GE(value, 1);
    ASSERT_LE(value, 1000);
    ++counts[value];
  }
  double normalizer = 0;
  for (int k = 1; k <= 1000; ++k) normalizer += std::pow(k, -kExponent);
  for (int k = 1; k <= 5; ++k) {
    const double expected = std::pow(k, -kExponent) / normalizer;
    const double observed = static_cast<double>(counts[k]) / kDraws;
    EXPECT_NEAR(observed, expected, expected * 0.03) << "rank " << k;
  }
  // The tail is drawn too.
  EXPECT_GT(counts[1000], 0);
}

TEST(ParamGeneratorTest, ZipfWithExponentOneAndAnOffsetRange) {
  constexpr int kDraws = 200'000;
  auto generator = Make("zipf { min: 101 max: 200 exponent: 1 }");
  double normalizer = 0;
  for (int k = 1; k <= 100; ++k) normalizer += 1.0 / k;
  int first = 0;
  int second = 0;
  for (int64_t value : Ints(*generator, kDraws)) {
    ASSERT_GE(value, 101);
    ASSERT_LE(value, 200);
    first += value == 101;
    second += value == 102;
  }
  EXPECT_NEAR(static_cast<double>(first) / kDraws, 1 / normalizer, 0.03 / normalizer);
  EXPECT_NEAR(static_cast<double>(second) / kDraws, 0.5 / normalizer, 0.03 * 0.5 / normalizer);
}

TEST(ParamGeneratorTest, ZipfOverHalfABillionValues) {
  constexpr int kDraws = 200'000;
  constexpr double kExponent = 0.99;
  constexpr int64_t kN = 500'000'000;
  auto generator = Make("zipf { min: 1 max: 500000000 exponent: 0.99 }");
  int ones = 0;
  int64_t largest = 0;
  for (int64_t value : Ints(*generator, kDraws)) {
    ASSERT_GE(value, 1);
    ASSERT_LE(value, kN);
    ones += value == 1;
    largest = std::max(largest, value);
  }
  // The normalizer: the first million terms summed, the rest by the integral of x^-s.
  constexpr int kExact = 1'000'000;
  double normalizer = 0;
  for (int k = 1; k <= kExact; ++k) normalizer += std::pow(k, -kExponent);
  normalizer +=
      (std::pow(kN + 0.5, 1 - kExponent) - std::pow(kExact + 0.5, 1 - kExponent)) / (1 - kExponent);
  EXPECT_NEAR(static_cast<double>(ones) / kDraws, 1 / normalizer, 0.05 / normalizer);
  EXPECT_GT(largest, 10'000'000);  // the far tail carries real weight at s < 1
}

TEST(ParamGeneratorTest, GaussianHasItsMeanAndStddev) {
  constexpr int kDraws = 200'000;
  auto generator = Make("gaussian { mean: 1000 stddev: 50 min: 0 max: 2000 }");
  double sum = 0;
  double squares = 0;
  for (int64_t value : Ints(*generator, kDraws)) {
    sum += static_cast<double>(value);
    squares += static_cast<double>(value) * static_cast<double>(value);
  }
  const double mean = sum / kDraws;
  const double stddev = std::sqrt(squares / kDraws - mean * mean);
  EXPECT_NEAR(mean, 1000, 1);
  EXPECT_NEAR(stddev, 50, 1);
}

TEST(ParamGeneratorTest, GaussianIsClampedIntoItsRange) {
  auto generator = Make("gaussian { mean: 0 stddev: 100 min: -10 max: 10 }");
  int at_ends = 0;
  for (int64_t value : Ints(*generator, 10'000)) {
    ASSERT_GE(value, -10);
    ASSERT_LE(value, 10);
    at_ends += value == -10 || value == 10;
  }
  EXPECT_GT(at_ends, 8'000);  // P(|z| > 0.1) ≈ 0.92
  auto fixed = Make("gaussian { mean: 3.4 stddev: 0 min: 0 max: 10 }");
  for (int64_t value : Ints(*fixed, 10)) EXPECT_EQ(value, 3);
}

TEST(ParamGeneratorTest, SequencesOfThreeSlotsAreDisjointAndCoverTheRange) {
  std::set<int64_t> all;
  for (uint32_t slot = 0; slot < 3; ++slot) {
    auto generator =
        Make("sequence { start: 100 }", {.seed = slot, .slot_index = slot, .slot_count = 3});
    const std::vector<int64_t> values = Ints(*generator, 10);
    EXPECT_EQ(values[0], 100 + slot);
    EXPECT_EQ(values[1], 103 + slot);
    for (int64_t value : values) EXPECT_TRUE(all.insert(value).second) << value;
  }
  EXPECT_EQ(all.size(), 30u);
  EXPECT_EQ(*all.begin(), 100);
  EXPECT_EQ(*all.rbegin(), 129);
}

TEST(ParamGeneratorTest, PatternReplacesSeqRowAndDigits) {
  auto generator = Make(R"(pattern { pattern: "id-{seq}/row-{row}/{#}{#}{#}-x{other}{" start: 5 })",
                        {.seed = 3, .slot_index = 1, .slot_count = 2});
  std::string text;
  const std::string first = Text(generator->Next({.row = 42}, text));
  EXPECT_THAT(first, MatchesRegex("id-6/row-42/[0-9][0-9][0-9]-x\\{other\\}\\{"));
  const std::string second = Text(generator->Next({.row = -7}, text));
  EXPECT_THAT(second, MatchesRegex("id-8/row--7/[0-9][0-9][0-9]-x\\{other\\}\\{"));
}

TEST(ParamGeneratorTest, PatternDigitsAreUniform) {
  // sysbench's `c` column: ten groups of eleven digits.
  std::string pattern;
  for (int group = 0; group < 10; ++group) {
    if (group > 0) pattern += "-";
    for (int digit = 0; digit < 11; ++digit) pattern += "{#}";
  }
  auto generator = Make("pattern { pattern: \"" + pattern + "\" }");
  std::map<char, int> counts;
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    const std::string value = Text(generator->Next({}, text));
    ASSERT_EQ(value.size(), 119u);
    for (size_t at = 11; at < value.size(); at += 12) ASSERT_EQ(value[at], '-');
    for (char c : value) {
      if (c != '-') ++counts[c];
    }
  }
  ASSERT_EQ(counts.size(), 10u);
  for (const auto& [digit, count] : counts) {
    EXPECT_NEAR(count, 11'000, 500) << digit;  // 110 000 digits, sd ≈ 100
  }
}

TEST(ParamGeneratorTest, TextGeneratorsStopGrowingTheirBuffer) {
  for (const std::string spec : {R"(pattern { pattern: "user-{seq}-{#}{#}{#}{#}" })",
                                 "random_string { min_length: 1 max_length: 64 }",
                                 "timestamp { from_unix_s: 1700000000 span_s: 1000 }", "now {}",
                                 "decimal { min: -1000 max: 1000 scale: 4 }"}) {
    auto generator = Make(spec);
    std::string text;
    for (int i = 0; i < 1000; ++i) generator->Next({.row = i}, text);
    const char* warmed = text.data();
    const size_t capacity = text.capacity();
    for (int i = 0; i < 1000; ++i) {
      generator->Next({.row = i}, text);
      ASSERT_EQ(text.data(), warmed) << spec;
      ASSERT_EQ(text.capacity(), capacity) << spec;
    }
  }
}

TEST(ParamGeneratorTest, RandomStringLengthsAndAlphabet) {
  auto generator = Make(R"(random_string { min_length: 3 max_length: 6 alphabet: "ab" })");
  std::set<size_t> lengths;
  std::set<char> chars;
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    const std::string value = Text(generator->Next({}, text));
    lengths.insert(value.size());
    chars.insert(value.begin(), value.end());
  }
  EXPECT_EQ(lengths, (std::set<size_t>{3, 4, 5, 6}));
  EXPECT_EQ(chars, (std::set<char>{'a', 'b'}));

  auto alphanumeric = Make("random_string { min_length: 20 max_length: 20 }");
  std::set<char> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string value = Text(alphanumeric->Next({}, text));
    ASSERT_THAT(value, MatchesRegex("[a-zA-Z0-9]{20}"));
    seen.insert(value.begin(), value.end());
  }
  EXPECT_EQ(seen.size(), 62u);
}

TEST(ParamGeneratorTest, TimestampsStayWithinTheirSpanAndParse) {
  constexpr int64_t kFrom = 1'704'067'200;  // 2024-01-01 00:00:00 UTC
  constexpr int64_t kSpan = 730 * 86'400;
  auto generator = Make("timestamp { from_unix_s: 1704067200 span_s: 63072000 }");
  std::string text;
  int64_t earliest = std::numeric_limits<int64_t>::max();
  int64_t latest = std::numeric_limits<int64_t>::min();
  std::set<int64_t> micros;
  for (int i = 0; i < 10'000; ++i) {
    const std::string value = Text(generator->Next({}, text));
    const std::optional<int64_t> parsed = ParseTimestamp(value);
    ASSERT_TRUE(parsed.has_value()) << value;
    ASSERT_GE(*parsed, kFrom * 1'000'000) << value;
    ASSERT_LT(*parsed, (kFrom + kSpan) * 1'000'000) << value;
    earliest = std::min(earliest, *parsed);
    latest = std::max(latest, *parsed);
    micros.insert(*parsed % 1'000'000);
  }
  EXPECT_LT(earliest, (kFrom + kSpan / 100) * 1'000'000);
  EXPECT_GT(latest, (kFrom + kSpan - kSpan / 100) * 1'000'000);
  EXPECT_GT(micros.size(), 9'000u);  // microseconds are random too
}

TEST(ParamGeneratorTest, TimestampsAreWrittenAsTheCalendarHasThem) {
  const std::map<int64_t, std::string> days = {
      {0, "1970-01-01 00:00:0"},
      {-1, "1969-12-31 23:59:5"},
      {951'782'400, "2000-02-29 00:00:0"},
      {4'107'542'400, "2100-03-01 00:00:0"},
      {-62'135'596'800, "0001-01-01 00:00:0"},
      {253'402'300'799, "9999-12-31 23:59:5"},
  };
  for (const auto& [from, prefix] : days) {
    auto generator = Make("timestamp { from_unix_s: " + std::to_string(from) + " span_s: 1 }");
    std::string text;
    const std::string value = Text(generator->Next({}, text));
    EXPECT_THAT(value, MatchesRegex(prefix + "[0-9]\\.[0-9]{6}")) << from;
  }
}

TEST(ParamGeneratorTest, NowIsTheClientsClock) {
  auto generator = Make("now {}");
  std::string text;
  // The generator's clock, CLOCK_REALTIME: time() reads the coarse clock, which can still be in
  // the second before (CI saw the generator 1 s "after" it).
  const auto seconds_now = [] {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<int64_t>(now.tv_sec);
  };
  const int64_t before = seconds_now();
  const std::optional<int64_t> parsed = ParseTimestamp(Text(generator->Next({}, text)));
  const int64_t after = seconds_now();
  ASSERT_TRUE(parsed.has_value()) << text;
  EXPECT_GE(*parsed / 1'000'000, before);
  EXPECT_LE(*parsed / 1'000'000, after);
}

TEST(ParamGeneratorTest, ChoiceFollowsItsWeights) {
  constexpr int kDraws = 100'000;
  auto generator = Make(R"(choice { values: [ "a", "b", "c" ] weights: [ 1, 0, 3 ] })");
  std::map<std::string, int> counts;
  std::string text;
  for (int i = 0; i < kDraws; ++i) ++counts[Text(generator->Next({}, text))];
  EXPECT_NEAR(counts["a"], kDraws / 4, kDraws / 100);
  EXPECT_EQ(counts["b"], 0);
  EXPECT_NEAR(counts["c"], kDraws * 3 / 4, kDraws / 100);

  auto equal = Make(R"(choice { values: [ "x", "y", "z" ] })");
  counts.clear();
  for (int i = 0; i < kDraws; ++i) ++counts[Text(equal->Next({}, text))];
  for (const char* value : {"x", "y", "z"}) EXPECT_NEAR(counts[value], kDraws / 3, kDraws / 100);
}

TEST(ParamGeneratorTest, ConstantAndRow) {
  auto constant = Make(R"(constant: "hello")");
  std::string text;
  EXPECT_EQ(Text(constant->Next({}, text)), "hello");
  auto row = Make("row: true");
  EXPECT_EQ(Int(row->Next({.row = 12345}, text)), 12345);
}

TEST(ParamGeneratorTest, NullFractionMixesInNulls) {
  constexpr int kDraws = 100'000;
  auto generator = Make("uniform { min: 1 max: 10 } null_fraction: 0.3");
  std::string text;
  int nulls = 0;
  for (int i = 0; i < kDraws; ++i) {
    const db::Value value = generator->Next({}, text);
    if (std::holds_alternative<std::monostate>(value)) {
      ++nulls;
    } else {
      ASSERT_GE(Int(value), 1);
    }
  }
  EXPECT_NEAR(nulls, kDraws * 3 / 10, kDraws / 100);

  auto always = Make(R"(constant: "x" null_fraction: 1)");
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(std::holds_alternative<std::monostate>(always->Next({}, text)));
  }
}

TEST(ParamGeneratorTest, DecimalsHaveExactlyTheirScale) {
  auto generator = Make("decimal { min: -5 max: 5 scale: 2 }");
  std::string text;
  bool negative = false;
  for (int i = 0; i < 10'000; ++i) {
    const std::string value = Text(generator->Next({}, text));
    ASSERT_THAT(value, MatchesRegex("-?[0-9]\\.[0-9][0-9]")) << value;
    ASSERT_NE(value, "-0.00");
    const double number = std::stod(value);
    ASSERT_GE(number, -5);
    ASSERT_LE(number, 5);
    negative |= number < 0;
  }
  EXPECT_TRUE(negative);

  auto whole = Make("decimal { min: 100 max: 999 scale: 0 }");
  EXPECT_THAT(Text(whole->Next({}, text)), MatchesRegex("[0-9]{3}"));
  auto fixed = Make("decimal { min: 1.5 max: 1.5 scale: 3 }");
  EXPECT_EQ(Text(fixed->Next({}, text)), "1.500");
  auto fine = Make("decimal { min: 0 max: 1 scale: 18 }");
  EXPECT_THAT(Text(fine->Next({}, text)), MatchesRegex("[01]\\.[0-9]{18}"));
}

TEST(ParamGeneratorTest, SpecialHasSysbenchsHotSpot) {
  constexpr int kDraws = 100'000;
  // Defaults: 75 % of the draws uniformly in the central 1 %, [4950, 5050] here, in its upper
  // three quarters as in sysbench 1.0.20.
  auto generator = Make("special { min: 1 max: 10000 }");
  int hot = 0;
  int in_lower_quarter_of_window = 0;
  for (int64_t value : Ints(*generator, kDraws)) {
    ASSERT_GE(value, 1);
    ASSERT_LE(value, 10'000);
    hot += value >= 4950 && value <= 5050;
    in_lower_quarter_of_window += value >= 4950 && value < 4970;
  }
  EXPECT_GE(hot, kDraws * 75 / 100);
  EXPECT_LE(hot, kDraws * 78 / 100);  // plus the gaussian part's share of the window
  EXPECT_LT(in_lower_quarter_of_window, kDraws / 100);

  // pct 100 and res 50: half of the draws are uniform over (most of) the range.
  Random random(5);
  for (int i = 0; i < 10'000; ++i) {
    const int64_t value = SysbenchSpecial(random, -100, 100, 100, 50, 12);
    ASSERT_GE(value, -100);
    ASSERT_LE(value, 100);
  }
  Random single(6);
  EXPECT_EQ(SysbenchSpecial(single, 9, 9, 1, 75, 12), 9);
}

TEST(ParamGeneratorTest, SameSeedSameValues) {
  const std::string spec = "zipf { min: 1 max: 1000000 exponent: 0.8 } null_fraction: 0.1";
  auto first = Make(spec, {.seed = 7});
  auto again = Make(spec, {.seed = 7});
  auto other = Make(spec, {.seed = 8});
  std::string a, b, c;
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const db::Value x = first->Next({}, a);
    ASSERT_EQ(x, again->Next({}, b));
    differ += x != other->Next({}, c);
  }
  EXPECT_GT(differ, 500);

  const std::string text_spec = "random_string { min_length: 1 max_length: 30 }";
  auto one = Make(text_spec, {.seed = 7});
  auto two = Make(text_spec, {.seed = 7});
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Text(one->Next({}, a)), Text(two->Next({}, b)));
}

struct BadSpec {
  std::string spec;
  std::string field;
  std::string message;
};

TEST(ParamGeneratorTest, CheckNamesTheFieldAndTheProblem) {
  const std::vector<BadSpec> cases = {
      {"uniform { min: 5 max: 1 }", "uniform.max", "must be >= min (5), got 1"},
      {"zipf { min: 1 max: 0 exponent: 1 }", "zipf.max", "must be >= min (1), got 0"},
      {"zipf { min: 1 max: 10 }", "zipf.exponent", "must be a finite number > 0, got 0"},
      {"zipf { min: 1 max: 10 exponent: -1 }", "zipf.exponent", "must be a finite number > 0"},
      {"gaussian { mean: 0 stddev: -1 min: 0 max: 1 }", "gaussian.stddev",
       "must be a finite number >= 0, got -1"},
      {"gaussian { mean: 0 stddev: 1 min: 2 max: 1 }", "gaussian.max", "must be >= min (2)"},
      {"gaussian { mean: inf stddev: 1 min: 0 max: 1 }", "gaussian.mean",
       "must be a finite number"},
      {"pattern { start: 1 }", "pattern.pattern", "must not be empty"},
      {"random_string { min_length: 10 max_length: 5 }", "random_string.max_length",
       "must be >= min_length (10), got 5"},
      {"random_string { max_length: 1048577 }", "random_string.max_length",
       "must be at most 1048576 (1 MiB), got 1048577"},
      {R"(random_string { max_length: 5 alphabet: "aé" })", "random_string.alphabet",
       "must be ASCII"},
      {"timestamp { from_unix_s: 0 }", "timestamp.span_s", "must be > 0, got 0"},
      {"timestamp { from_unix_s: 0 span_s: -5 }", "timestamp.span_s", "must be > 0, got -5"},
      {"timestamp { from_unix_s: 253402300800 span_s: 1 }", "timestamp.from_unix_s",
       "must be within the years 0001 to 9999"},
      {"timestamp { from_unix_s: 253402300000 span_s: 1000 }", "timestamp.span_s",
       "must end by the year 9999"},
      {"choice { }", "choice.values", "must not be empty"},
      {R"(choice { values: [ "a", "b" ] weights: [ 1 ] })", "choice.weights",
       "must be empty or one per value (2), got 1"},
      {R"(choice { values: [ "a", "b" ] weights: [ 1, -2 ] })", "choice.weights.1",
       "must be a finite number >= 0, got -2"},
      {R"(choice { values: [ "a", "b" ] weights: [ 0, 0 ] })", "choice.weights",
       "must have a positive, finite sum"},
      {"sample { consume: true }", "sample.sql", "must not be empty"},
      {R"(captured: "")", "captured", "must name a value captured"},
      {"special { min: 10 max: 1 }", "special.max", "must be >= min (10), got 1"},
      {"special { min: 1 max: 10 pct: 101 }", "special.pct", "must be from 1 to 100"},
      {"special { min: 1 max: 10 res: 100 }", "special.res", "must be from 1 to 99"},
      {"special { min: 1 max: 10 iter: -1 }", "special.iter", "must be from 1 to 1000"},
      {"decimal { min: 2 max: 1 scale: 2 }", "decimal.max", "must be >= min (2), got 1"},
      {"decimal { min: 0 max: 1 scale: 19 }", "decimal.scale", "must be at most 18, got 19"},
      {"decimal { min: -inf max: 1 }", "decimal.min", "must be a finite number"},
      {"row: true null_fraction: 1.5", "null_fraction", "must be from 0 to 1, got 1.5"},
      {"row: true null_fraction: -0.1", "null_fraction", "must be from 0 to 1, got -0.1"},
  };
  for (const BadSpec& bad : cases) {
    const absl::Status status = CheckGeneratorSpec(Spec(bad.spec));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad.spec;
    EXPECT_EQ(FieldOf(status), bad.field) << bad.spec;
    EXPECT_THAT(status.message(), HasSubstr(bad.message)) << bad.spec;
    // MakeParamGenerator refuses the same specs, and names the field in its message.
    const absl::Status made = MakeParamGenerator(Spec(bad.spec), {}).status();
    EXPECT_EQ(made.code(), absl::StatusCode::kInvalidArgument) << bad.spec;
    EXPECT_THAT(made.message(), HasSubstr(bad.field + ": " + bad.message)) << bad.spec;
  }
}

TEST(ParamGeneratorTest, CheckWantsAKindAndAcceptsGoodSpecs) {
  const absl::Status none = CheckGeneratorSpec(Spec("null_fraction: 0.5"));
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.message(), HasSubstr("no generator kind"));
  EXPECT_EQ(FieldOf(none), std::nullopt);

  for (const std::string good :
       {"uniform { min: 1 max: 1 }", "zipf { min: 1 max: 10 exponent: 0.5 }",
        "gaussian { mean: 5 stddev: 0 min: 0 max: 10 }", "sequence { }",
        R"(pattern { pattern: "x" })", "random_string { }",
        "timestamp { from_unix_s: -100 span_s: 100 }", "now { }", R"(choice { values: "only" })",
        R"(sample { sql { any: "SELECT 1" } })", R"(captured: "id")", R"(constant: "")",
        "row: false", "special { min: 1 max: 1 }", "decimal { scale: 18 }",
        "row: true null_fraction: 1"}) {
    EXPECT_TRUE(CheckGeneratorSpec(Spec(good)).ok()) << good;
  }
}

TEST(ParamGeneratorTest, EngineKindsAreNotMadeHere) {
  const absl::Status captured = MakeParamGenerator(Spec(R"(captured: "id")"), {}).status();
  EXPECT_EQ(captured.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(captured.message(), HasSubstr("'captured'"));
  const absl::Status sample =
      MakeParamGenerator(Spec(R"(sample { sql { any: "SELECT id FROM t" } })"), {}).status();
  EXPECT_EQ(sample.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.message(), HasSubstr("'sample'"));
}

TEST(ParamGeneratorTest, SlotOutsideTheRunIsRefused) {
  EXPECT_FALSE(MakeParamGenerator(Spec("sequence { }"), {.slot_index = 3, .slot_count = 3}).ok());
  EXPECT_FALSE(MakeParamGenerator(Spec("sequence { }"), {.slot_index = 0, .slot_count = 0}).ok());
}

}  // namespace
}  // namespace dbload
