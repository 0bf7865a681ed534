// Packing and dispatch of the VNNI gate matrix (lstm_vnni_gates.hpp).
#include "tflite/ops/lstm/lstm_vnni_gates.hpp"

#include <cstring>

namespace tickinfer::tfl::ops::lstm {

void VnniGates::init(const int8_t* w, int rows, int cols, const int32_t* bias, const int32_t* multiplier,
                     const int32_t* shift) {
  groups_ = (rows + kGroupRows - 1) / kGroupRows;
  quads_ = (cols + 3) / 4;
  const size_t padded = static_cast<size_t>(padded_rows());
  packed_bytes_ = padded * 4 * static_cast<size_t>(quads_);
  const size_t bytes = packed_bytes_ + static_cast<size_t>(groups_) * kVnniRoundingBytes + padded * sizeof(int32_t);
  storage_.assign(bytes + 63, 0);
  offset_ = (64 - reinterpret_cast<uintptr_t>(storage_.data()) % 64) % 64;
  int8_t* base = storage_.data() + offset_;
  auto* bias_out = reinterpret_cast<int32_t*>(base + packed_bytes_ + static_cast<size_t>(groups_) * kVnniRoundingBytes);
  std::vector<int32_t> m(padded, 0), s(padded, 0);
  for (int r = 0; r < rows; ++r) {
    const int g = r / kGroupRows, lane = r % kGroupRows;
    uint32_t sum = 0;  // wraps like the int32 accumulators
    for (int c = 0; c < cols; ++c) {
      const int8_t v = w[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)];
      const size_t at = ((static_cast<size_t>(g) * static_cast<size_t>(quads_) + static_cast<size_t>(c / 4)) * kGroupRows +
                         static_cast<size_t>(lane)) * 4 + static_cast<size_t>(c % 4);
      base[at] = v;
      sum += static_cast<uint32_t>(static_cast<int32_t>(v));
    }
    const size_t k = static_cast<size_t>(r);
    bias_out[k] = static_cast<int32_t>(static_cast<uint32_t>(bias[k]) - 128u * sum);
    m[k] = multiplier[k];
    s[k] = shift[k];
  }
#if defined(TICKINFER_HAVE_X86)
  kernels::double_rounding_constants16(m.data(), s.data(), groups_ * kGroupRows, base + packed_bytes_);
#endif
}

void VnniGates::input_terms(const uint8_t* xu8, size_t x_stride, int len, int used_rows, int16_t* gx,
                            size_t gx_stride) const noexcept {
#if defined(TICKINFER_HAVE_X86)
  const int groups = (used_rows + kGroupRows - 1) / kGroupRows;
  lstm_input_terms_vnni(packed(), groups, quads_, bias(), rounding(), xu8, x_stride, len, gx, gx_stride);
#else
  (void)xu8, (void)x_stride, (void)len, (void)used_rows, (void)gx, (void)gx_stride;
#endif
}

void VnniGates::recurrent(const uint8_t* hu8, int used_rows, const int16_t* gx, int16_t* gate) const noexcept {
#if defined(TICKINFER_HAVE_X86)
  const int groups = (used_rows + kGroupRows - 1) / kGroupRows;
  lstm_recurrent_gates_vnni(packed(), groups, quads_, bias(), rounding(), hu8, gx, gate);
#else
  (void)hu8, (void)used_rows, (void)gx, (void)gate;
#endif
}

}  // namespace tickinfer::tfl::ops::lstm
