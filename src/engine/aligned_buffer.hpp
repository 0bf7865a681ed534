#pragma once
// A fixed-size, 64-byte aligned float buffer, allocated once (at compile time) and never resized:
// the kernels' aligned vector (kernels/aligned_allocator.hpp) behind a fixed size, move only.
#include <cstddef>

#include "kernels/aligned_allocator.hpp"

namespace tickinfer::engine {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Zero-filled; size in floats, the storage rounded up to a whole cache line.
  explicit AlignedBuffer(size_t floats) : data_((floats + 15) / 16 * 16, 0.0f), size_(floats) {}
  AlignedBuffer(AlignedBuffer&&) noexcept = default;
  AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  float* data() noexcept { return data_.data(); }
  const float* data() const noexcept { return data_.data(); }
  size_t size() const noexcept { return size_; }

 private:
  kernels::AlignedVector<float> data_;
  size_t size_ = 0;
};

}  // namespace tickinfer::engine
