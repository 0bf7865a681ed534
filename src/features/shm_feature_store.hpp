#pragma once
// Cross-process shared-memory feature store: one writer process (`tickinfer run`, [features] shm)
// publishes each instrument's latest feature vector; any number of reader processes (a strategy,
// a notebook, `tickinfer features --watch`) read it without locks or syscalls. POSIX shm_open +
// mmap; layout in docs/features.md ("Shared-memory store").
//
// Layout v2 (64-byte aligned; every shared word is a lock-free std::atomic<uint64_t>, address-free
// so valid across processes):
//   Header   line 0: magic "TIFSTOR1", layout version, width, slot count, slot stride, feature-set
//            id, writer generation (incremented by every writer that attaches), writer pid;
//            line 1: entry TTL (ns, 0 = none); line 2: heartbeat (the writer's CLOCK_REALTIME ns).
//   Slot[i]  seq (seqlock: odd while written), instrument id, update count, exchange ts, bar,
//            flags, published (the writer's CLOCK_REALTIME ns), tick sequence, then `width` value
//            words (double bits). One slot per spec instrument, in spec order.
//   Names    after the slots, 64 bytes each: the feature set's name, then every feature's column
//            name, NUL-padded (a reader needs no spec to label what it reads).
//
// Seqlock protocol. Writer: seq <- seq+1 (odd), release fence, store the payload (relaxed),
// seq <- seq+2 (even, release). Reader: s1 <- seq (acquire), retry if odd; copy payload
// (relaxed); acquire fence; s2 <- seq; the copy is consistent iff s1 == s2. A reader never
// returns a torn vector; it retries (bounded by max_retries, then reports Busy).
//
// Staleness, two kinds. Per entry: an entry published more than the store's TTL before the
// reader's now_ns reads as Stale (values and meta are still copied: the reader decides). Per
// writer: writer_state(now_ns, stale_after_ns) reports Stale when the heartbeat is older than
// stale_after_ns, and Restarted when the writer generation differs from the one seen when the
// reader attached (the vectors are from a new writer; re-validate before trusting them). Both
// clocks are CLOCK_REALTIME so any process on the host (Python's time.time_ns()) compares them.
// Errors opening or validating a store are tickinfer::Error naming the store and what differs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "features/feature_spec.hpp"
#include "tickinfer/feature_store.hpp"

namespace tickinfer::features {

class ShmFeatureWriter {
 public:
  // Creates (or re-attaches to a compatible) store `name` ("/tickinfer-features"), sized for
  // spec.instruments x spec.width(); bumps the writer generation. ttl_ns: how long after its
  // publication an entry reads as fresh (0: always). Error on failure.
  ShmFeatureWriter(const std::string& name, const FeatureSpec& spec, std::int64_t ttl_ns = 0);
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

}  // namespace tickinfer::features
