#pragma once
// Offsets in one arena for buffers with known lifetimes, shared by the TFLite interpreter and the
// CPU plan of a Keras graph: greedy first-fit by decreasing size (what TFLite's arena planner and
// XNNPACK do in spirit). A buffer may share bytes with any buffer whose lifetime does not overlap
// its own; every offset is a multiple of kArenaAlign.
#include <cstddef>
#include <vector>

namespace tickinfer {

inline constexpr size_t kArenaAlign = 64;

inline size_t arena_align_up(size_t v) { return (v + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }

struct ArenaLifetime {
  int id = -1;           // the caller's name for the buffer
  int first = 0, last = 0;  // live over [first, last] (op indices, inclusive)
  size_t bytes = 0;
  size_t offset = 0;     // set by plan_arena
};

// Sets every offset and returns the arena's size in bytes. reuse = false gives every buffer its
// own bytes (a debugging layout: every intermediate stays readable after a run).
size_t plan_arena(std::vector<ArenaLifetime>& lives, bool reuse);

}  // namespace tickinfer
