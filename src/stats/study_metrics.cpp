#include "stats/study_metrics.hpp"

#include <algorithm>
#include <numeric>

namespace tickinfer::stats {

double accuracy(const std::vector<float>& scores, const std::vector<float>& labels) {
  size_t right = 0;
  for (size_t i = 0; i < scores.size(); ++i) right += (scores[i] > 0.5f) == (labels[i] > 0.5f);
  return scores.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(scores.size());
}

double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  // Rank the scores (ties get their average rank); AUC = (R1 - n1 (n1 + 1) / 2) / (n1 n0).
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double rank_sum = 0, n1 = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j - 1)) / 2.0 + 1.0;
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0.5f) {
        rank_sum += avg;
        n1 += 1;
      }
    }
    i = j;
  }
  const double n0 = static_cast<double>(scores.size()) - n1;
  if (n1 == 0 || n0 == 0) return 0.5;
  return (rank_sum - n1 * (n1 + 1) / 2.0) / (n1 * n0);
}

double mse(const std::vector<float>& predictions, const std::vector<float>& targets) {
  double s = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const double d = static_cast<double>(predictions[i]) - targets[i];
    s += d * d;
  }
  return predictions.empty() ? 0.0 : s / static_cast<double>(predictions.size());
}

std::vector<size_t> pareto_front(const std::vector<StudyPoint>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].latency_ns < points[b].latency_ns ||
           (points[a].latency_ns == points[b].latency_ns && points[a].metric > points[b].metric);
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    if (front.empty() || points[i].metric > points[front.back()].metric) front.push_back(i);
  }
  return front;
}

size_t knee(const std::vector<StudyPoint>& points, double tolerance) {
  double best = points[0].metric;
  for (const auto& p : points) best = std::max(best, p.metric);
  size_t k = 0;
  bool found = false;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].metric + tolerance < best) continue;
    if (!found || points[i].latency_ns < points[k].latency_ns) k = i;
    found = true;
  }
  return k;
}

}  // namespace tickinfer::stats
