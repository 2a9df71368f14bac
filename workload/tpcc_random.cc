#include "workload/tpcc_random.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"

namespace dbload::tpcc {

namespace {

constexpr std::string_view kSyllables[] = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                           "ESE", "ANTI",  "CALLY", "ATION", "EING"};
constexpr std::string_view kAlphanumeric =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr std::string_view kOriginal = "ORIGINAL";

std::string RandomString(Random& random, std::string_view alphabet, int min_length,
                         int max_length) {
  const int64_t length = random.Uniform(min_length, max_length);
  std::string out(static_cast<size_t>(length), ' ');
  for (char& c : out) {
    c = alphabet[static_cast<size_t>(random.Uniform(0, static_cast<int64_t>(alphabet.size()) - 1))];
  }
  return out;
}

}  // namespace

int64_t NURand(Random& random, int64_t a, int64_t x, int64_t y, int64_t c) {
  return (((random.Uniform(0, a) | random.Uniform(x, y)) + c) % (y - x + 1)) + x;
}

NURandConstants LoadConstants(Random& random) {
  return {.last_name = random.Uniform(0, kLastNameA),
          .customer_id = random.Uniform(0, kCustomerIdA),
          .item_id = random.Uniform(0, kItemIdA)};
}

bool IsValidRunLastNameConstant(int64_t run, int64_t load) {
  const int64_t delta = run > load ? run - load : load - run;
  return run >= 0 && run <= kLastNameA && delta >= 65 && delta <= 119 && delta != 96 &&
         delta != 112;
}

NURandConstants RunConstants(const NURandConstants& load, Random& random) {
  std::vector<int64_t> valid;
  for (int64_t c = 0; c <= kLastNameA; ++c) {
    if (IsValidRunLastNameConstant(c, load.last_name)) valid.push_back(c);
  }
  // Every C_LOAD in 0 … 255 has some: c + 65 … c + 119 or c − 119 … c − 65 lies in range.
  return {.last_name =
              valid[static_cast<size_t>(random.Uniform(0, static_cast<int64_t>(valid.size()) - 1))],
          .customer_id = random.Uniform(0, kCustomerIdA),
          .item_id = random.Uniform(0, kItemIdA)};
}

std::string LastName(int64_t number) {
  std::string name;
  for (const int64_t digit : {number / 100 % 10, number / 10 % 10, number % 10}) {
    name.append(kSyllables[static_cast<size_t>(digit)]);
  }
  return name;
}

std::string AlphanumericString(Random& random, int min_length, int max_length) {
  return RandomString(random, kAlphanumeric, min_length, max_length);
}

std::string NumericString(Random& random, int min_length, int max_length) {
  return RandomString(random, kAlphanumeric.substr(52), min_length, max_length);
}

std::string ZipCode(Random& random) { return NumericString(random, 4, 4) + "11111"; }

std::string ItemData(Random& random, bool original) {
  std::string data = AlphanumericString(random, 26, 50);
  if (original) {
    const int64_t at = random.Uniform(0, static_cast<int64_t>(data.size() - kOriginal.size()));
    data.replace(static_cast<size_t>(at), kOriginal.size(), kOriginal);
  }
  return data;
}

bool IsOriginal(Random& random) { return random.Uniform(1, 100) <= 10; }

std::string DecimalText(int64_t units, int scale) {
  int64_t one = 1;
  for (int i = 0; i < scale; ++i) one *= 10;
  const int64_t magnitude = units < 0 ? -units : units;
  return absl::StrFormat("%s%d.%0*d", units < 0 ? "-" : "", magnitude / one, scale,
                         magnitude % one);
}

std::vector<int32_t> Permutation(Random& random, int32_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 1);
  // Fisher–Yates: every order equally likely.
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(values[static_cast<size_t>(i)], values[static_cast<size_t>(random.Uniform(0, i))]);
  }
  return values;
}

}  // namespace dbload::tpcc
