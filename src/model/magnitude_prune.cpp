#include "model/magnitude_prune.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace tickinfer {

void magnitude_prune(Weight& w, double share, bool blocks) {
  const int K = w.shape[0], N = w.shape[1];
  const int group = blocks ? 16 : 1, per_row = (N + group - 1) / group;
  std::vector<std::pair<double, int>> score;  // (mean |w|, group index)
  score.reserve(static_cast<size_t>(K) * per_row);
  for (int k = 0; k < K; ++k) {
    for (int g = 0; g < per_row; ++g) {
      double s = 0;
      int n = 0;
      for (int j = g * group; j < std::min(N, (g + 1) * group); ++j, ++n) {
        s += std::fabs(w.data[static_cast<size_t>(k) * N + j]);
      }
      score.push_back({s / n, k * per_row + g});
    }
  }
  std::stable_sort(score.begin(), score.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t drop = static_cast<size_t>(std::llround(share * static_cast<double>(score.size())));
  for (size_t i = 0; i < drop && i < score.size(); ++i) {
    const int k = score[i].second / per_row, g = score[i].second % per_row;
    for (int j = g * group; j < std::min(N, (g + 1) * group); ++j) w.data[static_cast<size_t>(k) * N + j] = 0.0f;
  }
}

Graph magnitude_pruned(Graph g, double share, bool blocks, size_t min_size) {
  for (Node& n : g.nodes) {
    for (Weight& w : n.weights) {
      if (w.shape.size() == 2 && w.data.size() >= min_size) magnitude_prune(w, share, blocks);
    }
  }
  return g;
}

}  // namespace tickinfer
