#pragma once
// Cross-process shared-memory feature store: one writer process publishes each instrument's
// latest feature vector; any number of reader processes (model processes) read it without
// locks or syscalls. POSIX shm_open + mmap; layout in docs/features.md ("Shared-memory store").
//
// Layout (64-byte aligned; all shared words are lock-free std::atomic<uint64_t>, address-free so
// valid across processes):
//   Header   magic "TIFSTOR1", layout version, width, slot count, slot stride, feature-set id,
//            writer generation (incremented by every writer that attaches), writer pid,
//            heartbeat (writer's CLOCK_MONOTONIC ns, written by heartbeat()).
//   Slot[i]  seq (seqlock: odd while written), instrument id, update count, exchange ts, bar,
//            flags, then `width` value words (double bits). One slot per spec instrument, in
//            spec order.
//
// Seqlock protocol. Writer: seq <- seq+1 (odd), release fence, store the payload (relaxed),
// seq <- seq+2 (even, release). Reader: s1 <- seq (acquire), retry if odd; copy payload
// (relaxed); acquire fence; s2 <- seq; the copy is consistent iff s1 == s2. A reader never
// returns a torn vector; it retries (bounded by max_retries, then reports Busy).
//
// Staleness: the writer calls heartbeat(now_ns) from its loop; a reader's writer_state(now_ns,
// stale_after_ns) reports Stale when the heartbeat is older than stale_after_ns, and Restarted
// when the writer generation differs from the one seen when the reader attached (the vectors are
// from a new writer; re-validate before trusting them). Errors opening or validating a store are
// tickinfer::Error naming the store and what differs (width, feature set, layout).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "features/feature_spec.hpp"

namespace tickinfer::features {

struct ShmRowMeta {
  std::int64_t ts_ns = 0;
  std::int64_t bar = 0;
  std::uint64_t flags = 0;    // caller-defined (e.g. bit 0 valid, bit 1 window ready)
  std::uint64_t updates = 0;  // publications to this slot so far (0: never written)
};

enum class ShmRead : std::uint8_t { Ok, Empty, Busy };
enum class WriterState : std::uint8_t { Alive, Stale, Restarted };

class ShmMapping {  // an mmap'ed store; unmapped on destruction
 public:
  ShmMapping() = default;
  ShmMapping(void* base, std::size_t size) : base_(base), size_(size) {}
  ~ShmMapping();
  ShmMapping(ShmMapping&& o) noexcept;
  ShmMapping& operator=(ShmMapping&& o) noexcept;
  ShmMapping(const ShmMapping&) = delete;
  ShmMapping& operator=(const ShmMapping&) = delete;
  void* base() const noexcept { return base_; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

class ShmFeatureWriter {
 public:
  // Creates (or re-attaches to a compatible) store `name` ("/tickinfer-features"), sized for
  // spec.instruments x spec.width(); bumps the writer generation. Error on failure.
  ShmFeatureWriter(const std::string& name, const FeatureSpec& spec);
  // Publishes the vector of the slot-th instrument (spec order; slot < spec.instruments.size(),
  // not checked on this path). noexcept, no syscall.
  void publish(std::size_t slot, const double* values, const ShmRowMeta& meta) noexcept;
  void heartbeat(std::int64_t now_ns) noexcept;
  std::size_t width() const noexcept { return width_; }
  std::uint64_t generation() const noexcept { return generation_; }
  // Removes the name (existing mappings stay valid).
  static void unlink(const std::string& name) noexcept;

 private:
  ShmMapping map_;
  std::size_t width_ = 0, slots_ = 0, stride_ = 0;
  std::uint64_t generation_ = 0;
};

class ShmFeatureReader {
 public:
  // Attaches read-only to `name` and checks it holds `spec`'s feature set (id and width). Error
  // otherwise.
  ShmFeatureReader(const std::string& name, const FeatureSpec& spec);
  // Copies slot's latest vector (width values) and its meta. noexcept, lock-free, no syscall.
  // Empty for a slot never written or out of range; Busy if every retry met a write in progress.
  ShmRead read(std::size_t slot, double* values, ShmRowMeta* meta = nullptr, int max_retries = 1000) const noexcept;
  // Slot index of an instrument id, or -1.
  int slot_of(std::uint32_t instrument) const noexcept;
  WriterState writer_state(std::int64_t now_ns, std::int64_t stale_after_ns) const noexcept;
  std::size_t width() const noexcept { return width_; }
  std::size_t slots() const noexcept { return slots_; }

 private:
  ShmMapping map_;
  std::size_t width_ = 0, slots_ = 0, stride_ = 0;
  std::uint64_t generation_seen_ = 0;
};

}  // namespace tickinfer::features
