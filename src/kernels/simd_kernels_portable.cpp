// The portable set's templated kernels and kernel table (vector extensions, no ISA flags: every CPU supports it); see simd_kernels.inc.
#include "kernels/activation_simd.hpp"
#include "kernels/attention_simd.hpp"
#include "kernels/cells_simd.hpp"
#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_portable.hpp"

namespace tickinfer::kernels::portable {

constexpr Isa kIsa = Isa::Portable;
constexpr const char* kIsaName = "portable";
constexpr Gemm4SequentialFn kGemm4Sequential = nullptr;  // none: callers run gemv per row
constexpr GemmChainFn kGemmChain = nullptr;              // no fused multiply-add: gemv per row
#include "kernels/simd_kernels.inc"

}  // namespace tickinfer::kernels::portable
