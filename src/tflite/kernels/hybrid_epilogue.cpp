// Portable hybrid FC epilogue and the variant choice (hybrid_epilogue.hpp).
#include "tflite/kernels/hybrid_epilogue.hpp"

#include <algorithm>

namespace tickinfer::tfl::kernels {

void hybrid_epilogue_portable(const HybridRow& r, int units, float* y) noexcept {
  for (int o = 0; o < units; ++o) {
    int32_t dot = r.acc[o];
    if (r.row_sums) dot = static_cast<int32_t>(static_cast<float>(dot) - static_cast<float>(r.row_sums[o]) * r.zero_point);
    const float v = y[o] + static_cast<float>(dot) * (r.row_scale * r.filter_scale[o]);
    y[o] = std::min(std::max(v, r.lo), r.hi);
  }
}

HybridEpilogueFn hybrid_epilogue(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<HybridEpilogueFn> table;
  table.scalar = hybrid_epilogue_portable;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = hybrid_epilogue_avx2;
#endif
  return table.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
