// The avx512 set's templated kernels and kernel table (dispatch.cpp hands it out only when the CPU supports AVX-512); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/attention_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/gemm_chain_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx512.hpp"

namespace tickinfer::kernels::avx512 {

constexpr Isa kIsa = Isa::Avx512;
constexpr const char* kIsaName = "avx512";
constexpr auto kGemm4Sequential = &avx2::gemm4_sequential;  // no AVX-512 variant: the AVX2 one
// Blocks of 8 rows x 2 panels: 16 zmm accumulators and 8 broadcasts in 32 registers; each
// weight load feeds 8 FMAs.
void gemm_chain(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch, const float* packed_w,
                int N, const float* init, float* y, size_t ldy, float lo, float hi) noexcept {
  simd::gemm_chain<Simd, 8, 2>(x, rows, ldx, taps, tap_stride, ch, packed_w, N, init, y, ldy, lo, hi);
}
constexpr GemmChainFn kGemmChain = &gemm_chain;
#define TICKINFER_ISA_HAS_GEMM_ROWS 1   // gemv_avx512.cpp
#define TICKINFER_ISA_HAS_LAYER_NORM 1  // layer_norm_avx512.cpp
#include "kernels/simd_kernels.inc"
#undef TICKINFER_ISA_HAS_GEMM_ROWS
#undef TICKINFER_ISA_HAS_LAYER_NORM

}  // namespace tickinfer::kernels::avx512
