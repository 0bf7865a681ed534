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
  softmax_rows_with(
      x, y, rows, d, [&](const float* xr, float* yr) { exponentials(xr, yr, d, beta, expf); },
      [&](float* yr, float sum) { divide(yr, d, sum); });
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
