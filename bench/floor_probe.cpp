// Measures this core's floors in the same run as the model benchmarks, so measured/floor ratios
// do not depend on numbers taken on another day on a shared machine:
//   * peak fp32 FMA throughput (512-bit where the CPU has AVX-512, else 256-bit, else scalar),
//     with 12 (256-bit: 10) independent accumulator chains to cover FMA latency while leaving
//     registers for the operands;
//   * read bandwidth from a buffer of a given size (the model's weight bytes), repeatedly
//     streamed so it is cache-resident, as the model's weights are.
//   * peak exact int8 multiply-accumulate rate (u8 x s8 summed into int32, what an int8 gemv
//     does): AVX2's vpmaddubsw + vpmaddwd(1) + vpaddd, or vpmaddubsw with the int16 pairs
//     widened by shifts on the other pipes, the faster of the two; and, where the CPU has
//     AVX512VNNI, 512-bit vpdpbusd's rate (int8_gmacs is then that one, as the int8 kernels use it);
//     and the rate of the AVX2 kernels' own signed-input mix (vpsignb added), what bounds them;
// Prints one JSON object: {"peak_gflops": ..., "isa": ..., "peak_avx2_gflops": ..., "int8_gmacs": ...,
//   "int8_isa": ..., "int8_avx2_gmacs": ..., "int8_avx2_signed_gmacs": ..., "read_gbps": {"<bytes>": ...}} (the *_avx2 rates: what
//   kernels held to AVX2 can reach on a CPU that has more).
//
//   floor_probe [BYTES ...]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

__attribute__((target("avx512f"))) double fma512_gflops() {
  constexpr int kChains = 12;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
    }
    best = std::max(best, iters * kChains * 32.0 / seconds_since(t0) / 1e9);
  }
  float sink = 0;
  for (auto& v : acc) sink += _mm512_reduce_add_ps(v);
  if (sink == 12345.0f) std::puts("");
  return best;
}

__attribute__((target("avx2,fma"))) double fma256_gflops() {
  constexpr int kChains = 10;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
      for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
    }
    best = std::max(best, iters * kChains * 16.0 / seconds_since(t0) / 1e9);
  }
  float sink = 0;
  for (auto& v : acc) {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (float x : t) sink += x;
  }
  if (sink == 12345.0f) std::puts("");
  return best;
}

// u8 x s8 -> int32 multiply-accumulates per second (G), AVX2. The operands keep every pair sum
// of vpmaddubsw in int16 range (no saturation), as the int8 kernels' operands do.
__attribute__((target("avx2"))) double int8_avx2_gmacs(bool widen_by_shifts) {
  constexpr int kChains = 6;
  __m256i acc[2 * kChains];
  for (int i = 0; i < 2 * kChains; ++i) acc[i] = _mm256_set1_epi32(i);
  __m256i a = _mm256_set1_epi8(3);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i b[kChains];
  for (int j = 0; j < kChains; ++j) b[j] = _mm256_set1_epi8(static_cast<char>(-5 - j));
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
      __asm__ volatile("" : "+x"(a));  // opaque: the products cannot be hoisted out of the loop
#pragma GCC unroll 16
      for (int j = 0; j < kChains; ++j) {
        const __m256i t = _mm256_maddubs_epi16(a, b[j]);
        if (widen_by_shifts) {
          acc[j] = _mm256_add_epi32(acc[j], _mm256_srai_epi32(_mm256_slli_epi32(t, 16), 16));
          acc[kChains + j] = _mm256_add_epi32(acc[kChains + j], _mm256_srai_epi32(t, 16));
        } else {
          acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(t, ones));
        }
      }
    }
    best = std::max(best, iters * kChains * 32.0 / seconds_since(t0) / 1e9);
  }
  __m256i sink = _mm256_setzero_si256();
  for (auto& v : acc) sink = _mm256_add_epi32(sink, v);
  if (_mm256_extract_epi32(sink, 0) == 12345) std::puts("");
  return best;
}

// The AVX2 int8 kernels' own instruction mix for signed x (gemv_s8_quads_avx2.cpp): vpsignb
// gives each weight x's sign before vpmaddubsw takes |x|, one more instruction per 32 MACs on
// the same vector ports. Not a floor (a kernel could in principle reach the rate above); printed
// as what bounds those kernels on this core: where vpsignb shares the multiply ports it is
// lower (0.72-0.78 of int8_avx2_gmacs on a Sapphire Rapids class Xeon).
__attribute__((target("avx2"))) double int8_avx2_signed_gmacs() {
  constexpr int kChains = 6;
  __m256i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_epi32(i);
  __m256i xs = _mm256_set1_epi8(-3);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i w[kChains];
  for (int j = 0; j < kChains; ++j) w[j] = _mm256_set1_epi8(static_cast<char>(-5 - j));
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
      __asm__ volatile("" : "+x"(xs));
      const __m256i xa = _mm256_abs_epi8(xs);  // once per input quad, shared by the rows, as in the kernel
#pragma GCC unroll 16
      for (int j = 0; j < kChains; ++j) {
        const __m256i t = _mm256_maddubs_epi16(xa, _mm256_sign_epi8(w[j], xs));
        acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(t, ones));
      }
    }
    best = std::max(best, iters * kChains * 32.0 / seconds_since(t0) / 1e9);
  }
  __m256i sink = _mm256_setzero_si256();
  for (auto& v : acc) sink = _mm256_add_epi32(sink, v);
  if (_mm256_extract_epi32(sink, 0) == 12345) std::puts("");
  return best;
}

// The same with VNNI's vpdpbusd in 512-bit registers (u8 x s8 summed by 4 straight into int32,
// 64 MACs per instruction), the form the VNNI int8 kernels use. Only called where the CPU has
// AVX512VNNI.
__attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni"))) double int8_vnni_gmacs() {
  constexpr int kChains = 10;
  __m512i acc[kChains], b[kChains];
  __m512i a = _mm512_set1_epi8(3);
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_epi32(j), b[j] = _mm512_set1_epi8(static_cast<char>(-5 - j));
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
      __asm__ volatile("" : "+v"(a));
#pragma GCC unroll 16
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b[j]);
    }
    best = std::max(best, iters * kChains * 64.0 / seconds_since(t0) / 1e9);
  }
  __m512i sink = _mm512_setzero_si512();
  for (auto& v : acc) sink = _mm512_add_epi32(sink, v);
  if (_mm512_reduce_add_epi32(sink) == 12345) std::puts("");
  return best;
}

// GB/s reading `bytes` repeatedly (best of several passes) with 256-bit loads into 8
// independent sums: what a kernel streaming cache-resident weights can reach.
__attribute__((target("avx2"))) double read_gbps(size_t bytes) {
  const size_t n = std::max<size_t>(bytes / sizeof(float), 64) / 64 * 64;
  std::vector<float> buf(n, 1.0f);
  const size_t passes = std::max<size_t>(2, (size_t{1} << 30) / (n * sizeof(float)));
  double best = 0;
  __m256 sink = _mm256_setzero_ps();
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (size_t p = 0; p < passes; ++p) {
      __m256 s[8];
      for (auto& v : s) v = _mm256_setzero_ps();
      for (size_t i = 0; i < n; i += 64) {
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) s[j] = _mm256_add_ps(s[j], _mm256_loadu_ps(&buf[i + 8 * j]));
      }
      for (auto& v : s) sink = _mm256_add_ps(sink, v);
      __asm__ volatile("" ::: "memory");
    }
    best = std::max(best, double(passes) * n * sizeof(float) / seconds_since(t0) / 1e9);
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, sink);
  if (t[0] == 12345.0f) std::puts("");
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const double peak = avx512 ? fma512_gflops() : avx2 ? fma256_gflops() : 0.0;
  // The exact int8 rate of the kernels this CPU runs: VNNI where it has it (what the int8 gemv
  // picks there), else AVX2's vpmaddubsw pairs. int8_avx2_gmacs is printed too, so a run with
  // TICKINFER_ISA=avx2 on a VNNI machine has its own floor.
  const double int8_avx2 = avx2 ? std::max(int8_avx2_gmacs(false), int8_avx2_gmacs(true)) : 0.0;
  const double int8_avx2_signed = avx2 ? int8_avx2_signed_gmacs() : 0.0;
  const bool vnni = avx512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vnni");
  const double int8_vnni = vnni ? int8_vnni_gmacs() : 0.0;
  // The 256-bit FMA peak too, for runs that hold the kernels to AVX2 (TICKINFER_ISA=avx2).
  const double peak_avx2 = avx512 && avx2 ? fma256_gflops() : avx2 ? peak : 0.0;
  std::printf("{\"peak_gflops\": %.1f, \"isa\": \"%s\", \"peak_avx2_gflops\": %.1f, \"int8_gmacs\": %.1f, "
              "\"int8_isa\": \"%s\", \"int8_avx2_gmacs\": %.1f, \"int8_avx2_signed_gmacs\": %.1f, \"read_gbps\": {",
              peak, avx512 ? "avx512" : avx2 ? "avx2" : "none", peak_avx2, vnni ? int8_vnni : int8_avx2,
              vnni ? "avx512vnni" : avx2 ? "avx2" : "none", int8_avx2, int8_avx2_signed);
  for (int i = 1; i < argc; ++i) {
    const size_t bytes = std::strtoull(argv[i], nullptr, 10);
    std::printf("%s\"%zu\": %.1f", i > 1 ? ", " : "", bytes, read_gbps(bytes));
  }
  std::printf("}}\n");
  return 0;
}
