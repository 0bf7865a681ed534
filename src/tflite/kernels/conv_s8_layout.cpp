// The filter packing and the input offset of the VNNI implicit-GEMM convolution
// (conv_s8_vnni.hpp): plain C++, run at prepare and once per call.
#include <cstring>

#include "tflite/kernels/conv_s8_vnni.hpp"

namespace tickinfer::tfl::kernels {

void pack_conv_s8_vnni(const int8_t* w, int rows, int cols, int8_t* packed) noexcept {
  const int quads = conv_vnni_quads(cols);
  const int groups = conv_vnni_padded_rows(rows) / kConvVnniLanes;
  std::memset(packed, 0, conv_vnni_packed_bytes(rows, cols));
  for (int g = 0; g < groups; ++g) {
    int8_t* group = packed + static_cast<size_t>(g) * quads * 4 * kConvVnniLanes;
    for (int lane = 0; lane < kConvVnniLanes; ++lane) {
      const int r = g * kConvVnniLanes + lane;
      if (r >= rows) break;
      for (int c = 0; c < cols; ++c) {
        group[(static_cast<size_t>(c / 4) * kConvVnniLanes + lane) * 4 + c % 4] = w[static_cast<size_t>(r) * cols + c];
      }
    }
  }
}

void offset_s8_to_u8(const int8_t* x, size_t n, uint8_t* out) noexcept {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(static_cast<uint8_t>(x[i]) ^ 0x80u);
}

}  // namespace tickinfer::tfl::kernels
