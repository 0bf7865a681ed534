// Choosing the int8 kernels for an ISA name. Prepare time only.
#include <string>

#include "quant/kernels/int8_gemv.hpp"

namespace tickinfer::quant::kernels {

namespace {

const S8Kernels kScalar{"scalar", gemv_s8s8_s32_scalar,
                        requantize_s32_to_s8_scalar<Rounding::Double>,
                        requantize_s32_to_s8_scalar<Rounding::Single>};

}  // namespace

bool s8_vnni_supported() { return false; }

const S8Kernels& s8_kernels(const char* isa) {
  (void)isa;
  return kScalar;
}

}  // namespace tickinfer::quant::kernels
