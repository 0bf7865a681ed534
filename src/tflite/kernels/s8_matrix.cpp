// Assembling and packing an int8 weight matrix (s8_matrix.hpp).
#include "tflite/kernels/s8_matrix.hpp"

#include <cstring>

namespace tickinfer::tfl::kernels {

void S8Matrix::init(int n_rows, int n_cols) {
  rows = n_rows;
  cols = n_cols;
  stride = 0;
  plain.assign(static_cast<size_t>(rows) * static_cast<size_t>(cols), 0);
  packed.clear();
}

void S8Matrix::set_rows(int row0, const int8_t* w, int n) {
  std::memcpy(plain.data() + static_cast<size_t>(row0) * static_cast<size_t>(cols), w,
              static_cast<size_t>(n) * static_cast<size_t>(cols));
}

void S8Matrix::pack(const S8Kernels& k) {
  stride = k.stride(cols);
  packed.assign(s8_packed_bytes(rows, cols), 0);
  k.pack(plain.data(), rows, cols, packed.data());
  plain = {};
}

}  // namespace tickinfer::tfl::kernels
