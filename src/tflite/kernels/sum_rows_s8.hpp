#pragma once
// The sums of an int8 MEAN or SUM over adjacent axes: sum[j] += x[r * inner + j] over every row
// r of `rows`, in wrapping int32 like TFLite's accumulator. Integer addition in any order gives
// the same bits, so the AVX2 variant keeps a row's sums in registers across the rows instead of
// reading and writing them back for each row (the loop's cost before: a store-to-load round trip
// per row). noexcept, no allocation, any sizes.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using SumRowsS8Fn = void (*)(const int8_t* x, int64_t rows, int64_t inner, int32_t* sum) noexcept;
void sum_rows_s8_scalar(const int8_t* x, int64_t rows, int64_t inner, int32_t* sum) noexcept;
#if defined(__x86_64__)
void sum_rows_s8_avx2(const int8_t* x, int64_t rows, int64_t inner, int32_t* sum) noexcept;
#endif
// The family's table: scalar and avx2; portable falls back to scalar and avx512 to avx2
// (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
SumRowsS8Fn sum_rows_s8(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
