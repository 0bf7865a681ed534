#pragma once
// Single-producer single-consumer ring of trivially copyable T, in the Aeron/Agrona style:
//   * capacity is a power of two; slots are indexed by position & (capacity - 1);
//   * positions are monotonically growing int64 counters (never wrap in practice: 2^63 items);
//   * each side keeps a cached copy of the other side's position and reloads it (acquire) only
//     when the cache says the ring looks full (producer) or empty (consumer);
//   * the producer's and the consumer's hot fields sit on separate 64-byte cache lines (with
//     padding before and after) so the two cores never false-share.
// Storage is allocated once in the constructor. try_push/try_claim/try_pop never allocate, lock,
// block or make a system call; they return false/nullptr when the ring is full/empty.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>

namespace tickinfer {

template <typename T>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "SpscRing holds trivially copyable items");

 public:
  // capacity: a power of two >= 2; throws std::invalid_argument otherwise.
  explicit SpscRing(std::size_t capacity)
      : capacity_(static_cast<std::int64_t>(capacity)), mask_(static_cast<std::int64_t>(capacity) - 1) {
    if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
      throw std::invalid_argument("SpscRing: capacity must be a power of two >= 2");
    }
    slots_ = std::make_unique<T[]>(capacity);
  }

  // Producer thread only.
  bool try_push(const T& item) noexcept {
    const std::int64_t tail = producer_.position.load(std::memory_order_relaxed);
    if (tail - producer_.cached_other >= capacity_) {
      producer_.cached_other = consumer_.position.load(std::memory_order_acquire);
      if (tail - producer_.cached_other >= capacity_) return false;
    }
    slots_[tail & mask_] = item;
    producer_.position.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Producer thread only, zero-copy: the next free slot to fill in place, or nullptr when full.
  // Nothing is visible to the consumer until commit(). Building an item field by field on the
  // stack and then copying it in (try_push) makes the CPU reload freshly stored bytes with wider
  // loads, which defeats store-to-load forwarding; writing into the slot avoids that copy.
  T* try_claim() noexcept {
    const std::int64_t tail = producer_.position.load(std::memory_order_relaxed);
    if (tail - producer_.cached_other >= capacity_) {
      producer_.cached_other = consumer_.position.load(std::memory_order_acquire);
      if (tail - producer_.cached_other >= capacity_) return nullptr;
    }
    return &slots_[tail & mask_];
  }
  // Publishes the slot returned by the last successful try_claim().
  void commit() noexcept {
    producer_.position.store(producer_.position.load(std::memory_order_relaxed) + 1,
                             std::memory_order_release);
  }

  // Consumer thread only.
  bool try_pop(T& out) noexcept {
    const std::int64_t head = consumer_.position.load(std::memory_order_relaxed);
    if (head >= consumer_.cached_other) {
      consumer_.cached_other = producer_.position.load(std::memory_order_acquire);
      if (head >= consumer_.cached_other) return false;
    }
    out = slots_[head & mask_];
    consumer_.position.store(head + 1, std::memory_order_release);
    return true;
  }

  std::size_t capacity() const noexcept { return static_cast<std::size_t>(capacity_); }
  // Approximate when called from a third thread; exact from either side when the other is idle.
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(producer_.position.load(std::memory_order_acquire) -
                                    consumer_.position.load(std::memory_order_acquire));
  }

 private:
  struct alignas(64) Side {
    std::atomic<std::int64_t> position{0};  // this side's next position
    std::int64_t cached_other = 0;          // last loaded position of the other side
    char pad[64 - sizeof(std::atomic<std::int64_t>) - sizeof(std::int64_t)];
  };
  char pad_before_[64];
  Side producer_;
  Side consumer_;
  const std::int64_t capacity_;
  const std::int64_t mask_;
  std::unique_ptr<T[]> slots_;
  char pad_after_[64];
};

}  // namespace tickinfer
