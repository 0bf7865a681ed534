// The avx2 set's templated kernels and kernel table (dispatch.cpp hands it out only when the CPU supports AVX2 and FMA); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx2.hpp"

namespace tickinfer::kernels::avx2 {

constexpr Isa kIsa = Isa::Avx2;
constexpr const char* kIsaName = "avx2";
constexpr auto kGemm4Sequential = &gemm4_sequential;  // gemm4_sequential_avx2.cpp
#define TICKINFER_ISA_HAS_GEMM_ROWS 1  // gemv_avx2.cpp
#include "kernels/simd_kernels.inc"
#undef TICKINFER_ISA_HAS_GEMM_ROWS

}  // namespace tickinfer::kernels::avx2
