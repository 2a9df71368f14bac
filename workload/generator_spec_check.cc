// CheckGeneratorSpec (param_generator.h): what a generator spec must hold before
// MakeParamGenerator builds its draw, and before the parser accepts it with line numbers.

#include <cmath>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "workload/param_generator.h"

namespace dbload {
namespace {

using v1::Generator;

constexpr uint32_t kMaxStringLength = 1u << 20;
// Timestamps are written with four-digit years: 0001-01-01 … 9999-12-31.
constexpr int64_t kFirstUnixSecond = -62135596800;  // 0001-01-01 00:00:00
constexpr int64_t kEndUnixSecond = 253402300800;    // 10000-01-01 00:00:00
constexpr int kSpecialMaxIter = 1000;               // each draw sums `iter` uniforms

// ---------------------------------------------------------------------------------------------
// Spec checks.

absl::Status CheckRange(const char* kind, int64_t min, int64_t max) {
  if (min > max) {
    return FieldError(absl::StrCat(kind, ".max"),
                      absl::StrCat("must be >= min (", min, "), got ", max));
  }
  return absl::OkStatus();
}

absl::Status CheckFinite(std::string_view path, double value) {
  if (!std::isfinite(value)) {
    return FieldError(path, absl::StrCat("must be a finite number, got ", value));
  }
  return absl::OkStatus();
}

absl::Status CheckRandomString(const Generator::RandomString& spec) {
  if (spec.min_length() > spec.max_length()) {
    return FieldError(
        "random_string.max_length",
        absl::StrCat("must be >= min_length (", spec.min_length(), "), got ", spec.max_length()));
  }
  if (spec.max_length() > kMaxStringLength) {
    return FieldError(
        "random_string.max_length",
        absl::StrCat("must be at most ", kMaxStringLength, " (1 MiB), got ", spec.max_length()));
  }
  // Characters are drawn byte by byte: a multi-byte UTF-8 character would be split into bytes
  // that are no text at all, and the database would refuse them.
  for (const char c : spec.alphabet()) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return FieldError("random_string.alphabet",
                        "must be ASCII: characters are drawn byte by byte");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTimestamp(const Generator::Timestamp& spec) {
  if (spec.span_s() <= 0) {
    return FieldError("timestamp.span_s", absl::StrCat("must be > 0, got ", spec.span_s()));
  }
  if (spec.from_unix_s() < kFirstUnixSecond || spec.from_unix_s() >= kEndUnixSecond) {
    return FieldError(
        "timestamp.from_unix_s",
        absl::StrCat("must be within the years 0001 to 9999, got ", spec.from_unix_s()));
  }
  if (spec.span_s() > kEndUnixSecond - spec.from_unix_s()) {
    return FieldError("timestamp.span_s",
                      absl::StrCat("must end by the year 9999 (span at most ",
                                   kEndUnixSecond - spec.from_unix_s(), "), got ", spec.span_s()));
  }
  return absl::OkStatus();
}

absl::Status CheckChoice(const Generator::Choice& spec) {
  if (spec.values().empty()) return FieldError("choice.values", "must not be empty");
  if (spec.weights().empty()) return absl::OkStatus();
  if (spec.weights_size() != spec.values_size()) {
    return FieldError("choice.weights",
                      absl::StrCat("must be empty or one per value (", spec.values_size(),
                                   "), got ", spec.weights_size()));
  }
  double total = 0;
  for (int i = 0; i < spec.weights_size(); ++i) {
    const double weight = spec.weights(i);
    if (!(weight >= 0) || !std::isfinite(weight)) {
      return FieldError(absl::StrCat("choice.weights.", i),
                        absl::StrCat("must be a finite number >= 0, got ", weight));
    }
    total += weight;
  }
  if (!(total > 0) || !std::isfinite(total)) {
    return FieldError("choice.weights", "must have a positive, finite sum");
  }
  return absl::OkStatus();
}

absl::Status CheckSpecial(const Generator::SysbenchSpecial& spec) {
  if (absl::Status status = CheckRange("special", spec.min(), spec.max()); !status.ok()) {
    return status;
  }
  if (spec.pct() < 0 || spec.pct() > 100) {
    return FieldError("special.pct",
                      absl::StrCat("must be from 1 to 100 (0: 1), got ", spec.pct()));
  }
  // 100 would leave no draws for the gaussian part and divide by zero in sysbench's formula.
  if (spec.res() < 0 || spec.res() > 99) {
    return FieldError("special.res",
                      absl::StrCat("must be from 1 to 99 (0: 75), got ", spec.res()));
  }
  if (spec.iter() < 0 || spec.iter() > kSpecialMaxIter) {
    return FieldError("special.iter", absl::StrCat("must be from 1 to ", kSpecialMaxIter,
                                                   " (0: 12), got ", spec.iter()));
  }
  return absl::OkStatus();
}

absl::Status CheckDecimal(const Generator::Decimal& spec) {
  if (absl::Status status = CheckFinite("decimal.min", spec.min()); !status.ok()) return status;
  if (absl::Status status = CheckFinite("decimal.max", spec.max()); !status.ok()) return status;
  if (spec.min() > spec.max()) {
    return FieldError("decimal.max",
                      absl::StrCat("must be >= min (", spec.min(), "), got ", spec.max()));
  }
  if (spec.scale() > 18) {
    return FieldError("decimal.scale", absl::StrCat("must be at most 18, got ", spec.scale()));
  }
  return absl::OkStatus();
}

absl::Status CheckKind(const Generator& spec) {
  switch (spec.kind_case()) {
    case Generator::kUniform:
      return CheckRange("uniform", spec.uniform().min(), spec.uniform().max());
    case Generator::kZipf: {
      const Generator::Zipf& zipf = spec.zipf();
      if (absl::Status status = CheckRange("zipf", zipf.min(), zipf.max()); !status.ok()) {
        return status;
      }
      if (!(zipf.exponent() > 0) || !std::isfinite(zipf.exponent())) {
        return FieldError("zipf.exponent",
                          absl::StrCat("must be a finite number > 0, got ", zipf.exponent()));
      }
      return absl::OkStatus();
    }
    case Generator::kGaussian: {
      const Generator::Gaussian& gaussian = spec.gaussian();
      if (absl::Status status = CheckFinite("gaussian.mean", gaussian.mean()); !status.ok()) {
        return status;
      }
      if (!(gaussian.stddev() >= 0) || !std::isfinite(gaussian.stddev())) {
        return FieldError("gaussian.stddev",
                          absl::StrCat("must be a finite number >= 0, got ", gaussian.stddev()));
      }
      return CheckRange("gaussian", gaussian.min(), gaussian.max());
    }
    case Generator::kSequence:
      return absl::OkStatus();
    case Generator::kPattern:
      if (spec.pattern().pattern().empty()) {
        return FieldError("pattern.pattern", "must not be empty");
      }
      return absl::OkStatus();
    case Generator::kRandomString:
      return CheckRandomString(spec.random_string());
    case Generator::kTimestamp:
      return CheckTimestamp(spec.timestamp());
    case Generator::kNow:
      return absl::OkStatus();
    case Generator::kChoice:
      return CheckChoice(spec.choice());
    case Generator::kSample: {
      const v1::DialectSql& sql = spec.sample().sql();
      if (sql.postgresql().empty() && sql.mysql().empty() && sql.any().empty()) {
        return FieldError("sample.sql", "must not be empty");
      }
      return absl::OkStatus();
    }
    case Generator::kCaptured:
      if (spec.captured().empty()) {
        return FieldError("captured", "must name a value captured by an earlier statement");
      }
      return absl::OkStatus();
    case Generator::kVariable:
      if (spec.variable().empty()) {
        return FieldError("variable", "must name a variable of the query type's let:");
      }
      return absl::OkStatus();
    case Generator::kConstant:
    case Generator::kRow:
      return absl::OkStatus();
    case Generator::kSpecial:
      return CheckSpecial(spec.special());
    case Generator::kDecimal:
      return CheckDecimal(spec.decimal());
    case Generator::KIND_NOT_SET:
      break;
  }
  // No field to point at: the parser then names the generator itself.
  return absl::InvalidArgumentError(
      "no generator kind: set one of uniform, zipf, gaussian, sequence, pattern, random_string, "
      "timestamp, now, choice, sample, captured, variable, constant, row, special, decimal");
}

}  // namespace

absl::Status CheckGeneratorSpec(const Generator& spec) {
  if (absl::Status status = CheckKind(spec); !status.ok()) return status;
  if (!(spec.null_fraction() >= 0 && spec.null_fraction() <= 1)) {
    return FieldError("null_fraction",
                      absl::StrCat("must be from 0 to 1, got ", spec.null_fraction()));
  }
  return absl::OkStatus();
}

}  // namespace dbload
