#include "workload/param_generator.h"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace dbload {
namespace {

using v1::Generator;

constexpr std::string_view kDefaultAlphabet =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
// YYYY-MM-DD HH:MM:SS.ffffff: CheckGeneratorSpec keeps years within 1 … 9999.
constexpr int kTimestampLength = 26;

// ---------------------------------------------------------------------------------------------
// Random integers. Random::Uniform goes through a double, which skips integers beyond 2^53 and
// overflows on ranges wider than int64; these use the high half of a 128-bit product instead
// (Lemire), whose bias of at most n / 2^64 is far below anything a load test can observe.

uint64_t Below(Random& random, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(random.Next()) * n) >> 64);
}

// Uniform in [low, high], the whole int64 range included.
int64_t Between(Random& random, int64_t low, int64_t high) {
  const uint64_t width = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t offset =
      width == std::numeric_limits<uint64_t>::max() ? random.Next() : Below(random, width + 1);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + offset);
}

// Reads the decimal digits of one 64-bit random fraction, 16 at a time: a pattern such as
// sysbench's `c` column holds 110 digits, and one draw per digit would dominate its cost. The
// 16th digit is uniform to within 10^16 / 2^64 (5e-4); later ones would not be.
void FillDigits(Random& random, char* out, size_t count) {
  while (count > 0) {
    uint64_t fraction = random.Next();
    const size_t batch = std::min<size_t>(count, 16);
    for (size_t i = 0; i < batch; ++i) {
      const unsigned __int128 product = static_cast<unsigned __int128>(fraction) * 10;
      out[i] = static_cast<char>('0' + static_cast<int>(product >> 64));
      fraction = static_cast<uint64_t>(product);
    }
    out += batch;
    count -= batch;
  }
}

// Appends `value` in decimal; to_chars neither allocates nor looks at the locale.
void AppendInt(std::string& text, int64_t value) {
  char digits[24];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value);
  text.append(digits, end.ptr);
}

int64_t FloorDiv(int64_t value, int64_t divisor) {
  const int64_t quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

void PutDigits(char* out, int64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

// "YYYY-MM-DD HH:MM:SS.ffffff" (UTC) into out[0 … 25], for years 1 … 9999. By hand rather than
// with absl::FormatTime, which returns a new std::string on every call.
void FormatTimestamp(int64_t unix_micros, char* out) {
  const int64_t seconds = FloorDiv(unix_micros, 1'000'000);
  const int64_t micros = unix_micros - seconds * 1'000'000;
  const int64_t days = FloorDiv(seconds, 86'400);
  const int64_t second_of_day = seconds - days * 86'400;
  // Days since 1970-01-01 to the proleptic Gregorian calendar, counting in 400-year eras that
  // start on March 1st so that the leap day falls at the end of each year (H. Hinnant's
  // civil_from_days).
  const int64_t shifted = days + 719'468;
  const int64_t era = FloorDiv(shifted, 146'097);
  const int64_t day_of_era = shifted - era * 146'097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36'524 - day_of_era / 146'096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_from_march = (5 * day_of_year + 2) / 153;
  const int64_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
  const int64_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  PutDigits(out, year, 4);
  out[4] = '-';
  PutDigits(out + 5, month, 2);
  out[7] = '-';
  PutDigits(out + 8, day, 2);
  out[10] = ' ';
  PutDigits(out + 11, second_of_day / 3600, 2);
  out[13] = ':';
  PutDigits(out + 14, second_of_day / 60 % 60, 2);
  out[16] = ':';
  PutDigits(out + 17, second_of_day % 60, 2);
  out[19] = '.';
  PutDigits(out + 20, micros, 6);
}

db::Value TimestampValue(int64_t unix_micros, std::string& text) {
  text.resize(kTimestampLength);
  FormatTimestamp(unix_micros, text.data());
  return std::string_view(text);
}

// ---------------------------------------------------------------------------------------------
// One class per kind, with the NULL mix-in and the random stream around the draw, so that
// Next() is the only virtual call and the draw itself is inlined into it.

template <typename Draw>
class GeneratorOf final : public ParamGenerator {
 public:
  GeneratorOf(Draw draw, uint64_t seed, double null_fraction)
      : draw_(std::move(draw)), random_(seed), null_fraction_(null_fraction) {}

  db::Value Next(const GeneratorCall& call, std::string& text) override {
    // No draw for the NULL decision without NULLs: adding `null_fraction: 0` to a spec leaves
    // its values as they were.
    if (null_fraction_ > 0 && random_.NextDouble() < null_fraction_) return std::monostate{};
    return draw_(random_, call, text);
  }

 private:
  Draw draw_;
  Random random_;
  const double null_fraction_;
};

struct UniformDraw {
  int64_t min;
  int64_t max;
  db::Value operator()(Random& random, const GeneratorCall&, std::string&) const {
    return Between(random, min, max);
  }
};

// Zipf over ranks 1 … n by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-
// inversion to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996):
// draw x by inverting the integral H of the hat function h(x) = x^-s, round it to the nearest
// rank k, and keep k with probability h(k) / (H(k + 1/2) - H(k - 1/2)). A few floating-point
// operations per draw whatever n is, where a table of cumulative weights would take n entries
// (4 GB for a 500-million-row table).
class ZipfDraw {
 public:
  ZipfDraw(int64_t min, uint64_t last_offset, double exponent)
      : min_(min),
        last_offset_(last_offset),
        n_(static_cast<double>(last_offset) + 1),
        exponent_(exponent),
        one_minus_s_(1 - exponent) {
    // Rank 1 would take [H(1/2), H(3/2)); starting at H(3/2) - h(1) instead gives it
    // exactly h(1) = 1 of area, so it is always accepted.
    h_integral_first_ = HatIntegral(1.5) - 1;
    h_integral_end_ = HatIntegral(n_ + 0.5);
    // Theorem 2 of the paper: k - x <= this accepts without evaluating H and h again.
    shortcut_ = 2 - HatIntegralInverse(HatIntegral(2.5) - Hat(2));
  }

  db::Value operator()(Random& random, const GeneratorCall&, std::string&) const {
    for (;;) {
      const double u =
          h_integral_end_ + random.NextDouble() * (h_integral_first_ - h_integral_end_);
      const double x = HatIntegralInverse(u);
      // Rounding errors can push x a little outside [1/2, n + 1/2].
      const double rank = std::clamp(std::floor(x + 0.5), 1.0, n_);
      if (rank - x <= shortcut_ || u >= HatIntegral(rank + 0.5) - Hat(rank)) {
        const uint64_t offset = std::min(static_cast<uint64_t>(rank) - 1, last_offset_);
        return static_cast<int64_t>(static_cast<uint64_t>(min_) + offset);
      }
    }
  }

 private:
  // (e^x - 1) / x and log(1 + x) / x, by their Taylor series near 0 where the quotient loses
  // its digits: exponents close to 1 are the common case.
  static double ExpM1Over(double x) {
    return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
  }
  static double Log1pOver(double x) {
    return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
  }
  // h(x) = x^-s
  double Hat(double x) const { return std::exp(-exponent_ * std::log(x)); }
  // H(x) = (x^(1-s) - 1) / (1-s), which tends to log(x) as s -> 1 (the paper's form without
  // the -1 has no limit there, which is why it excludes s = 1).
  double HatIntegral(double x) const {
    const double log_x = std::log(x);
    return ExpM1Over(one_minus_s_ * log_x) * log_x;
  }
  double HatIntegralInverse(double y) const {
    // Below -1 only through rounding; log1p would return NaN.
    const double t = std::max(y * one_minus_s_, -1.0);
    return std::exp(Log1pOver(t) * y);
  }

  int64_t min_;
  uint64_t last_offset_;  // n - 1, so that a range of all int64 values does not wrap to 0
  double n_;
  double exponent_;
  double one_minus_s_;
  double h_integral_first_ = 0;
  double h_integral_end_ = 0;
  double shortcut_ = 0;
};

// Marsaglia's polar method: Box-Muller without the sine and cosine, two normals per accepted
// pair, the second kept for the next call.
class GaussianDraw {
 public:
  GaussianDraw(double mean, double stddev, int64_t min, int64_t max)
      : mean_(mean), stddev_(stddev), min_(min), max_(max) {}

  db::Value operator()(Random& random, const GeneratorCall&, std::string&) {
    const double value = mean_ + stddev_ * Normal(random);
    // Clamped as a double first: llround of a value beyond int64 is undefined.
    if (!(value > static_cast<double>(min_))) return min_;
    if (value >= static_cast<double>(max_)) return max_;
    return std::clamp<int64_t>(std::llround(value), min_, max_);
  }

 private:
  double Normal(Random& random) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0;
    double v = 0;
    double q = 0;
    do {
      u = 2 * random.NextDouble() - 1;
      v = 2 * random.NextDouble() - 1;
      q = u * u + v * v;
    } while (q >= 1 || q == 0);
    const double scale = std::sqrt(-2 * std::log(q) / q);
    spare_ = v * scale;
    has_spare_ = true;
    return u * scale;
  }

  double mean_;
  double stddev_;
  int64_t min_;
  int64_t max_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// start + slot + k × slots: every worker of the run owns one residue class, so no two produce
// the same number without talking to each other.
class SequenceCounter {
 public:
  SequenceCounter(int64_t start, const GeneratorPlace& place)
      : next_(static_cast<uint64_t>(start) + place.slot_index), step_(place.slot_count) {}
  int64_t Take() {
    const uint64_t value = next_;
    next_ += step_;  // unsigned: wraps instead of overflowing after 2^64 / slots values
    return static_cast<int64_t>(value);
  }

 private:
  uint64_t next_;
  uint64_t step_;
};

struct SequenceDraw {
  SequenceCounter counter;
  db::Value operator()(Random&, const GeneratorCall&, std::string&) { return counter.Take(); }
};

// The pattern cut once into pieces, so that a call only copies text and writes numbers.
class PatternDraw {
 public:
  PatternDraw(std::string pattern, SequenceCounter counter)
      : pattern_(std::move(pattern)), counter_(counter) {
    const std::string_view text = pattern_;
    size_t at = 0;
    auto add = [&](Piece piece, size_t offset, size_t length) {
      // Runs of text and of `{#}` are merged: sysbench's `c` template is 110 `{#}`s in 10 runs.
      if (!segments_.empty() && segments_.back().piece == piece &&
          (piece == Piece::kDigits ||
           (piece == Piece::kText &&
            segments_.back().offset + segments_.back().length == offset))) {
        segments_.back().length += length;
        return;
      }
      segments_.push_back({piece, offset, length});
    };
    while (at < text.size()) {
      const std::string_view rest = text.substr(at);
      if (rest.starts_with("{seq}")) {
        add(Piece::kSeq, 0, 0);
        at += 5;
      } else if (rest.starts_with("{row}")) {
        add(Piece::kRow, 0, 0);
        at += 5;
      } else if (rest.starts_with("{#}")) {
        add(Piece::kDigits, 0, 1);
        at += 3;
      } else {
        add(Piece::kText, at, 1);
        ++at;
      }
    }
  }

  db::Value operator()(Random& random, const GeneratorCall& call, std::string& text) {
    text.clear();  // keeps the capacity
    for (const Segment& segment : segments_) {
      switch (segment.piece) {
        case Piece::kText:
          text.append(pattern_, segment.offset, segment.length);
          break;
        case Piece::kSeq:
          AppendInt(text, counter_.Take());
          break;
        case Piece::kRow:
          AppendInt(text, call.row);
          break;
        case Piece::kDigits: {
          const size_t at = text.size();
          text.resize(at + segment.length);
          FillDigits(random, text.data() + at, segment.length);
          break;
        }
      }
    }
    return std::string_view(text);
  }

 private:
  enum class Piece : uint8_t { kText, kSeq, kRow, kDigits };
  struct Segment {
    Piece piece;
    size_t offset;  // kText: where in pattern_
    size_t length;  // kText: bytes; kDigits: digits
  };

  std::string pattern_;
  SequenceCounter counter_;
  std::vector<Segment> segments_;
};

class RandomStringDraw {
 public:
  RandomStringDraw(uint32_t min_length, uint32_t max_length, std::string alphabet)
      : min_length_(min_length), max_length_(max_length), alphabet_(std::move(alphabet)) {}

  db::Value operator()(Random& random, const GeneratorCall&, std::string& text) const {
    const size_t length = static_cast<size_t>(Between(random, min_length_, max_length_));
    text.resize(length);
    const uint64_t size = alphabet_.size();
    // Two characters per draw, one from each 32-bit half (bias at most size / 2^32).
    size_t i = 0;
    for (; i + 1 < length; i += 2) {
      const uint64_t bits = random.Next();
      text[i] = alphabet_[((bits >> 32) * size) >> 32];
      text[i + 1] = alphabet_[((bits & 0xffffffffu) * size) >> 32];
    }
    if (i < length) text[i] = alphabet_[Below(random, size)];
    return std::string_view(text);
  }

 private:
  int64_t min_length_;
  int64_t max_length_;
  std::string alphabet_;
};

struct TimestampDraw {
  int64_t from_micros;
  uint64_t span_micros;
  db::Value operator()(Random& random, const GeneratorCall&, std::string& text) const {
    return TimestampValue(from_micros + static_cast<int64_t>(Below(random, span_micros)), text);
  }
};

struct NowDraw {
  db::Value operator()(Random&, const GeneratorCall&, std::string& text) const {
    // The vDSO makes this a read of shared memory, not a system call.
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return TimestampValue(static_cast<int64_t>(now.tv_sec) * 1'000'000 + now.tv_nsec / 1000, text);
  }
};

class ChoiceDraw {
 public:
  ChoiceDraw(std::vector<std::string> values,
             const google::protobuf::RepeatedField<double>& weights)
      : values_(std::move(values)) {
    double total = 0;
    for (int i = 0; i < weights.size(); ++i) {
      total += weights[i];
      cumulative_.push_back(total);
      if (weights[i] > 0) last_weighted_ = static_cast<size_t>(i);
    }
  }

  db::Value operator()(Random& random, const GeneratorCall&, std::string&) const {
    if (cumulative_.empty()) return std::string_view(values_[Below(random, values_.size())]);
    const double point = random.NextDouble() * cumulative_.back();
    // The first value whose cumulative weight passes the point; a weight of 0 is never picked,
    // also when rounding puts the point at the very end.
    const size_t index = static_cast<size_t>(
        std::upper_bound(cumulative_.begin(), cumulative_.end(), point) - cumulative_.begin());
    return std::string_view(values_[std::min(index, last_weighted_)]);
  }

 private:
  std::vector<std::string> values_;
  std::vector<double> cumulative_;  // empty: equal weights
  size_t last_weighted_ = 0;
};

struct ConstantDraw {
  std::string value;
  db::Value operator()(Random&, const GeneratorCall&, std::string&) const {
    return std::string_view(value);
  }
};

struct RowDraw {
  db::Value operator()(Random&, const GeneratorCall& call, std::string&) const { return call.row; }
};

struct SpecialDraw {
  int64_t min;
  int64_t max;
  int pct;
  int res;
  int iter;
  db::Value operator()(Random& random, const GeneratorCall&, std::string&) const {
    return SysbenchSpecial(random, min, max, pct, res, iter);
  }
};

class DecimalDraw {
 public:
  DecimalDraw(double min, double max, int scale) : min_(min), max_(max), scale_(scale) {}

  db::Value operator()(Random& random, const GeneratorCall&, std::string& text) const {
    const double t = random.NextDouble();
    // Weighted sum rather than min + t × (max - min), which overflows to infinity for ranges
    // wider than the largest double.
    const double value = std::clamp(min_ * (1 - t) + max_ * t, min_, max_);
    // 309 digits before the point at most (DBL_MAX), a sign, the point and 18 decimals.
    char digits[352];
    const std::to_chars_result end =
        std::to_chars(digits, digits + sizeof(digits), value, std::chars_format::fixed, scale_);
    const char* first = digits;
    // "-0.00" (a small negative value, rounded) is written without its sign.
    if (digits[0] == '-' &&
        std::all_of(digits + 1, end.ptr, [](char c) { return c == '0' || c == '.'; })) {
      ++first;
    }
    text.assign(first, static_cast<size_t>(end.ptr - first));  // within the capacity once warmed up
    return std::string_view(text);
  }

 private:
  double min_;
  double max_;
  int scale_;
};

template <typename Draw>
std::unique_ptr<ParamGenerator> Make(Draw draw, const Generator& spec,
                                     const GeneratorPlace& place) {
  return std::make_unique<GeneratorOf<Draw>>(std::move(draw), place.seed, spec.null_fraction());
}

}  // namespace

int64_t SysbenchSpecial(Random& random, int64_t low, int64_t high, int pct, int res, int iter) {
  const double span = static_cast<double>(high) - static_cast<double>(low);
  // One draw decides the branch and, in the hot spot, the value. sysbench widens the range by
  // 100 / (100 - res) and sends the draws that land inside the original width to the gaussian
  // part: 100 - res % of them.
  const double draw = random.NextDouble();
  double offset = 0;
  if (draw * span * 100.0 / (100 - res) < span) {
    double sum = 0;
    for (int i = 0; i < iter; ++i) sum += random.NextDouble();
    offset = sum * span / iter;
  } else {
    // The hot spot reuses the branch's draw, as sysbench 1.0.20 does, although that draw is
    // known to lie in the upper res % of [0, 1): values fill only the upper part of the central
    // window. Kept, so that the key distribution is sysbench's.
    const double hot_width = span * pct / 100.0;
    offset = draw * (hot_width + 1) + span / 2 - span * pct / 200.0;
  }
  // Truncated as sysbench's conversion to an integer does; the clamp only guards rounding.
  const uint64_t width = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t whole = offset <= 0 ? 0
                         : offset >= static_cast<double>(width)
                             ? width
                             : std::min(static_cast<uint64_t>(offset), width);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + whole);
}

absl::StatusOr<std::unique_ptr<ParamGenerator>> MakeParamGenerator(const Generator& spec,
                                                                   const GeneratorPlace& place) {
  if (absl::Status status = CheckGeneratorSpec(spec); !status.ok()) {
    // Built in code rather than parsed: put the field in the message, as the parser would.
    if (const std::optional<std::string> field = FieldOf(status)) {
      absl::Status named = absl::InvalidArgumentError(absl::StrCat(*field, ": ", status.message()));
      named.SetPayload(kFieldPayload, absl::Cord(*field));
      return named;
    }
    return status;
  }
  if (place.slot_count == 0 || place.slot_index >= place.slot_count) {
    return absl::InvalidArgumentError(absl::StrCat("generator slot ", place.slot_index,
                                                   " is not within 0 … ", place.slot_count, "-1"));
  }
  switch (spec.kind_case()) {
    case Generator::kUniform:
      return Make(UniformDraw{spec.uniform().min(), spec.uniform().max()}, spec, place);
    case Generator::kZipf: {
      const Generator::Zipf& zipf = spec.zipf();
      return Make(ZipfDraw(zipf.min(),
                           static_cast<uint64_t>(zipf.max()) - static_cast<uint64_t>(zipf.min()),
                           zipf.exponent()),
                  spec, place);
    }
    case Generator::kGaussian: {
      const Generator::Gaussian& gaussian = spec.gaussian();
      return Make(GaussianDraw(gaussian.mean(), gaussian.stddev(), gaussian.min(), gaussian.max()),
                  spec, place);
    }
    case Generator::kSequence:
      return Make(SequenceDraw{SequenceCounter(spec.sequence().start(), place)}, spec, place);
    case Generator::kPattern:
      return Make(
          PatternDraw(spec.pattern().pattern(), SequenceCounter(spec.pattern().start(), place)),
          spec, place);
    case Generator::kRandomString: {
      const Generator::RandomString& string = spec.random_string();
      return Make(RandomStringDraw(string.min_length(), string.max_length(),
                                   string.alphabet().empty() ? std::string(kDefaultAlphabet)
                                                             : string.alphabet()),
                  spec, place);
    }
    case Generator::kTimestamp:
      return Make(TimestampDraw{spec.timestamp().from_unix_s() * 1'000'000,
                                static_cast<uint64_t>(spec.timestamp().span_s()) * 1'000'000},
                  spec, place);
    case Generator::kNow:
      return Make(NowDraw{}, spec, place);
    case Generator::kChoice:
      return Make(ChoiceDraw({spec.choice().values().begin(), spec.choice().values().end()},
                             spec.choice().weights()),
                  spec, place);
    case Generator::kConstant:
      return Make(ConstantDraw{spec.constant()}, spec, place);
    case Generator::kRow:
      return Make(RowDraw{}, spec, place);
    case Generator::kSpecial: {
      const Generator::SysbenchSpecial& special = spec.special();
      return Make(SpecialDraw{special.min(), special.max(), special.pct() == 0 ? 1 : special.pct(),
                              special.res() == 0 ? 75 : special.res(),
                              special.iter() == 0 ? 12 : special.iter()},
                  spec, place);
    }
    case Generator::kDecimal:
      return Make(DecimalDraw(spec.decimal().min(), spec.decimal().max(),
                              static_cast<int>(spec.decimal().scale())),
                  spec, place);
    case Generator::kCaptured:
    case Generator::kVariable:
      return absl::InvalidArgumentError(
          "generator kinds 'captured' and 'variable' are made by the engine (from the "
          "transaction's values), not by MakeParamGenerator");
    case Generator::kSample:
      return absl::InvalidArgumentError(
          "generator kind 'sample' is made by the engine (from values read before the run), "
          "not by MakeParamGenerator");
    case Generator::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("no generator kind");
}

}  // namespace dbload
