#pragma once
// Standardization parameters (mean and scale per feature) published by one writer (the refit
// agent) to one or more readers (the hot path) without locks.
//
// Protocol: two slots, each guarded by its own sequence counter (odd while being written).
// publish() writes the slot not currently active, then flips `active_` with a release store
// and bumps `generation_`. read() loads the active slot between two sequence reads and retries
// if the slot was being rewritten meanwhile, so a reader never returns a mix of two parameter
// sets. The hot path calls generation() (one acquire load) per row and copies the parameters
// only when it changed. All shared words are atomics: clean under ThreadSanitizer.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace tickinfer::features {

class PublishedParams {
 public:
  explicit PublishedParams(std::size_t width)
      : width_(width), slots_{Slot(width), Slot(width)} {}

  std::size_t width() const noexcept { return width_; }
  // 0 until the first publish; increases by one per publish.
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }

  // Single writer. mean/scale: width values each.
  void publish(const double* mean, const double* scale) noexcept {
    const int s = 1 - active_.load(std::memory_order_relaxed);
    Slot& slot = slots_[s];
    const std::uint64_t v = slot.seq.load(std::memory_order_relaxed);
    slot.seq.store(v + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t i = 0; i < width_; ++i) {
      slot.words[i].store(bits(mean[i]), std::memory_order_relaxed);
      slot.words[width_ + i].store(bits(scale[i]), std::memory_order_relaxed);
    }
    slot.seq.store(v + 2, std::memory_order_release);
    active_.store(s, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }

  // Copies the latest complete parameter set; returns its generation (0: nothing published,
  // outputs untouched). Lock-free; retries only while the writer rewrites the slot it reads.
  std::uint64_t read(double* mean, double* scale) const noexcept {
    for (;;) {
      const std::uint64_t g = generation_.load(std::memory_order_acquire);
      if (g == 0) return 0;
      const Slot& slot = slots_[active_.load(std::memory_order_acquire)];
      const std::uint64_t v1 = slot.seq.load(std::memory_order_acquire);
      if (v1 & 1) continue;
      for (std::size_t i = 0; i < width_; ++i) {
        mean[i] = value(slot.words[i].load(std::memory_order_relaxed));
        scale[i] = value(slot.words[width_ + i].load(std::memory_order_relaxed));
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (slot.seq.load(std::memory_order_relaxed) == v1) return g;
    }
  }

 private:
  static std::uint64_t bits(double d) noexcept {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  }
  static double value(std::uint64_t u) noexcept {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
  }
  struct Slot {
    explicit Slot(std::size_t width) : words(new std::atomic<std::uint64_t>[2 * width]()) {}
    alignas(64) std::atomic<std::uint64_t> seq{0};
    std::unique_ptr<std::atomic<std::uint64_t>[]> words;  // mean[width], then scale[width]
  };
  std::size_t width_;
  Slot slots_[2];
  alignas(64) std::atomic<int> active_{0};
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace tickinfer::features
