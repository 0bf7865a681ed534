// `tickinfer study --model A --model B ... --x VAL_X --y VAL_Y`: the slimming order made
// measurable. For each candidate structure (the files given: several depths and widths, trained by
// the user or by tickinfer.study) and each variant of it, in the order that pays (the structure as
// given, then pruned at each --prune share, then quantized: int8 and auto mixed precision, of the
// structure and of each pruned form), it measures on this machine, in the same run, the batch-1
// latency on tickinfer's engine (interleaved rounds: p50 is the median of the rounds' p50s, p99
// and max over all runs) and the validation metric (AUC and accuracy for direction labels 0/1,
// MSE for returns), prints the table, marks the latency-vs-metric Pareto front and names the knee:
// the fastest variant within --tolerance of the best metric. --html draws the front (SVG).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sched.h>

#include "formats/array_file.hpp"
#include "cli/commands.hpp"
#include "cli/plan_options.hpp"
#include "stats/study_metrics.hpp"
#include "cli/study_report.hpp"
#include "model/magnitude_prune.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantize_session.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

using formats::HostArray;
using formats::load_array;
using formats::shape_text;
using stats::StudyPoint;
using stats::accuracy;
using stats::knee;
using stats::mse;
using stats::pareto_front;
using stats::roc_auc;

namespace {

struct Variant {
  std::string candidate, name;
  std::unique_ptr<Plan> plan;
  int64_t params = 0, zeros = 0;
  double metric = 0, accuracy = -1, auc = -1, mse = -1;
  std::vector<double> p50s;
  std::vector<float> samples;  // ns per run, all rounds
};

std::vector<double> shares(const std::string& list) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) {
      const double v = std::stod(item);
      if (!(v > 0 && v < 1)) throw UsageError("--prune: '" + item + "' is not a share in (0, 1)");
      out.push_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// The quantized form of `g` (int8 or auto mixed precision), calibrated on the first rows of x.
Model quantized(const Graph& g, const HostArray& x, quantizer::QuantizeMode mode) {
  const tfl::Program program = quantizer::lower_graph(g);
  quantizer::SampleSet set;
  set.count = std::min<size_t>(static_cast<size_t>(x.shape[0]), 512);
  set.per_sample = x.data.size() / static_cast<size_t>(x.shape[0]);
  set.values.assign(x.data.begin(), x.data.begin() + static_cast<std::ptrdiff_t>(set.count * set.per_sample));
  quantizer::QuantizeRequest req;
  req.mode = mode;
  req.timing_runs = 0;
  const std::vector<quantizer::SampleSet> sets{set};
  const quantizer::QuantizeReport r = quantizer::quantize_model(program, sets, sets, req);
  return Model::from_program(std::make_shared<const tfl::Program>(r.result.program));
}

void add_variant(std::vector<Variant>& out, const std::string& candidate, const std::string& name, const Model& m) {
  Variant v;
  v.candidate = candidate;
  v.name = name;
  v.plan = std::make_unique<Plan>(compile(m));
  const ModelStats st = m.stats();
  v.params = st.params;
  v.zeros = st.zero_weights;
  out.push_back(std::move(v));
}

// Scores every validation row; fills the metrics from the labels.
void score(Variant& v, const HostArray& x, const std::vector<float>& y, bool direction) {
  Plan& p = *v.plan;
  const size_t rows = static_cast<size_t>(x.shape[0]), width = p.input_size(0), outs = p.output_size(0);
  if (p.num_inputs() != 1 || width * rows != x.data.size()) {
    throw Error("candidate '" + v.candidate + "' takes " + std::to_string(width) + " floats per row; --x has " +
                std::to_string(x.data.size() / std::max<size_t>(rows, 1)));
  }
  std::vector<float> out(outs), s(rows);
  for (size_t r = 0; r < rows; ++r) {
    p.reset_state();
    p.run(x.data.data() + r * width, out.data());
    s[r] = outs == 2 ? out[1] : out[0];  // a 2-way softmax: the class-1 probability
  }
  if (direction) {
    v.accuracy = accuracy(s, y);
    v.auc = roc_auc(s, y);
    v.metric = v.auc;
  } else {
    v.mse = mse(s, y);
    v.metric = -v.mse;
  }
}

// One round: each variant runs for `seconds`, cycling through the validation rows.
void time_round(std::vector<Variant>& vs, const HostArray& x, double seconds) {
  using clock = std::chrono::steady_clock;
  const size_t rows = static_cast<size_t>(x.shape[0]);
  for (Variant& v : vs) {
    Plan& p = *v.plan;
    const size_t width = p.input_size(0);
    std::vector<float> out(p.output_size(0));
    std::vector<float> round;
    round.reserve(1 << 16);
    const auto end = clock::now() + std::chrono::duration<double>(seconds);
    for (size_t i = 0; clock::now() < end; ++i) {
      const float* in = x.data.data() + (i % rows) * width;
      const auto t0 = clock::now();
      p.run(in, out.data());
      round.push_back(static_cast<float>(std::chrono::duration<double, std::nano>(clock::now() - t0).count()));
    }
    std::vector<float> sorted = round;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    v.p50s.push_back(sorted[sorted.size() / 2]);
    v.samples.insert(v.samples.end(), round.begin(), round.end());
  }
}

double quantile(std::vector<float> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

ArgParser study_parser() {
  ArgParser p("study", "compare candidate structures, pruned and quantized, on latency and validation metric");
  p.option("model", "FILE", "a candidate model (repeat for each structure)", "", true);
  p.option("x", "FILE", "validation inputs (.npy or .csv, one row per sample)");
  p.option("y", "FILE", "validation labels (0/1 for direction: AUC and accuracy; else MSE)");
  p.option("prune", "LIST", "one-shot block 1x16 magnitude pruning shares per candidate (\"\": none)", "0.5,0.8,0.9");
  p.flag("no-quantize", "leave out the int8 and auto mixed-precision variants");
  p.option("rounds", "R", "interleaved timing rounds", "3");
  p.option("seconds", "S", "seconds per variant per round", "0.3");
  p.option("tolerance", "T", "the knee: the fastest variant within T of the best metric", "0.005");
  p.option("pin", "CPU", "pin the study to this CPU");
  p.option("html", "FILE", "write the table and the latency-vs-metric Pareto plot (SVG) as HTML");
  p.option("json", "FILE", "write every number as JSON");
  declare_load_options(p);
  return p;
}

int run_study(const ArgParser& args) {
  if (args.values("model").empty()) throw UsageError("give at least one --model");
  if (!args.given("x") || !args.given("y")) throw UsageError("--x and --y (validation inputs and labels) are required");
  if (args.given("pin")) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(args.integer("pin", 0, 1023)), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) throw Error("--pin: cannot pin to that CPU");
  }
  const HostArray x = load_array(args.value("x")), yarr = load_array(args.value("y"));
  if (x.shape.empty() || x.shape[0] < 2 || yarr.data.size() != static_cast<size_t>(x.shape[0])) {
    throw Error("--y must hold one label per row of --x (" + shape_text(x.shape) + " vs " + shape_text(yarr.shape) + ")");
  }
  const std::vector<float>& y = yarr.data;
  const bool direction = std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f || v == 1.0f; });
  const std::vector<double> prune = shares(args.value("prune"));
  const bool quantize = !args.flag_set("no-quantize");
  std::vector<Variant> vs;
  for (const std::string& file : args.values("model")) {
    const Model m = Model::load(file, load_options(args));
    if (!m.program()) {  // a Keras-like graph: the slimming steps apply
      std::vector<std::pair<std::string, Graph>> forms = {{"fp32", m.graph()}};
      for (double s : prune) {
        char label[48];
        std::snprintf(label, sizeof label, "pruned %.0f%% (1x16, one-shot)", 100 * s);
        forms.push_back({label, magnitude_pruned(m.graph(), s, true)});
      }
      for (const auto& [label, g] : forms) add_variant(vs, file, label, Model::from_graph(g));
      if (quantize) {
        for (const auto& [label, g] : forms) {
          add_variant(vs, file, label + " + int8", quantized(g, x, quantizer::QuantizeMode::Int8));
        }
        add_variant(vs, file, "fp32 + auto mixed precision", quantized(forms[0].second, x, quantizer::QuantizeMode::Auto));
      }
    } else {
      add_variant(vs, file, "as given (" + m.graph().source_format + ")", m);
    }
  }
  for (Variant& v : vs) score(v, x, y, direction);
  const long rounds = args.integer("rounds", 1, 100);
  for (long r = 0; r < rounds; ++r) time_round(vs, x, args.number("seconds", 0.01, 60));

  std::vector<StudyPoint> pts;
  std::vector<StudyRow> rows;
  for (Variant& v : vs) {
    std::vector<double> p = v.p50s;
    std::sort(p.begin(), p.end());
    StudyRow row{v.candidate, v.name, v.params, v.zeros, p[p.size() / 2], quantile(v.samples, 0.99),
                 quantile(v.samples, 1.0), v.accuracy, v.auc, v.mse, false, false};
    pts.push_back({row.p50_ns, v.metric});
    rows.push_back(std::move(row));
  }
  for (size_t i : pareto_front(pts)) rows[i].on_front = true;
  rows[knee(pts, args.number("tolerance", 0, 1e9))].knee = true;
  const std::string table = study_table(rows, direction);
  std::fputs(table.c_str(), stdout);
  std::printf("order applied: structure (the candidates), then pruning, then quantization; * = on the Pareto front, "
              "<= knee\n");
  if (args.given("html")) write_study_html(args.value("html"), rows, direction);
  if (args.given("json")) {
    std::ofstream(args.value("json")) << study_json(rows, direction).dump(1) << "\n";
  }
  return 0;
}

}  // namespace tickinfer::cli
