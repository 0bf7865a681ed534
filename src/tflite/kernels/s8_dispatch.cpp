// The int8 family's table of variants (gemv_s8.hpp); picked by kernels/isa_variants.hpp's rule. Prepare time only.
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

namespace {

using ::tickinfer::kernels::Isa;

const S8Kernels kScalar{Isa::Scalar, "scalar", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_scalar,
                        requantize_s32_to_s8_scalar<Rounding::Double>, requantize_s32_to_s8_scalar<Rounding::Single>,
                        nullptr, gemm_s8s8_s32_scalar,
                        requantize_pixels_each<requantize_s32_to_s8_scalar<Rounding::Double>>,
                        requantize_pixels_each<requantize_s32_to_s8_scalar<Rounding::Single>>};
#if defined(TICKINFER_HAVE_X86)
const S8Kernels kAvx2{Isa::Avx2, "avx2 quad blocks", pack_s8_quad_blocks, s8_quad_stride, gemv_s8s8_s32_quads_avx2,
                      requantize_s32_to_s8_avx2<Rounding::Double>, requantize_s32_to_s8_avx2<Rounding::Single>,
                      gemv_s8_quads_requant_single_avx2, gemm_s8s8_s32_quads_avx2,
                      requantize_pixels_s32_to_s8_avx2<Rounding::Double>,
                      requantize_pixels_s32_to_s8_avx2<Rounding::Single>};
const S8Kernels kAvx2Rows{Isa::Avx2, "avx2 rows", pack_s8_rows, s8_row_stride, gemv_s8s8_s32_avx2,
                          requantize_s32_to_s8_avx2<Rounding::Double>, requantize_s32_to_s8_avx2<Rounding::Single>,
                          nullptr, gemm_s8s8_s32_avx2, requantize_pixels_s32_to_s8_avx2<Rounding::Double>,
                          requantize_pixels_s32_to_s8_avx2<Rounding::Single>};
// Exact for every weight value: no separate set for matrices holding -128.
const S8Kernels kVnni{Isa::Avx512, "avx512vnni quad blocks", pack_s8_quads_vnni, s8_quad_stride, gemv_s8s8_s32_quads_vnni,
                      requantize_s32_to_s8_avx512<Rounding::Double>, requantize_s32_to_s8_avx512<Rounding::Single>,
                      gemv_s8_quads_requant_single_vnni, gemm_s8s8_s32_quads_vnni,
                      requantize_pixels_each<requantize_s32_to_s8_avx512<Rounding::Double>>,
                      requantize_pixels_each<requantize_s32_to_s8_avx512<Rounding::Single>>};
#endif

}  // namespace

bool s8_vnni_supported() {
#if defined(TICKINFER_HAVE_X86)
  return ::tickinfer::kernels::isa_supported(Isa::Avx2) && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

const S8Kernels& s8_kernels(Isa isa, bool weights_reach_minus_128) {
  ::tickinfer::kernels::IsaVariants<const S8Kernels*> table;
  table.scalar = &kScalar;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = weights_reach_minus_128 ? &kAvx2Rows : &kAvx2;
  if (s8_vnni_supported()) table.avx512 = &kVnni;  // VNNI is beyond the avx512 ISA's own check
#else
  (void)weights_reach_minus_128;
#endif
  return *table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
