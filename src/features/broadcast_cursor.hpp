#pragma once
// The read side of the one-writer broadcast protocol the feature ring and the signal ring
// (pipeline/signal_ring.hpp) both follow: a reader at `position` with the writer at `written`.
#include <cstdint>

namespace tickinfer::features {

// Whether a record is there to read at `position`. A reader lapped by more than `capacity` jumps
// to the oldest record still held and adds what it skipped to `missed`; a reader ahead of the
// writer (the ring was re-created) comes back to the writer's position.
inline bool broadcast_next(std::uint64_t written, std::uint64_t capacity, std::uint64_t& position,
                           std::uint64_t& missed) noexcept {
  if (position >= written) {
    position = written;
    return false;
  }
  if (written - position > capacity) {
    missed += written - capacity - position;
    position = written - capacity;
  }
  return true;
}

}  // namespace tickinfer::features
