#pragma once
// fp32 matrix product of 4 input rows at once over the engine's packed panel layout
// (kernels/kernel_set.hpp), for ops that run the same packed weights over many rows in one call
// (CONV_2D: one row per output pixel's gathered patch). Each weight vector loaded feeds 4 rows'
// FMAs instead of one, which a row-at-a-time gemv cannot do.
//
// For r in [0, 4), n in [0, N): y[r ldy + n] = clamp(init[n] + sum_k x[r ldx + k] W[k][n], lo, hi)
// with the k-sum taken in ascending k in one fp32 accumulator, each product and each sum
// rounded to fp32 (no FMA): bit for bit the loop  total = 0; total += x * w; y = init + total.
// Panel form only: N > kDotMaxN. AVX2 without FMA suffices. init may be nullptr; x rows are read only in [0, K); each y row
// is written only in [0, N). No allocation, noexcept, no alignment needed.
#include <cstddef>

namespace tickinfer::tfl::kernels {

inline constexpr int kGemmRows = 4;

using Gemm4F32Fn = void (*)(const float* x, size_t ldx, int K, const float* packed, int N, const float* init,
                            float* y, size_t ldy, float lo, float hi) noexcept;
#if defined(__x86_64__)
void gemm4_f32_panels_avx2(const float* x, size_t ldx, int K, const float* packed, int N, const float* init, float* y,
                           size_t ldy, float lo, float hi) noexcept;
#endif
// The AVX2 kernel when the CPU has AVX2 + FMA and isa is not "scalar"/"portable", else nullptr
// (callers then run their row-at-a-time gemv). Prepare time only.
Gemm4F32Fn gemm4_f32(const char* isa);

}  // namespace tickinfer::tfl::kernels
