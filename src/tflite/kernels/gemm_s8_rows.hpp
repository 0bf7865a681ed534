#pragma once
// One output row of an int8 BATCH_MATMUL: acc[j] = sum over kk < k of (a[kk * a_step] - zp_a) *
// rows[kk * n + j], j < n, where rows holds the other operand minus its zero point as int16
// (ops/batch_matmul.cpp copies it so once per batch). Each kk is one whole-row multiply-add, so
// the loop vectorizes along n; or, where k is long and n short, n dot products along k (the
// int16 products summed in int32: pmaddwd). Integer sums, so the order does not matter: bit for
// bit the reference's per-output loop. The same C++ is compiled plain (scalar: baseline x86-64 has no
// 32-bit lane multiply, so the compiler emulates it) and with AVX2 flags (8 lanes of vpmulld).
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using GemmS8RowsFn = void (*)(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k,
                              int64_t n, int32_t* acc) noexcept;
// The same sums as n dot products, for a long k and few outputs (an attention's weights times its
// values: k = 64 keys, n = 8 value columns), where a whole-row step would be one short vector:
// acc[j] = sum over kk of a16[kk] * cols[j * k + kk], both already minus their zero points.
using GemmS8DotsFn = void (*)(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept;

namespace detail {
inline void gemm_s8_rows_body(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k,
                              int64_t n, int32_t* acc) noexcept {
  for (int64_t j = 0; j < n; ++j) acc[j] = 0;
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = a[kk * a_step] - zp_a;
    const int16_t* row = rows + kk * n;
    for (int64_t j = 0; j < n; ++j) acc[j] += av * row[j];
  }
}
inline void gemm_s8_dots_body(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept {
  for (int64_t j = 0; j < n; ++j) {
    const int16_t* col = cols + j * k;
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += a16[kk] * col[kk];
    acc[j] = sum;
  }
}
}  // namespace detail

namespace scalar {
void gemm_s8_rows(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k, int64_t n,
                  int32_t* acc) noexcept;
void gemm_s8_dots(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept;
}
#if defined(__x86_64__)
namespace avx2 {
void gemm_s8_rows(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k, int64_t n,
                  int32_t* acc) noexcept;
void gemm_s8_dots(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept;
}
#endif

// Both forms for an ISA (kernels/isa_variants.hpp's rule: AVX2 where the CPU has it, else the plain build).
struct GemmS8RowKernels {
  ::tickinfer::kernels::Isa isa;
  GemmS8RowsFn rows;
  GemmS8DotsFn dots;
};
const GemmS8RowKernels& gemm_s8_row_kernels(::tickinfer::kernels::Isa isa);

}  // namespace tickinfer::tfl::kernels
