#pragma once
// Test models with pruned weights, made from a committed model: in every 2-D weight (a Dense
// kernel, an LSTM/GRU kernel or recurrent kernel) of at least `min_size` weights, the given share
// of its 1 x 16 blocks (one input row x 16 consecutive output columns, aligned at 16: the pattern
// tickinfer.pruning's block=(1, 16) writes) with the smallest mean |w| is set to zero, or
// (blocks = false) the given share of single weights, as unstructured magnitude pruning does.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/graph.hpp"

namespace tickinfer::testing {

inline void prune_weight(Weight& w, double share, bool blocks) {
  const int K = w.shape[0], N = w.shape[1];
  const int group = blocks ? 16 : 1, groups_per_row = (N + group - 1) / group;
  std::vector<std::pair<double, int>> score;  // (mean |w|, group index)
  for (int k = 0; k < K; ++k) {
    for (int g = 0; g < groups_per_row; ++g) {
      double s = 0;
      int n = 0;
      for (int j = g * group; j < std::min(N, (g + 1) * group); ++j, ++n) s += std::fabs(w.data[k * N + j]);
      score.push_back({s / n, k * groups_per_row + g});
    }
  }
  std::sort(score.begin(), score.end());
  const size_t drop = static_cast<size_t>(std::llround(share * static_cast<double>(score.size())));
  for (size_t i = 0; i < drop; ++i) {
    const int k = score[i].second / groups_per_row, g = score[i].second % groups_per_row;
    for (int j = g * group; j < std::min(N, (g + 1) * group); ++j) w.data[k * N + j] = 0.0f;
  }
}

inline Graph pruned_graph(Graph g, double share, bool blocks, size_t min_size = 1024) {
  for (Node& n : g.nodes) {
    for (Weight& w : n.weights) {
      if (w.shape.size() == 2 && w.data.size() >= min_size) prune_weight(w, share, blocks);
    }
  }
  return g;
}

}  // namespace tickinfer::testing
