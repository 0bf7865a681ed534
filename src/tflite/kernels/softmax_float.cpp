// The scalar form of the float softmax rows (softmax_float.hpp) and the choice of form.
#include "tflite/kernels/softmax_float.hpp"

#include <algorithm>
#include <limits>

namespace tickinfer::tfl::kernels {
namespace {

// y = exp((x - max) * beta) for one row.
void exponentials(const float* x, float* y, int d, float beta, ExpfArrayFn expf) noexcept {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  float m[4] = {kLowest, kLowest, kLowest, kLowest};
  int c = 0;
  for (; c + 4 <= d; c += 4)
    for (int k = 0; k < 4; ++k) m[k] = std::max(m[k], x[c + k]);
  for (; c < d; ++c) m[0] = std::max(m[0], x[c]);
  const float max = std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  for (c = 0; c < d; ++c) y[c] = (x[c] - max) * beta;
  expf(y, y, d);
}

void divide(float* y, int d, float sum) noexcept {
  for (int c = 0; c < d; ++c) y[c] = y[c] / sum;
}

}  // namespace

void softmax_rows_scalar(const float* x, float* y, int64_t rows, int d, float beta, ExpfArrayFn expf) noexcept {
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    for (int k = 0; k < 4; ++k) exponentials(x + (i + k) * d, y + (i + k) * d, d, beta, expf);
    const float* y0 = y + i * d;
    const float *y1 = y0 + d, *y2 = y1 + d, *y3 = y2 + d;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int c = 0; c < d; ++c) s0 += y0[c], s1 += y1[c], s2 += y2[c], s3 += y3[c];
    divide(y + i * d, d, s0), divide(y + (i + 1) * d, d, s1), divide(y + (i + 2) * d, d, s2);
    divide(y + (i + 3) * d, d, s3);
  }
  for (; i < rows; ++i) {
    float* yi = y + i * d;
    exponentials(x + i * d, yi, d, beta, expf);
    float sum = 0.0f;
    for (int c = 0; c < d; ++c) sum += yi[c];
    divide(yi, d, sum);
  }
}

FloatSoftmaxKernel float_softmax_kernel(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<SoftmaxRowsFn> table;
  table.scalar = softmax_rows_scalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = softmax_rows_avx2;
#endif
  return {table.pick(isa), expf_array(isa)};
}

}  // namespace tickinfer::tfl::kernels
