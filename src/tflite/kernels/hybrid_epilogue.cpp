// Portable hybrid FC epilogue and the variant choice (hybrid_epilogue.hpp).
#include "tflite/kernels/hybrid_epilogue.hpp"

#include <algorithm>
#include <string>

namespace tickinfer::tfl::kernels {

void hybrid_epilogue_portable(const HybridRow& r, int units, float* y) noexcept {
  for (int o = 0; o < units; ++o) {
    int32_t dot = r.acc[o];
    if (r.row_sums) dot = static_cast<int32_t>(static_cast<float>(dot) - static_cast<float>(r.row_sums[o]) * r.zero_point);
    const float v = y[o] + static_cast<float>(dot) * (r.row_scale * r.filter_scale[o]);
    y[o] = std::min(std::max(v, r.lo), r.hi);
  }
}

HybridEpilogueFn hybrid_epilogue(const char* isa) noexcept {
  const std::string name = isa ? isa : "";
  if (name == "scalar" || name == "portable") return hybrid_epilogue_portable;
#if defined(TICKINFER_HAVE_X86)
  if (__builtin_cpu_supports("avx2")) return hybrid_epilogue_avx2;
#endif
  return hybrid_epilogue_portable;
}

}  // namespace tickinfer::tfl::kernels
