// `tickinfer replay LOG --model OTHER`: re-runs the input vectors a decision log recorded through
// another model (or another version of the same one) and reports where the decisions differ. A
// model change shows up as differences on identical inputs; a data change cannot (the inputs are
// the logged ones, checked against their fingerprints).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/plan_options.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/signal_format.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

namespace {

// A serve request log starts with "TKRLOG01"; anything else is read as a decision log.
bool is_serve_log(const std::string& path) {
  char magic[8] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;  // the decision log reader names the problem
  const bool ok = std::fread(magic, 1, sizeof magic, f) == sizeof magic && std::memcmp(magic, "TKRLOG01", 8) == 0;
  std::fclose(f);
  return ok;
}

}  // namespace

ArgParser decision_replay_parser() {
  ArgParser p("replay", "re-run a decision log's or a serve request log's inputs through another model and report "
                        "differences");
  p.positional("LOG", "decision log written by `tickinfer run` ([decision_log] path), or a request log written by "
                      "`tickinfer serve --request_log_file`");
  p.option("model", "MODEL",
           "the model to replay through (.keras / .h5; for a request log also a version folder or SavedModel)");
  p.option("name", "NAME",
           "which logged model's calls to replay (default: a decision log's first declared model, a request log's all)");
  p.option("tolerance", "X", "a score differs when |new - logged| > X", "0");
  p.option("examples", "N", "how many differing decisions to print", "5");
  declare_load_options(p);
  return p;
}

int run_decision_replay(const ArgParser& args) {
  if (!args.given("model")) throw UsageError("--model MODEL is required");
  const std::string log_path = args.positional_value("LOG");
  if (is_serve_log(log_path)) return run_serve_replay(args, log_path);
  const double tol = args.number("tolerance", 0, 1e30);
  const long examples = args.integer("examples", 0, 1000000);
  const pipeline::DecisionLogContents log = pipeline::read_decision_log(log_path);
  if (log.models.empty()) throw Error("decision log '" + log_path + "': declares no model");
  const pipeline::LoggedModel* lm = &log.models[0];
  if (args.given("name")) {
    lm = nullptr;
    for (const auto& m : log.models)
      if (m.name == args.value("name")) lm = &m;
    if (!lm) throw Error("decision log '" + log_path + "': no model named '" + args.value("name") + "'");
  }
  const std::string model_path = args.value("model");
  const Model model = Model::load(model_path, load_options(args));
  CompileOptions opt;
  const auto trigger = static_cast<pipeline::ModelTrigger>(lm->trigger);
  if (trigger == pipeline::ModelTrigger::Stream) opt.mode = RecurrentMode::Stream;
  Plan base = [&] {
    if (trigger != pipeline::ModelTrigger::Window) return compile(model, opt);
    // Window models: the time steps follow from the logged input size and the model's width.
    const auto ins = model.inputs();
    if (ins.empty() || ins[0].shape.empty()) throw Error("model '" + model_path + "': no input");
    opt.window_length = static_cast<int>(lm->input_size / static_cast<std::uint32_t>(std::max(1, ins[0].shape.back())));
    return compile(model, opt);
  }();
  if (base.num_inputs() != 1 || base.num_outputs() != 1)
    throw Error("model '" + model_path + "': replay runs models with one input and one output");
  if (base.input_size(0) != lm->input_size)
    throw Error("model '" + model_path + "' takes " + std::to_string(base.input_size(0)) + " input floats; model '" +
                lm->name + "' was logged with " + std::to_string(lm->input_size) + ": not the same inputs");
  std::map<std::uint32_t, std::unique_ptr<Plan>> per_instrument;  // stream mode: state per instrument
  std::vector<float> out(base.output_size(0));

  std::printf("replay: %s (model '%s' v%u, %s) through %s\n", log_path.c_str(), lm->name.c_str(), lm->version,
              lm->path.c_str(), model_path.c_str());
  if (log.torn_tail)
    std::printf("log tail: %s; the %llu records before it are used\n", log.tail_problem.c_str(),
                static_cast<unsigned long long>(log.decisions.size()));

  std::uint64_t total = 0, replayed = 0, fingerprint_only = 0, fingerprint_bad = 0, differing = 0, flips = 0;
  double largest = 0;
  const pipeline::DecisionRecord* largest_rec = nullptr;
  float largest_new = 0;
  int shown = 0;
  for (const auto& r : log.decisions) {
    if (r.model != lm->index) continue;
    ++total;
    if (r.inputs.empty()) {
      ++fingerprint_only;
      continue;
    }
    if (pipeline::fingerprint(r.inputs.data(), r.inputs.size()) != r.input_fingerprint) {
      ++fingerprint_bad;
      continue;
    }
    Plan* plan = &base;
    if (trigger == pipeline::ModelTrigger::Stream) {
      auto& p = per_instrument[r.instrument];
      if (!p) p = std::make_unique<Plan>(base.clone());
      plan = p.get();
    }
    plan->run(r.inputs.data(), out.data());
    ++replayed;
    // The logged scores are outputs[0..n) of the configured mapping; the replay compares the same
    // leading outputs (the default mapping is output 0).
    bool differs = false;
    double worst = 0;
    for (int i = 0; i < r.score_count && static_cast<std::size_t>(i) < out.size(); ++i) {
      const double d = std::fabs(static_cast<double>(out[static_cast<std::size_t>(i)]) - r.scores[i]);
      if (!(d <= tol)) differs = true;  // NaN differs too
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
    const double s = out[0];
    const int decision = s > lm->center + lm->threshold ? 1 : (s < lm->center - lm->threshold ? -1 : 0);
    const bool flip = decision != r.decision;
    if (differs) ++differing;
    if (flip) ++flips;
    if (worst > largest || (largest_rec == nullptr && differs)) {
      largest = worst;
      largest_rec = &r;
      largest_new = out[0];
    }
    if ((differs || flip) && shown < examples) {
      if (shown == 0) std::printf("first differences:\n");
      std::printf("  tick seq %llu instrument %u: logged score %.7g (decision %+d), replayed %.7g (decision %+d), "
                  "|diff| %.3g\n",
                  static_cast<unsigned long long>(r.tick_seq), r.instrument, static_cast<double>(r.scores[0]),
                  r.decision, static_cast<double>(out[0]), decision, worst);
      ++shown;
    }
  }
  std::printf("decisions: %llu logged, %llu replayed, %llu with only a fingerprint (not re-runnable), %llu with a "
              "vector that fails its fingerprint\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(replayed),
              static_cast<unsigned long long>(fingerprint_only), static_cast<unsigned long long>(fingerprint_bad));
  std::printf("differences: %llu scores differ by more than %g, %llu decisions change", static_cast<unsigned long long>(differing),
              tol, static_cast<unsigned long long>(flips));
  if (largest_rec)
    std::printf("; largest |diff| %.6g at tick seq %llu (instrument %u: logged %.7g, replayed %.7g)", largest,
                static_cast<unsigned long long>(largest_rec->tick_seq), largest_rec->instrument,
                static_cast<double>(largest_rec->scores[0]), static_cast<double>(largest_new));
  std::printf("\n");
  if (fingerprint_only > 0 && replayed == 0)
    std::printf("note: this log holds input fingerprints only ([decision_log] full_vectors = false); they identify "
                "the exact inputs but cannot be re-run. Log full vectors to replay.\n");
  if (total == 0) throw Error("decision log '" + log_path + "': no decisions of model '" + lm->name + "'");
  return 0;
}

}  // namespace tickinfer::cli
