// The avx2 set's templated kernels and kernel table (dispatch.cpp hands it out only when the CPU supports AVX2 and FMA); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/attention_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/gemm_chain_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx2.hpp"

namespace tickinfer::kernels::avx2 {

constexpr Isa kIsa = Isa::Avx2;
constexpr const char* kIsaName = "avx2";
constexpr auto kGemm4Sequential = &gemm4_sequential;  // gemm4_sequential_avx2.cpp
// Blocks of 3 rows x 2 panels: 12 ymm accumulators, 3 broadcasts and the weight vector fill the
// 16 registers; each weight load feeds 3 FMAs (7 loads per 12 FMAs; 4 rows x 1 panel, 6 per 8,
// measured 1.4x slower on tcn).
void gemm_chain(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch, const float* packed_w,
                int N, const float* init, float* y, size_t ldy, float lo, float hi) noexcept {
  simd::gemm_chain<Simd, 3, 2>(x, rows, ldx, taps, tap_stride, ch, packed_w, N, init, y, ldy, lo, hi);
}
constexpr GemmChainFn kGemmChain = &gemm_chain;
#define TICKINFER_ISA_HAS_GEMM_ROWS 1  // gemv_avx2.cpp
#include "kernels/simd_kernels.inc"
#undef TICKINFER_ISA_HAS_GEMM_ROWS

}  // namespace tickinfer::kernels::avx2
