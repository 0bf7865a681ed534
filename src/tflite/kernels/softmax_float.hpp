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

// The rows, four at a time, for both forms: `exponentials(x, y)` writes one row's exp((x - max) *
// beta), `divide(y, sum)` divides it by its sum; the sums run here, each row's in element order.
template <class Exponentials, class Divide>
inline void softmax_rows_with(const float* x, float* y, int64_t rows, int d, Exponentials exponentials,
                              Divide divide) noexcept {
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    for (int k = 0; k < 4; ++k) exponentials(x + (i + k) * d, y + (i + k) * d);
    const float* y0 = y + i * d;
    const float *y1 = y0 + d, *y2 = y1 + d, *y3 = y2 + d;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int c = 0; c < d; ++c) s0 += y0[c], s1 += y1[c], s2 += y2[c], s3 += y3[c];
    divide(y + i * d, s0), divide(y + (i + 1) * d, s1), divide(y + (i + 2) * d, s2), divide(y + (i + 3) * d, s3);
  }
  for (; i < rows; ++i) {
    float* yi = y + i * d;
    exponentials(x + i * d, yi);
    float sum = 0.0f;
    for (int c = 0; c < d; ++c) sum += yi[c];
    divide(yi, sum);
  }
}

struct FloatSoftmaxKernel {
  SoftmaxRowsFn rows;
  ExpfArrayFn expf;
};
// The forms for `isa` (prepare time).
FloatSoftmaxKernel float_softmax_kernel(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
