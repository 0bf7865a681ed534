#pragma once
// fp32 x bf16 -> fp32 matrix-vector products for the bf16-weight ops (FULLY_CONNECTED with a
// bf16 filter, the bf16-weight LSTM): the weights stay bf16 in memory (half the bytes of fp32)
// and are widened exactly in registers (bits << 16), then multiplied and summed in fp32.
//
// Layout: the engine's float gemv layout (kernels/kernel_set.hpp: panel form for N > kDotMaxN,
// dot form else), element for element, but each element is the bf16 (upper 16 bits) of the
// float that pack_weights would store. One packed copy serves every variant below.
//
// Contract (as KernelSet::gemv): y[n] = clamp(init[n] + sum_k x[k] * W[k][n], lo, hi) for n in
// [0, N); init may be nullptr or alias y; x is read only in [0, K); y is written only in [0, N);
// no allocation, noexcept, no alignment needed. Variants differ from each other and from a
// sequential loop only in fp32 summation order.
#include <cstddef>
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

// uint16 elements of the packed form of a (K x N) matrix.
size_t bf16_packed_elems(int K, int N);
// w: row-major (K x N) bf16 bits, W[k][n] = w[k * N + n]. Writes bf16_packed_elems(K, N) values.
void pack_bf16_weights(const uint16_t* w, int K, int N, uint16_t* packed);

using GemvBf16Fn = void (*)(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y,
                            float lo, float hi) noexcept;
// Plain loops over the packed layout (k ascending per output): the reference the SIMD variants
// are tested against, and the fallback on CPUs without AVX2.
void gemv_bf16_scalar(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                      float hi) noexcept;
#if defined(__x86_64__)
// AVX2 + FMA: widen 8 weights with vpmovzxwd + vpslld 16, one FMA each.
void gemv_bf16_avx2(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                    float hi) noexcept;
// AVX-512: two panel rows per 64-byte load, widened by vpunpck[lh]wd (gemv_bf16_avx512.cpp); the
// dot form is the AVX2 kernel's.
void gemv_bf16_avx512(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                      float hi) noexcept;
#endif

struct Bf16Gemv {
  ::tickinfer::kernels::Isa isa;
  const char* name;  // "scalar", "avx2", "avx512"
  GemvBf16Fn gemv;
};
// The bf16 family's table: scalar (the plain loops), avx2 and avx512; portable falls back to
// scalar (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
const Bf16Gemv& bf16_gemv(::tickinfer::kernels::Isa isa);

}  // namespace tickinfer::tfl::kernels
