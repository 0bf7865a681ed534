// The plain build of gemm_s8_rows.hpp's row and dot products, and the per-ISA table.
#include "tflite/kernels/gemm_s8_rows.hpp"

namespace tickinfer::tfl::kernels {

namespace scalar {
void gemm_s8_rows(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k, int64_t n,
                  int32_t* acc) noexcept {
  detail::gemm_s8_rows_body(a, a_step, zp_a, rows, k, n, acc);
}
void gemm_s8_dots(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept {
  detail::gemm_s8_dots_body(a16, cols, k, n, acc);
}
}  // namespace scalar

const GemmS8RowKernels& gemm_s8_row_kernels(::tickinfer::kernels::Isa isa) {
  static const GemmS8RowKernels plain{::tickinfer::kernels::Isa::Scalar, &scalar::gemm_s8_rows, &scalar::gemm_s8_dots};
  ::tickinfer::kernels::IsaVariants<const GemmS8RowKernels*> v;
  v.scalar = &plain;
#if defined(__x86_64__)
  static const GemmS8RowKernels avx2_set{::tickinfer::kernels::Isa::Avx2, &avx2::gemm_s8_rows, &avx2::gemm_s8_dots};
  v.avx2 = &avx2_set;
#endif
  return *v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
