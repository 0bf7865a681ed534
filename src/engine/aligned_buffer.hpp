#pragma once
// A fixed-size, 64-byte aligned float buffer, allocated once (at compile time) and never resized.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace tickinfer::engine {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Zero-filled; size in floats, rounded up to a whole cache line.
  explicit AlignedBuffer(size_t floats) : size_(floats) {
    if (floats == 0) return;
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, bytes);
  }
  float* data() noexcept { return data_.get(); }
  const float* data() const noexcept { return data_.get(); }
  size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(float* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  size_t size_ = 0;
};

}  // namespace tickinfer::engine
