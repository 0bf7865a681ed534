#pragma once
// Shared-memory feature ring: every feature vector a pipeline computes, as a stream, to any
// number of consumer processes at once ([features] ring = "NAME" of `tickinfer run`). Where the
// feature store (shm_feature_store.hpp) keeps each instrument's latest vector, the ring keeps
// the last `capacity` publications in order, for consumers that want every update.
//
// One writer, many readers, none of which can slow the writer down (the signal ring's protocol,
// pipeline/signal_ring.hpp, with the payload in atomic words like the store's):
//   * the writer never waits: publication p goes to slot p % capacity, whose sequence word is set
//     to 2p+1 (busy) before the payload and 2p+2 (done) after; then write_position = p+1;
//   * each reader keeps its own position. It reads the sequence word, copies the payload, reads
//     the word again: anything but 2p+2 both times means the writer lapped it there; a reader more
//     than `capacity` behind jumps to the oldest record still held. Either way it counts what it
//     lost (missed()) and knows how far behind it is (lag()).
// Layout (docs/features.md "Shared-memory feature ring"): a header of three cache lines (magic
// "TIFRING1", version, width, capacity, slot stride, feature-set id, writer pid; then the write
// position alone on its line), the slots, then the feature set's and columns' names (64 bytes
// each). Writer and reader throw tickinfer::Error naming the object when it cannot be created or
// is not a feature ring; publish() and poll() never throw, allocate or make a syscall.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "features/feature_spec.hpp"
#include "tickinfer/feature_store.hpp"

namespace tickinfer::features {

// One record: what a store entry holds, for one publication.
struct RingRecord {
  std::uint32_t instrument = 0;
  std::uint64_t tick_seq = 0;
  std::int64_t ts_ns = 0;         // exchange time
  std::int64_t published_ns = 0;  // the writer's CLOCK_REALTIME
  std::uint64_t flags = 0;        // kShmAllWarm, kShmWindowReady
};

class FeatureRingWriter {
 public:
  // Creates (or re-creates, resetting it) the ring `name` ("/x") for spec's vectors, `capacity`
  // records (a power of two >= 2).
  FeatureRingWriter(const std::string& name, const FeatureSpec& spec, std::size_t capacity);
  void publish(const RingRecord& r, const double* values) noexcept;
  std::uint64_t published() const noexcept { return position_; }
  static void unlink(const std::string& name) noexcept;

 private:
  ShmMapping map_;
  std::size_t width_ = 0, stride_ = 0;
  std::uint64_t mask_ = 0, position_ = 0;
};

class FeatureRingReader {
 public:
  // Attaches read-only. from_start: begin at the oldest record still held; else at the next.
  FeatureRingReader(const std::string& name, bool from_start);
  // The next record and its width values: true if one was read.
  bool poll(RingRecord& r, double* values) noexcept;
  std::uint64_t missed() const noexcept { return missed_; }  // lost: overwritten before it was read
  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t write_position() const noexcept;
  std::uint64_t lag() const noexcept;  // records published and not yet read (may exceed capacity)
  std::size_t width() const noexcept { return width_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t feature_set_id() const noexcept { return set_id_; }
  const std::string& set_name() const noexcept { return set_name_; }
  const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  ShmMapping map_;
  std::size_t width_ = 0, stride_ = 0;
  std::uint64_t capacity_ = 0, mask_ = 0, position_ = 0, missed_ = 0, set_id_ = 0;
  std::string set_name_;
  std::vector<std::string> names_;
};

}  // namespace tickinfer::features
