#pragma once
// The numbers `tickinfer study` ranks candidates by: validation metrics computed from a model's
// outputs and the labels, and the latency-vs-metric Pareto front with its knee.
#include <cstddef>
#include <string>
#include <vector>

namespace tickinfer::stats {

// Direction (labels 0/1, one sigmoid output or two softmax outputs): accuracy at 0.5 / argmax, and
// ROC AUC (ties count half, the Mann-Whitney statistic). Returns (regression): mean squared error.
// scores: one per row (the class-1 probability); labels: 0 or 1.
double accuracy(const std::vector<float>& scores, const std::vector<float>& labels);
double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels);
double mse(const std::vector<float>& predictions, const std::vector<float>& targets);

struct StudyPoint {
  double latency_ns = 0;  // p50
  double metric = 0;      // higher is better (callers negate MSE)
};

// Indices of the points no other point beats on both axes (lower latency, higher metric), by
// ascending latency.
std::vector<size_t> pareto_front(const std::vector<StudyPoint>& points);

// The knee: the fastest point whose metric is within `tolerance` of the best metric (the
// structure where latency falls and accuracy holds). Points must be non-empty.
size_t knee(const std::vector<StudyPoint>& points, double tolerance);

}  // namespace tickinfer::stats
