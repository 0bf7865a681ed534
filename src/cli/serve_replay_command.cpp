// `tickinfer replay SERVE_LOG --model VERSION`: re-runs the inputs a `tickinfer serve` request log
// (--request_log_file) recorded, REST and gRPC calls alike, through another model version (a
// version folder or a model file) and reports which outputs change. The replay runs the model the
// way the server does (serving::Servable), so the same version gives the same bits. The logged
// inputs are checked against their fingerprints first: a difference is the model's, not the data's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "serving/request_log_format.hpp"
#include "serving/servable.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

namespace {

std::string utc(int64_t wall_ns) {
  const time_t secs = static_cast<time_t>(wall_ns / 1000000000);
  tm t{};
  gmtime_r(&secs, &t);
  char b[80];
  std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                t.tm_hour, t.tm_min, t.tm_sec, static_cast<long long>((wall_ns % 1000000000) / 1000));
  return b;
}

struct ReplayCounts {
  uint64_t total = 0, not_ok = 0, without_inputs = 0, bad_fingerprint = 0, mismatched = 0, replayed = 0, examples = 0;
  uint64_t differing = 0, values = 0, differing_values = 0;
  double largest = 0;
  std::string largest_at, first_mismatch;
  bool by_position = false;  // a tensor's name changed between versions: matched by its place
};

// The logged tensor for the model's `index`-th tensor named `name`: by name, else (the names
// differ, as they do between a Keras file and its quantized build) by position when both sides
// have as many tensors.
template <class Specs>
const serving::LoggedTensor* find_tensor(const std::vector<serving::LoggedTensor>& logged, const Specs& specs,
                                         size_t index, bool& by_position) {
  for (const auto& t : logged) {
    if (t.name == specs[index].name) return &t;
  }
  if (logged.size() != specs.size()) return nullptr;
  by_position = true;
  return &logged[index];
}

// The record's inputs in the servable's order, or an empty vector with `why` set.
std::vector<const float*> match_inputs(const serving::LoggedRequest& r, const serving::Servable& sv, std::string& why,
                                       bool& by_position) {
  std::vector<const float*> ptrs;
  for (size_t i = 0; i < sv.inputs().size(); ++i) {
    const serving::TensorSpec& spec = sv.inputs()[i];
    const serving::LoggedTensor* found = find_tensor(r.inputs, sv.inputs(), i, by_position);
    if (!found) {
      why = "the model's input '" + spec.name + "' is not in the log";
      return {};
    }
    if (found->floats_per_row != spec.size) {
      why = "input '" + spec.name + "' has " + std::to_string(spec.size) + " floats per row; the log has " +
            std::to_string(found->floats_per_row);
      return {};
    }
    ptrs.push_back(found->values.data());
  }
  return ptrs;
}

// Compares the logged outputs with the replayed ones; false with `why` when they cannot be matched.
bool compare_outputs(const serving::LoggedRequest& r, const serving::Servable& sv,
                     const std::vector<std::vector<float>>& out, double tol, long examples, ReplayCounts& c,
                     std::string& why) {
  bool differs = false;
  for (size_t o = 0; o < sv.outputs().size(); ++o) {
    const serving::LoggedTensor* found = find_tensor(r.outputs, sv.outputs(), o, c.by_position);
    if (!found || sv.outputs()[o].size != found->floats_per_row) {
      why = "the model's output '" + sv.outputs()[o].name + "' (" + std::to_string(sv.outputs()[o].size) +
            " floats per row) is not in the log";
      return false;
    }
    const serving::LoggedTensor& t = *found;
    for (size_t k = 0; k < t.values.size(); ++k) {
      ++c.values;
      const double d = std::fabs(static_cast<double>(out[o][k]) - t.values[k]);
      const double worst = std::isnan(d) ? INFINITY : d;
      if (!(d <= tol)) {  // NaN differs too
        ++c.differing_values;
        if (!differs && static_cast<long>(c.differing) < examples) {
          if (c.differing == 0) std::printf("first differences:\n");
          std::printf("  %s %s %s '%s' v%lld (byte %llu): output '%s' [%zu]: logged %.9g, replayed %.9g, |diff| %.3g\n",
                      utc(r.wall_ns).c_str(), serving::logged_api_name(r.api), serving::logged_method_name(r.method),
                      r.model.c_str(), static_cast<long long>(r.version), static_cast<unsigned long long>(r.offset),
                      t.name.c_str(), k, static_cast<double>(t.values[k]), static_cast<double>(out[o][k]), d);
        }
        differs = true;
      }
      if (worst > c.largest) {
        c.largest = worst;
        c.largest_at = "output '" + t.name + "' [" + std::to_string(k) + "] of the call logged at " + utc(r.wall_ns);
      }
    }
  }
  if (differs) ++c.differing;
  return true;
}

void replay_one(const serving::LoggedRequest& r, const serving::Servable& sv, double tol, long examples,
                ReplayCounts& c) {
  if (r.status != serving::StatusCode::Ok) {
    ++c.not_ok;
    return;
  }
  if (r.method != serving::LoggedMethod::Predict) {  // the predict signature is what Servable::run runs
    ++c.examples;
    return;
  }
  if (!r.has_inputs || !r.has_outputs) {
    ++c.without_inputs;
    return;
  }
  uint64_t fp = serving::kFnvOffset;
  for (const auto& t : r.inputs) fp = serving::fnv1a64(t.values.data(), t.values.size() * sizeof(float), fp);
  if (fp != r.input_fingerprint) {
    ++c.bad_fingerprint;
    return;
  }
  std::string why;
  const std::vector<const float*> in = match_inputs(r, sv, why, c.by_position);
  std::vector<std::vector<float>> out(sv.outputs().size());
  std::vector<float*> out_ptr;
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].assign(static_cast<size_t>(r.batch) * sv.outputs()[o].size, 0.0f);
    out_ptr.push_back(out[o].data());
  }
  if (!in.empty() && r.batch > 0) {
    sv.run(0, r.batch, in.data(), out_ptr.data());
    if (compare_outputs(r, sv, out, tol, examples, c, why)) {
      ++c.replayed;
      return;
    }
  } else if (why.empty()) {
    why = "the record holds no rows";
  }
  ++c.mismatched;
  if (c.first_mismatch.empty()) c.first_mismatch = why;
}

}  // namespace

int run_serve_replay(const ArgParser& args, const std::string& log_path) {
  const double tol = args.number("tolerance", 0, 1e30);
  const long examples = args.integer("examples", 0, 1000000);
  const std::string model_path = args.value("model");
  const serving::RequestLogContents log = serving::read_request_log(log_path);
  serving::ServableOptions so;
  so.num_plans = 1;
  const std::shared_ptr<serving::Servable> sv = serving::Servable::load(model_path, 0, so);
  std::printf("replay: %s (tickinfer serve request log, %zu records) through %s\n", log_path.c_str(),
              log.requests.size(), sv->model_file().c_str());
  if (log.summaries > 0) {
    std::printf("log: %llu server runs closed cleanly; they wrote %llu records, dropped %llu, kept %llu without "
                "their inputs\n",
                static_cast<unsigned long long>(log.summaries), static_cast<unsigned long long>(log.summarized_records),
                static_cast<unsigned long long>(log.dropped), static_cast<unsigned long long>(log.inputs_omitted));
  }
  if (log.torn_tail) {
    std::printf("log tail: %s (%llu bytes skipped); the %zu records before it are used\n", log.tail_problem.c_str(),
                static_cast<unsigned long long>(log.tail_bytes), log.requests.size());
  }
  ReplayCounts c;
  for (const auto& r : log.requests) {
    if (args.given("name") && r.model != args.value("name")) continue;
    ++c.total;
    replay_one(r, *sv, tol, examples, c);
  }
  std::printf("requests: %llu logged, %llu replayed, %llu not OK (no outputs to compare), %llu without input values "
              "(fingerprint only), %llu failing their fingerprint, %llu that do not fit the model\n",
              static_cast<unsigned long long>(c.total), static_cast<unsigned long long>(c.replayed),
              static_cast<unsigned long long>(c.not_ok), static_cast<unsigned long long>(c.without_inputs),
              static_cast<unsigned long long>(c.bad_fingerprint), static_cast<unsigned long long>(c.mismatched));
  if (c.examples > 0) {
    std::printf("%llu classify / regress calls are not replayed (replay runs the predict signature)\n",
                static_cast<unsigned long long>(c.examples));
  }
  if (!c.first_mismatch.empty()) std::printf("first that does not fit: %s\n", c.first_mismatch.c_str());
  if (c.by_position) {
    std::printf("note: the model names its tensors differently from the log; they were matched by position\n");
  }
  std::printf("differences: %llu of %llu replayed requests have an output that differs by more than %g (%llu of %llu "
              "values)",
              static_cast<unsigned long long>(c.differing), static_cast<unsigned long long>(c.replayed), tol,
              static_cast<unsigned long long>(c.differing_values), static_cast<unsigned long long>(c.values));
  if (c.largest > 0) std::printf("; largest |diff| %.6g at %s", c.largest, c.largest_at.c_str());
  std::printf("\n");
  if (c.total == 0) throw Error("request log '" + log_path + "': no requests" +
                                (args.given("name") ? " of model '" + args.value("name") + "'" : std::string()));
  return 0;
}

}  // namespace tickinfer::cli
