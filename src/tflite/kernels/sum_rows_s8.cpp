// Scalar int8 row sums (tflite/kernels/sum_rows_s8.hpp) and the choice of variant.
#include "tflite/kernels/sum_rows_s8.hpp"

namespace tickinfer::tfl::kernels {

void sum_rows_s8_scalar(const int8_t* x, int64_t rows, int64_t inner, int32_t* sum) noexcept {
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = x + r * inner;
    for (int64_t j = 0; j < inner; ++j) {
      sum[j] = static_cast<int32_t>(static_cast<uint32_t>(sum[j]) + static_cast<uint32_t>(int32_t{row[j]}));
    }
  }
}

SumRowsS8Fn sum_rows_s8(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<SumRowsS8Fn> table;
  table.scalar = sum_rows_s8_scalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = sum_rows_s8_avx2;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
