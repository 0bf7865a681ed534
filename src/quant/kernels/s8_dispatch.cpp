// Choosing the int8 kernels for an ISA name. Prepare time only.
#include <cstdlib>
#include <string>

#include "quant/kernels/int8_gemv.hpp"

namespace tickinfer::quant::kernels {

namespace {

const S8Kernels kScalar{"scalar", gemv_s8s8_s32_scalar, requantize_s32_to_s8_scalar<Rounding::Double>,
                        requantize_s32_to_s8_scalar<Rounding::Single>};
#if defined(TICKINFER_HAVE_X86)
const S8Kernels kAvx2{"avx2", gemv_s8s8_s32_avx2, requantize_s32_to_s8_avx2<Rounding::Double>,
                      requantize_s32_to_s8_avx2<Rounding::Single>};
const S8Kernels kVnni{"avx512vnni", gemv_s8s8_s32_avx512vnni, requantize_s32_to_s8_avx2<Rounding::Double>,
                      requantize_s32_to_s8_avx2<Rounding::Single>};

bool cpu_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

}  // namespace

bool s8_vnni_supported() {
#if defined(TICKINFER_HAVE_X86)
  return cpu_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

const S8Kernels& s8_kernels(const char* isa) {
  std::string name = isa ? isa : "";
  if (name.empty()) {
    const char* env = std::getenv("TICKINFER_ISA");
    name = env && *env ? env : "avx512";
  }
  if (name == "scalar" || name == "portable") return kScalar;
#if defined(TICKINFER_HAVE_X86)
  if (name == "avx512" && s8_vnni_supported()) return kVnni;
  if ((name == "avx512" || name == "avx2") && cpu_avx2()) return kAvx2;
#endif
  return kScalar;
}

}  // namespace tickinfer::quant::kernels
