#pragma once
// A fixed-size array for the book's large tables, placed on 2 MiB boundaries and advised for
// transparent huge pages: the order pool and the order index are read at random over hundreds of
// megabytes, and with 4 KiB pages nearly every access would also miss the TLB. Elements are
// value-initialized at construction, which also touches (commits) every page up front rather than
// on the hot path.
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace tickinfer::book {

// Throws std::bad_alloc. Sizes of 2 MiB and up are 2 MiB-aligned and advised for huge pages.
void* allocate_huge(std::size_t bytes);
void release_huge(void* p) noexcept;

template <class T>
class HugeArray {
 public:
  HugeArray() = default;
  explicit HugeArray(std::size_t n) : data_(static_cast<T*>(allocate_huge(n * sizeof(T)))), size_(n) {
    std::uninitialized_value_construct_n(data_, n);
  }
  ~HugeArray() { release_huge(data_); }
  HugeArray(HugeArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  HugeArray& operator=(HugeArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }

  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* get() noexcept { return data_; }
  const T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tickinfer::book
