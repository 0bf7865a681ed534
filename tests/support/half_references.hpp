// Independent references for 16-bit storage on the CUDA graph form (tests only): bf16 rounding by
// comparing the two candidates around a value in double precision, fp16 by the compiler's
// _Float16 (where it has one) — neither is cuda/half_bits.hpp's bit arithmetic — and the window
// fixtures the storage tests run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/fixture_manifest.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::testing {

inline float float_of_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The bf16 value nearest to f (ties to an even last bit).
inline float bf16_reference(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t lo = b & 0xffff0000u, hi = lo + 0x10000u;  // toward zero, and one bf16 step out
  // The step out as a number even where it is the float infinity (past the largest finite bf16).
  const int exp = int((lo >> 23) & 0xffu);
  const double step = std::ldexp(1.0, std::max(exp, 1) - 127 - 7);
  const double mag = std::fabs(double(f)), low = std::fabs(double(float_of_bits(lo)));
  const double dl = mag - low, dh = low + step - mag;
  if (dl < dh) return float_of_bits(lo);
  if (dh < dl) return float_of_bits(hi);
  return (lo & 0x10000u) ? float_of_bits(hi) : float_of_bits(lo);
}

#if defined(__FLT16_MAX__)
inline float fp16_reference(float f) { return float(static_cast<_Float16>(f)); }
#endif

// Every window fixture: tests/fixtures, bench/models, bench/book_models.
inline std::vector<FixtureCase> storage_window_cases() {
  std::vector<FixtureCase> out;
  const std::string src = test::source_dir();
  for (const std::string& d : {fixtures_dir(), src + "/bench/models", src + "/bench/book_models"})
    for (const FixtureCase& c : load_manifest(d)) out.push_back(c);
  return out;
}

}  // namespace tickinfer::testing
