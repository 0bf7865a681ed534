#include "model/arena_plan.hpp"

#include <algorithm>
#include <utility>

namespace tickinfer {

size_t plan_arena(std::vector<ArenaLifetime>& lives, bool reuse) {
  std::vector<size_t> order(lives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lives[a].bytes > lives[b].bytes; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;
  size_t total = 0;
  for (size_t idx : order) {
    ArenaLifetime& cur = lives[idx];
    size_t offset = 0;
    if (reuse) {
      // The placed buffers alive at the same time, sorted by offset; take the first gap.
      busy.clear();
      for (size_t p : placed) {
        const ArenaLifetime& o = lives[p];
        if (o.first <= cur.last && cur.first <= o.last) busy.emplace_back(o.offset, o.offset + arena_align_up(o.bytes));
      }
      std::sort(busy.begin(), busy.end());
      for (const auto& [lo, hi] : busy) {
        if (offset + arena_align_up(cur.bytes) <= lo) break;
        offset = std::max(offset, hi);
      }
    } else {
      offset = total;
    }
    cur.offset = offset;
    total = std::max(total, offset + arena_align_up(cur.bytes));
    placed.push_back(idx);
  }
  return total;
}

}  // namespace tickinfer
