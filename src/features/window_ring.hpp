#pragma once
// The last T feature rows of one instrument, laid out so the engine can read them in place.
//
// Double-written ring: storage holds 2T rows; row k is written at slots k % T and k % T + T.
// After any push, the last T rows oldest-to-newest are the contiguous slots
// [pos, pos + T) where pos = pushes % T, so view() is a pointer into the ring with no copy
// (a [T, width] row-major float block, the engine's sequence input layout). Costs one extra
// row write per push. Also tracks how many rows in the window are unusable (invalid rows, or
// rows with a NaN such as a standardized row before the first fit) so ready() is O(1).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::features {

class WindowRing {
 public:
  WindowRing(std::size_t rows, std::size_t width)
      : rows_(rows), width_(width), data_(2 * rows * width, 0.0f), unusable_(rows, 0) {}

  std::size_t rows() const noexcept { return rows_; }
  std::size_t width() const noexcept { return width_; }
  std::size_t filled() const noexcept { return filled_; }
  // Rows in the current window that must not reach a model.
  std::size_t unusable() const noexcept { return unusable_count_; }
  // T rows present and all usable: a sequence model may run on view().
  bool ready() const noexcept { return filled_ == rows_ && unusable_count_ == 0; }

  // Appends a row (double values narrowed to float, the engine's input type). usable=false
  // marks it invalid; a NaN in the row also makes it unusable.
  void push(const double* row, bool usable) noexcept {
    float* a = &data_[pos_ * width_];
    float* b = &data_[(pos_ + rows_) * width_];
    for (std::size_t i = 0; i < width_; ++i) {
      const float v = static_cast<float>(row[i]);
      a[i] = v;
      b[i] = v;
      usable = usable && !std::isnan(v);
    }
    if (filled_ == rows_) unusable_count_ -= unusable_[pos_];
    else ++filled_;
    unusable_[pos_] = usable ? 0 : 1;
    unusable_count_ += unusable_[pos_];
    pos_ = pos_ + 1 == rows_ ? 0 : pos_ + 1;
  }

  // [rows, width] floats, oldest row first; meaningful once filled() == rows().
  const float* view() const noexcept { return &data_[pos_ * width_]; }
  // The newest row.
  const float* last() const noexcept { return &data_[(pos_ + rows_ - 1) * width_]; }

 private:
  std::size_t rows_, width_;
  std::vector<float> data_;
  std::vector<std::uint8_t> unusable_;
  std::size_t pos_ = 0, filled_ = 0, unusable_count_ = 0;
};

}  // namespace tickinfer::features
