#pragma once
// Fixed-capacity rings for the incremental features: storage is allocated once in the
// constructor; push/pop/at are O(1), noexcept and never allocate.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::features {

// FIFO of the last `capacity` values. push() on a full ring overwrites the oldest value (the
// caller reads it first with front() when it needs the value leaving the window).
template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity = 1) : data_(capacity ? capacity : 1) {}
  std::size_t capacity() const noexcept { return data_.size(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  bool full() const noexcept { return size_ == data_.size(); }
  void push(const T& v) noexcept {
    data_[tail_] = v;
    tail_ = next(tail_);
    if (size_ == data_.size()) head_ = next(head_);
    else ++size_;
  }
  void pop_front() noexcept {
    head_ = next(head_);
    --size_;
  }
  const T& front() const noexcept { return data_[head_]; }
  // i = 0 is the oldest value, size()-1 the newest.
  const T& at(std::size_t i) const noexcept {
    std::size_t j = head_ + i;
    if (j >= data_.size()) j -= data_.size();
    return data_[j];
  }
  const T& back() const noexcept { return at(size_ - 1); }
  void clear() noexcept { head_ = tail_ = size_ = 0; }

 private:
  std::size_t next(std::size_t i) const noexcept { return i + 1 == data_.size() ? 0 : i + 1; }
  std::vector<T> data_;
  std::size_t head_ = 0, tail_ = 0, size_ = 0;
};

// A running sum with error compensation (Knuth's TwoSum: the exact rounding error of every
// addition is accumulated separately), so adding and removing values over millions of window
// slides keeps the error near one rounding of the true window sum (the reference is a fresh sum
// of the window). Branch-free on purpose: Neumaier's |sum| >= |x| test mispredicts on
// sign-changing data like returns, which cost more than the two extra flops.
class CompensatedSum {
 public:
  void add(double x) noexcept {
    const double t = sum_ + x;
    const double bp = t - sum_;
    comp_ += (sum_ - (t - bp)) + (x - bp);
    sum_ = t;
  }
  void sub(double x) noexcept { add(-x); }
  double value() const noexcept { return sum_ + comp_; }
  void reset() noexcept { sum_ = comp_ = 0.0; }

 private:
  double sum_ = 0.0, comp_ = 0.0;
};

}  // namespace tickinfer::features
