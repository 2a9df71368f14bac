#ifndef DBLOAD_WORKLOAD_TPCC_RANDOM_H_
#define DBLOAD_WORKLOAD_TPCC_RANDOM_H_

// The random values of the TPC-C specification (revision 5.11) that its population (clause 4.3)
// and its terminals' inputs (clause 2) are drawn from, for the built-in tpcc workload (issue
// 21). Each function names the clause it follows.

#include <cstdint>
#include <string>
#include <vector>

#include "base/random.h"

namespace dbload::tpcc {

// NURand's A for each field it draws (clause 2.1.6).
inline constexpr int64_t kLastNameA = 255;     // C_LAST, from 0 … 999
inline constexpr int64_t kCustomerIdA = 1023;  // C_ID, from 1 … 3,000
inline constexpr int64_t kItemIdA = 8191;      // OL_I_ID, from 1 … 100,000

// NURand's run-time constant C per field (clause 2.1.6), one set shared by every terminal.
struct NURandConstants {
  int64_t last_name = 0;    // in 0 … kLastNameA
  int64_t customer_id = 0;  // in 0 … kCustomerIdA
  int64_t item_id = 0;      // in 0 … kItemIdA
};

// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x (clause 2.1.6):
// non-uniform, a few values far more often than others, and C moves which.
int64_t NURand(Random& random, int64_t a, int64_t x, int64_t y, int64_t c);

// The constants a load draws its last names with (C_LOAD), at random in their ranges.
NURandConstants LoadConstants(Random& random);
// Whether C_RUN may follow C_LOAD for C_LAST: their difference is 65 … 119 and neither 96 nor
// 112 (clause 2.1.6.1), so that the run's last names are not the load's most frequent ones.
bool IsValidRunLastNameConstant(int64_t run, int64_t load);
// The constants of a run against data loaded with `load`: C_LAST's at random among those valid
// after the load's, the other two at random in their ranges (their C_RUN is free).
NURandConstants RunConstants(const NURandConstants& load, Random& random);

// C_LAST of `number` (0 … 999): its three digits as syllables, "BAR" … "EING" (clause 4.3.2.3):
// 371 is "PRICALLYOUGHT".
std::string LastName(int64_t number);

// Clause 4.3.2.2: a random a-string (letters and digits; the specification asks for a character
// set of at least 128, which the databases' text columns hold but the tools this is compared
// with do not use either) or n-string (digits), of a random length in min … max.
std::string AlphanumericString(Random& random, int min_length, int max_length);
std::string NumericString(Random& random, int min_length, int max_length);
// Clause 4.3.2.7: 4 random digits and "11111".
std::string ZipCode(Random& random);
// I_DATA and S_DATA (clause 4.3.3.1): an a-string of 26 … 50 characters; for 10 % of the rows
// it holds "ORIGINAL" at a random position. `original`: whether this one does (the caller
// draws the 10 %, see IsOriginal).
std::string ItemData(Random& random, bool original);
bool IsOriginal(Random& random);
// `units` of 10^-scale as exact decimal text: "-10.00" for -1000 at scale 2 (money and rates are
// bound as text, so that no binary fraction reaches a NUMERIC column).
std::string DecimalText(int64_t units, int scale);
// 1 … n in random order (O_C_ID: "selected sequentially from a random permutation of
// [1 .. 3,000]", clause 4.3.3.1).
std::vector<int32_t> Permutation(Random& random, int32_t n);

}  // namespace dbload::tpcc

#endif  // DBLOAD_WORKLOAD_TPCC_RANDOM_H_
