// The filter packings and the input forms of the implicit-GEMM convolutions (conv_s8_vnni.hpp,
// conv_s8_avx2.hpp): plain C++, run at prepare and once per call.
#include <cstring>

#include "tflite/kernels/conv_s8_avx2.hpp"
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

void pack_conv_s16_avx2(const int8_t* w, int rows, int cols, int16_t* packed) noexcept {
  const int quads = (cols + 3) / 4;
  std::memset(packed, 0, sizeof(int16_t) * conv_avx2_packed_elements(rows, cols));
  for (int r = 0; r < rows; ++r) {
    int16_t* block = packed + static_cast<size_t>(r / kConvAvx2BlockRows) * quads * 4 * kConvAvx2BlockRows;
    const int lane = r % kConvAvx2BlockRows;
    for (int c = 0; c < cols; ++c) {
      // quad c / 4; its vector (c % 4) / 2; the lane's pair, element c % 2.
      const size_t at = (static_cast<size_t>(c / 4) * 2 + (c % 4) / 2) * 2 * kConvAvx2BlockRows + lane * 2 + c % 2;
      block[at] = w[static_cast<size_t>(r) * cols + c];
    }
  }
}

void widen_s8_to_s16(const int8_t* x, size_t n, int16_t* out) noexcept {
  for (size_t i = 0; i < n; ++i) out[i] = x[i];
}

}  // namespace tickinfer::tfl::kernels
