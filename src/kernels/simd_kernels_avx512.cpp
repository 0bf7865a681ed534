// The avx512 set's templated kernels and kernel table (dispatch.cpp hands it out only when the CPU supports AVX-512); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx512.hpp"

namespace tickinfer::kernels::avx512 {

constexpr Isa kIsa = Isa::Avx512;
constexpr const char* kIsaName = "avx512";
constexpr auto kGemm4Sequential = &avx2::gemm4_sequential;  // no AVX-512 variant: the AVX2 one
#include "kernels/simd_kernels.inc"

}  // namespace tickinfer::kernels::avx512
