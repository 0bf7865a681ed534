#pragma once
// `tickinfer study`'s outputs: the text table, the JSON, and the HTML page with the
// latency-vs-metric scatter, its Pareto front and the knee drawn as SVG.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tickinfer::cli {

struct StudyRow {
  std::string candidate, variant;
  int64_t params = 0, zeros = 0;
  double p50_ns = 0, p99_ns = 0, max_ns = 0;
  double accuracy = -1, auc = -1, mse = -1;  // -1: not computed for this label kind
  bool on_front = false, knee = false;
};

std::string study_table(const std::vector<StudyRow>& rows, bool direction);
nlohmann::json study_json(const std::vector<StudyRow>& rows, bool direction);
void write_study_html(const std::string& path, const std::vector<StudyRow>& rows, bool direction);

}  // namespace tickinfer::cli
