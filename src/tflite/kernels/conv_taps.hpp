#pragma once
// How an implicit-GEMM convolution kernel (conv_s8_vnni.hpp, conv_s8_avx2.hpp) finds a
// position's patch: tap by tap where it lies in the input, or one gathered run.
#include <cstdint>

namespace tickinfer::tfl::kernels {

// Where position p's quad q lies: xp[p] + offset[q / quads_per_tap] + 4 * (q % quads_per_tap).
// A gathered patch is one tap of all its quads at offset 0.
struct ConvTaps {
  int taps = 1;
  int quads_per_tap = 0;
  const int32_t* offset = nullptr;  // [taps], elements of the kernel's input (VNNI: bytes)
};

}  // namespace tickinfer::tfl::kernels
