// Choosing the 4-row fp32 kernel (gemm4_f32.hpp). Prepare time only.
#include "tflite/kernels/gemm4_f32.hpp"

#include <cstdlib>
#include <string>

namespace tickinfer::tfl::kernels {

Gemm4F32Fn gemm4_f32(const char* isa) {
  std::string name = isa ? isa : "";
  if (name.empty()) {
    const char* env = std::getenv("TICKINFER_ISA");
    name = env && *env ? env : "avx2";
  }
  if (name == "scalar" || name == "portable") return nullptr;
#if defined(TICKINFER_HAVE_X86)
  if ((name == "avx2" || name == "avx512") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return gemm4_f32_panels_avx2;
  }
#endif
  return nullptr;
}

}  // namespace tickinfer::tfl::kernels
