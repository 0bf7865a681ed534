// Portable hybrid FC and CONV_2D epilogues and the variant choices (hybrid_epilogue.hpp).
#include "tflite/kernels/hybrid_epilogue.hpp"

#include <algorithm>
#include <cstdint>

#include "tflite/kernels/leaky_relu.hpp"

namespace tickinfer::tfl::kernels {

void hybrid_epilogue_portable(const HybridRow& r, int units, float* y) noexcept {
  for (int o = 0; o < units; ++o) {
    int32_t dot = r.acc[o];
    if (r.row_sums) dot = static_cast<int32_t>(static_cast<float>(dot) - static_cast<float>(r.row_sums[o]) * r.zero_point);
    const float v = y[o] + static_cast<float>(dot) * (r.row_scale * r.filter_scale[o]);
    y[o] = std::min(std::max(v, r.lo), r.hi);
  }
}

void hybrid_conv_epilogue_portable(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                                   float* y) noexcept {
  for (int j = 0; j < n; ++j) {
    const int32_t* a = acc + static_cast<size_t>(j) * acc_step;
    float* out = y + static_cast<size_t>(j) * out_c;
    for (int o = 0; o < out_c; ++o) {
      float v;
      if (q.row_sums) {
        const auto offset = static_cast<uint32_t>(q.zero_point) * static_cast<uint32_t>(q.row_sums[o]);
        v = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(a[o]) - offset)) * q.filter_scale[o] *
            q.input_scale;
      } else {
        v = static_cast<float>(a[o]) * q.input_scale;
      }
      if (q.bias) v += q.bias[o];
      out[o] = std::min(std::max(v, q.lo), q.hi);
    }
    if (q.leaky) leaky_relu_scalar(out, out, out_c, q.alpha);
  }
}

HybridConvEpilogueFn hybrid_conv_epilogue(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<HybridConvEpilogueFn> table;
  table.scalar = hybrid_conv_epilogue_portable;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = hybrid_conv_epilogue_avx2;
  table.avx512 = hybrid_conv_epilogue_avx512;
#endif
  return table.pick(isa);
}

namespace {
inline float side_term(const HybridGateSide& s, int r) {
  const auto offset = static_cast<uint32_t>(s.zero_point) * static_cast<uint32_t>(s.row_sums[r]);
  return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(s.acc[r]) - offset)) * s.scale;
}
}  // namespace

void hybrid_gate_portable(const float* bias, const HybridGateSide& x, const HybridGateSide& h, int n, float* z) noexcept {
  for (int r = 0; r < n; ++r) {
    float v = bias[r];
    if (x.acc) v += side_term(x, r);
    if (h.acc) v += side_term(h, r);
    z[r] = v;
  }
}

HybridGateFn hybrid_gate(::tickinfer::kernels::Isa isa) noexcept {
  ::tickinfer::kernels::IsaVariants<HybridGateFn> table;
  table.scalar = hybrid_gate_portable;
#if defined(TICKINFER_HAVE_X86)
  table.avx2 = hybrid_gate_avx2;
#endif
  return table.pick(isa);
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
