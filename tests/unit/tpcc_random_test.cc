// TPC-C's random values (workload/tpcc_random.h) against the clauses of the specification they
// follow.

#include "workload/tpcc_random.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload::tpcc {
namespace {

TEST(TpccRandomTest, LastNamesAreTheSyllablesOfTheNumbersDigits) {
  EXPECT_EQ(LastName(371), "PRICALLYOUGHT");  // clause 4.3.2.3's example
  EXPECT_EQ(LastName(0), "BARBARBAR");
  EXPECT_EQ(LastName(999), "EINGEINGEING");
  EXPECT_EQ(LastName(40), "BARPRESBAR");
  std::set<std::string> names;
  for (int n = 0; n < 1000; ++n) names.insert(LastName(n));
  EXPECT_EQ(names.size(), 1000u);
}

// NURand stays in x … y, is far from uniform (A = 255 over 1,000 values: a value's frequency
// depends on how many bits it has set), and C only shifts it: with the same draws, NURand with
// C is NURand with 0 moved by C around the range.
TEST(TpccRandomTest, NURandIsNonUniformInItsRangeAndCShiftsIt) {
  constexpr int kDraws = 1'000'000;
  Random random(1);
  std::map<int64_t, int> counts;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t value = NURand(random, kLastNameA, 0, 999, 0);
    ASSERT_GE(value, 0);
    ASSERT_LE(value, 999);
    ++counts[value];
  }
  int most = 0, least = kDraws;
  for (int v = 0; v <= 999; ++v) {
    most = std::max(most, counts[v]);
    least = std::min(least, counts[v]);
  }
  // Uniform would give 1,000 ± about 100 each.
  EXPECT_GT(most, 3 * kDraws / 1000) << "not skewed";
  EXPECT_LT(least, kDraws / 1000 / 3);

  for (const int64_t c : {int64_t{1}, int64_t{173}, int64_t{1023}}) {
    Random plain(7), shifted(7);
    for (int i = 0; i < 1000; ++i) {
      const int64_t base = NURand(plain, kCustomerIdA, 1, 3000, 0);
      ASSERT_EQ(NURand(shifted, kCustomerIdA, 1, 3000, c), (base - 1 + c) % 3000 + 1);
    }
  }
}

// Clause 2.1.6.1: the run's C for C_LAST differs from the load's by 65 … 119, never 96 or 112.
TEST(TpccRandomTest, TheRunsLastNameConstantKeepsItsDistanceFromTheLoads) {
  EXPECT_TRUE(IsValidRunLastNameConstant(165, 100));
  EXPECT_TRUE(IsValidRunLastNameConstant(35, 100));
  EXPECT_FALSE(IsValidRunLastNameConstant(164, 100));
  EXPECT_FALSE(IsValidRunLastNameConstant(220, 100));
  EXPECT_FALSE(IsValidRunLastNameConstant(196, 100));
  EXPECT_FALSE(IsValidRunLastNameConstant(212, 100));
  EXPECT_FALSE(IsValidRunLastNameConstant(256, 150)) << "beyond A";
  Random random(3);
  std::set<int64_t> seen;
  for (int64_t load = 0; load <= kLastNameA; ++load) {
    for (int i = 0; i < 20; ++i) {
      const NURandConstants run = RunConstants({.last_name = load}, random);
      ASSERT_TRUE(IsValidRunLastNameConstant(run.last_name, load)) << load << " " << run.last_name;
      EXPECT_LE(run.customer_id, kCustomerIdA);
      EXPECT_LE(run.item_id, kItemIdA);
      seen.insert(run.last_name);
    }
  }
  EXPECT_GT(seen.size(), 200u) << "drawn from all the valid values, not a few";
  const NURandConstants load = LoadConstants(random);
  EXPECT_LE(load.last_name, kLastNameA);
}

TEST(TpccRandomTest, StringsHaveTheirLengthsAndCharacters) {
  Random random(5);
  std::set<size_t> lengths;
  for (int i = 0; i < 2000; ++i) {
    const std::string a = AlphanumericString(random, 8, 16);
    lengths.insert(a.size());
    ASSERT_TRUE(std::all_of(a.begin(), a.end(), [](char c) { return std::isalnum(c) != 0; }));
    const std::string n = NumericString(random, 4, 4);
    ASSERT_EQ(n.size(), 4u);
    ASSERT_TRUE(std::all_of(n.begin(), n.end(), [](char c) { return std::isdigit(c) != 0; }));
    const std::string zip = ZipCode(random);
    ASSERT_EQ(zip.size(), 9u);
    EXPECT_EQ(zip.substr(4), "11111");
  }
  EXPECT_EQ(lengths, (std::set<size_t>{8, 9, 10, 11, 12, 13, 14, 15, 16}));
}

// Clause 4.3.3.1: 26 … 50 characters, "ORIGINAL" somewhere in 10 % of them.
TEST(TpccRandomTest, OneItemInTenHoldsOriginalSomewhereInItsData) {
  Random random(11);
  int originals = 0;
  std::set<size_t> positions;
  constexpr int kRows = 100'000;
  for (int i = 0; i < kRows; ++i) {
    const bool original = IsOriginal(random);
    originals += original ? 1 : 0;
    const std::string data = ItemData(random, original);
    ASSERT_GE(data.size(), 26u);
    ASSERT_LE(data.size(), 50u);
    const size_t at = data.find("ORIGINAL");
    ASSERT_EQ(at != std::string::npos, original) << data;
    if (original) positions.insert(at);
  }
  EXPECT_NEAR(originals, kRows / 10, kRows / 100);
  EXPECT_EQ(*positions.begin(), 0u);
  EXPECT_EQ(*positions.rbegin(), 42u) << "the last place it fits in 50 characters";
}

TEST(TpccRandomTest, APermutationHoldsEachNumberOnceInSomeOrder) {
  Random random(13);
  const std::vector<int32_t> order = Permutation(random, 3000);
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> expected(3000);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(sorted, expected);
  EXPECT_NE(order, expected);
  EXPECT_NE(Permutation(random, 3000), order);
}

}  // namespace
}  // namespace dbload::tpcc
