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

#include "features/feature_spec.hpp"
#include "tickinfer/feature_store.hpp"

namespace tickinfer::features {

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

}  // namespace tickinfer::features
