// Choosing the int8 kernels for an ISA name. Prepare time only.
#include <cstdlib>
#include <string>

#include "tflite/kernels/int8_gemv.hpp"

namespace tickinfer::tfl::kernels {

namespace {

const S8Kernels kScalar{"scalar", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_scalar,
                        requantize_s32_to_s8_scalar<Rounding::Double>, requantize_s32_to_s8_scalar<Rounding::Single>,
                        nullptr};
#if defined(TICKINFER_HAVE_X86)
const S8Kernels kAvx2{"avx2 quad blocks", pack_s8_quad_blocks, s8_quad_stride, gemv_s8s8_s32_quads_avx2,
                      requantize_s32_to_s8_avx2<Rounding::Double>, requantize_s32_to_s8_avx2<Rounding::Single>,
                      gemv_s8_quads_requant_single_avx2};
const S8Kernels kAvx2Rows{"avx2 rows", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_avx2, requantize_s32_to_s8_avx2<Rounding::Double>,
                          requantize_s32_to_s8_avx2<Rounding::Single>, nullptr};
const S8Kernels kVnni{"avx512vnni", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_avx512vnni,
                      requantize_s32_to_s8_avx2<Rounding::Double>, requantize_s32_to_s8_avx2<Rounding::Single>,
                      nullptr};

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

const S8Kernels& s8_kernels(const char* isa, bool weights_reach_minus_128) {
  std::string name = isa ? isa : "";
  if (name.empty()) {
    const char* env = std::getenv("TICKINFER_ISA");
    name = env && *env ? env : "avx512";
  }
  if (name == "scalar" || name == "portable") return kScalar;
#if defined(TICKINFER_HAVE_X86)
  if (name == "avx512" && s8_vnni_supported()) return kVnni;
  if ((name == "avx512" || name == "avx2") && cpu_avx2()) return weights_reach_minus_128 ? kAvx2Rows : kAvx2;
#endif
  return kScalar;
}

}  // namespace tickinfer::tfl::kernels
