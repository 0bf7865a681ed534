#pragma once
// TFLite's reference float SOFTMAX over rows, bit for bit, at vector speed. The arithmetic per row
// is fixed: the maximum, exp((x - max) * beta) by std::exp, a sum in element order, each exp
// divided by the sum. Everything else is free: the exponentials run through the vector std::exp
// (platform_expf.hpp); four rows at a time keep four independent sums in flight (each row's own
// additions still in its own element order); the maximum runs in partial maxima (max ignores NaN
// the same way in any grouping, and a -0 / +0 pick cannot change x - max for any x); subtraction,
// product and division are exact in any vector width. noexcept, no allocation; x and y may alias.
#include <cstdint>

#include "kernels/isa_variants.hpp"
#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {

using SoftmaxRowsFn = void (*)(const float* x, float* y, int64_t rows, int depth, float beta, ExpfArrayFn expf) noexcept;

void softmax_rows_scalar(const float* x, float* y, int64_t rows, int depth, float beta, ExpfArrayFn expf) noexcept;
#if defined(TICKINFER_HAVE_X86)
void softmax_rows_avx2(const float* x, float* y, int64_t rows, int depth, float beta, ExpfArrayFn expf) noexcept;
#endif

struct FloatSoftmaxKernel {
  SoftmaxRowsFn rows;
  ExpfArrayFn expf;
};
// The forms for `isa` (prepare time).
FloatSoftmaxKernel float_softmax_kernel(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
