#include "serving/warmup.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "serving/proto_wire.hpp"
#include "serving/servable.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

constexpr size_t kMaxRecords = 1000;
constexpr int kSyntheticRuns = 64;

void run_all_plans(const Servable& s, size_t batch, const std::vector<std::vector<float>>& in,
                   int iterations, WarmupResult& result) {
  std::vector<const float*> ip;
  for (const auto& v : in) ip.push_back(v.data());
  std::vector<std::vector<float>> out;
  std::vector<float*> op;
  for (const auto& o : s.outputs()) out.emplace_back(batch * o.size);
  for (auto& v : out) op.push_back(v.data());
  for (size_t plan = 0; plan < s.num_plans(); ++plan) {
    for (int it = 0; it < iterations; ++it) {
      s.run(plan, batch, ip.data(), op.data());
      result.runs += batch;
    }
  }
}

}  // namespace

WarmupResult warm_up(const Servable& s, const std::string& version_dir, int iterations) {
  WarmupResult result;
  if (iterations < 1) iterations = 1;
  const auto path = std::filesystem::path(version_dir) / "assets.extra" / "tf_serving_warmup_requests";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    // Synthetic: a deterministic ramp in [-1, 1) for each input.
    std::vector<std::vector<float>> in;
    for (const auto& t : s.inputs()) {
      std::vector<float> v(t.size);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 64) / 32.0f - 1.0f;
      in.push_back(std::move(v));
    }
    run_all_plans(s, 1, in, kSyntheticRuns, result);
    return result;
  }
  const std::string source = path.string();
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read warmup file '" + source + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  const auto records = read_tfrecords(bytes, source, kMaxRecords);
  for (size_t r = 0; r < records.size(); ++r) {
    const std::string where = source + ": record " + std::to_string(r);
    DecodedPredictRequest req;
    if (!decode_prediction_log(records[r], where, req)) continue;  // classify/regress logs
    int64_t batch = -1;
    std::vector<std::vector<float>> in;
    for (const auto& spec : s.inputs()) {
      const auto it = req.inputs.find(spec.name);
      if (it == req.inputs.end()) throw Error(where + ": no input named '" + spec.name + "'");
      const auto& t = it->second;
      const std::vector<int64_t> want(spec.shape.begin(), spec.shape.end());
      if (t.shape.empty() || std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()) != want) {
        throw Error(where + ": input '" + spec.name + "' has the wrong shape for the model");
      }
      if (batch >= 0 && t.shape[0] != batch) throw Error(where + ": inputs differ in batch size");
      batch = t.shape[0];
      in.push_back(t.values);
    }
    if (req.inputs.size() != s.inputs().size()) throw Error(where + ": unexpected extra inputs");
    if (batch <= 0) continue;
    run_all_plans(s, static_cast<size_t>(batch), in, iterations, result);
    ++result.records;
  }
  return result;
}

}  // namespace tickinfer::serving
