// The avx512 set's templated kernels and kernel table (dispatch.cpp hands it out only when the CPU supports AVX-512); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx512.hpp"

namespace tickinfer::kernels::avx512 {

constexpr Isa kIsa = Isa::Avx512;
constexpr const char* kIsaName = "avx512";
#include "kernels/simd_kernels.inc"

}  // namespace tickinfer::kernels::avx512
