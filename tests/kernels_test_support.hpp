#pragma once
// Shared helpers for the kernels_*_test.cpp suites: the single list of ISAs every suite loops
// over, the replayable seed, guarded misaligned buffers and ulp distances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"

namespace tickinfer::kernels::testing {

// Every optimized variant is compared with the Scalar set; this is the one list of them.
inline const Isa kOptimizedIsas[] = {Isa::Portable, Isa::Avx2, Isa::Avx512};

// Sizes just below, at and above the SIMD widths (8, 16) and the 4-panel gemv tile (64).
inline const int kSizes[] = {1,  2,  3,  7,   8,   15,  16,  17,  31,  32, 33,
                             63, 64, 65, 127, 128, 129, 255, 256, 257, 512};

// The RNG seed: TICKINFER_TEST_SEED if set (to replay a failure), else a fixed default.
inline uint32_t test_seed() {
  if (const char* s = std::getenv("TICKINFER_TEST_SEED"); s && *s) {
    return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  }
  return 20240611u;
}
inline std::string seed_note(uint32_t seed) {
  return "seed " + std::to_string(seed) + " (replay with TICKINFER_TEST_SEED=" +
         std::to_string(seed) + ")";
}

// Skips the current test when `isa` is not compiled in or the CPU lacks it.
#define TICKINFER_SKIP_UNSUPPORTED(isa)                                             \
  do {                                                                              \
    if (!::tickinfer::kernels::isa_supported(isa))                                  \
      GTEST_SKIP() << ::tickinfer::kernels::isa_name(isa) << " not supported here"; \
  } while (0)

inline constexpr float kGuard = -1234.5f;  // distinctive value that no kernel should produce
inline constexpr int kGuardCount = 19;     // guard floats after each buffer

// n floats at a deliberate misalignment of `offset` floats, followed by guard values.
class GuardedBuffer {
 public:
  GuardedBuffer(int n, int offset) : n_(n), offset_(offset), storage_(offset + n + kGuardCount + 16) {
    for (float& v : storage_) v = kGuard;
  }
  float* data() { return storage_.data() + offset_; }
  const float* data() const { return storage_.data() + offset_; }
  int size() const { return n_; }
  float& operator[](int i) { return data()[i]; }
  void fill(const std::vector<float>& v) { std::memcpy(data(), v.data(), sizeof(float) * n_); }
  std::vector<float> values() const { return std::vector<float>(data(), data() + n_); }
  bool guards_intact() const {
    for (int i = 0; i < kGuardCount; ++i)
      if (std::memcmp(&data()[n_ + i], &kGuard, sizeof(float)) != 0) return false;
    for (int i = 0; i < offset_; ++i)
      if (std::memcmp(&storage_[i], &kGuard, sizeof(float)) != 0) return false;
    return true;
  }

 private:
  int n_, offset_;
  std::vector<float> storage_;
};

inline std::vector<float> random_vector(std::mt19937& rng, int n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Distance in units in the last place between two finite floats (0 for equal values, +-0 too).
inline int64_t ulp_distance(float a, float b) {
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

// True when both are NaN, or equal (inf included), or within the given tolerance.
inline bool close_or_same_special(float got, float want, double abs_tol) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return std::fabs(static_cast<double>(got) - want) <= abs_tol;
}

}  // namespace tickinfer::kernels::testing
