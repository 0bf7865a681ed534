// gemm_s8_rows.hpp's row product compiled with AVX2 flags: the same loop, 8 int32 lanes.
#include "tflite/kernels/gemm_s8_rows.hpp"

namespace tickinfer::tfl::kernels::avx2 {

void gemm_s8_rows(const int8_t* a, int64_t a_step, int32_t zp_a, const int16_t* rows, int64_t k, int64_t n,
                  int32_t* acc) noexcept {
  detail::gemm_s8_rows_body(a, a_step, zp_a, rows, k, n, acc);
}
void gemm_s8_dots(const int16_t* a16, const int16_t* cols, int64_t k, int64_t n, int32_t* acc) noexcept {
  detail::gemm_s8_dots_body(a16, cols, k, n, acc);
}

}  // namespace tickinfer::tfl::kernels::avx2
