#ifndef DBLOAD_BASE_RANDOM_H_
#define DBLOAD_BASE_RANDOM_H_

#include <cstdint>

namespace dbload {

// SplitMix64: turns (run seed, stream number) into independent, reproducible seeds.
inline uint64_t MixSeed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256**: a fast generator with a small state, one per worker.
class Random {
 public:
  explicit Random(uint64_t seed) {
    for (int i = 0; i < 4; ++i) state_[i] = MixSeed(seed, i);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [low, high].
  int64_t Uniform(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(NextDouble() * static_cast<double>(high - low + 1));
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace dbload

#endif  // DBLOAD_BASE_RANDOM_H_
