// The plain build of gemm_s8_rows.hpp's row product, and the per-ISA choice.
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

GemmS8RowsFn gemm_s8_rows_for(::tickinfer::kernels::Isa isa) {
  ::tickinfer::kernels::IsaVariants<GemmS8RowsFn> v;
  v.scalar = &scalar::gemm_s8_rows;
#if defined(__x86_64__)
  v.avx2 = &avx2::gemm_s8_rows;
#endif
  return v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels

namespace tickinfer::tfl::kernels {

GemmS8DotsFn gemm_s8_dots_for(::tickinfer::kernels::Isa isa) {
  ::tickinfer::kernels::IsaVariants<GemmS8DotsFn> v;
  v.scalar = &scalar::gemm_s8_dots;
#if defined(__x86_64__)
  v.avx2 = &avx2::gemm_s8_dots;
#endif
  return v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
