// `tickinfer quantize MODEL --calibration DATA -o OUT [--mode dynamic|int8|auto] [--max-error E]
// [--validation DATA] [--calibration-method minmax|percentile --percentile P]`: a float model
// (Keras .keras/.h5 or float .tflite) to a quantized .tkq file, with the per-layer table and the
// calibration-coverage warnings on stdout. The work is quantizer::quantize_model
// (src/quantizer/quantize_session.hpp); this file reads the inputs and prints the report.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "formats/sample_file.hpp"
#include "formats/tkq/tkq_file.hpp"
#include "kernels/sparse_timing.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantize_session.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

quantizer::QuantizeMode parse_mode(const std::string& m) {
  if (m == "dynamic") return quantizer::QuantizeMode::Dynamic;
  if (m == "int8") return quantizer::QuantizeMode::Int8;
  if (m == "auto") return quantizer::QuantizeMode::Auto;
  if (m == "bf16") return quantizer::QuantizeMode::Bf16;
  throw UsageError("--mode must be dynamic, int8, bf16 or auto, got '" + m + "'");
}

// ticks: the program runs one step per call (--stream), so an .npy of windows [N, T, features]
// is taken as its N * T ticks in order, as a stream would bring them.
std::vector<quantizer::SampleSet> read_sets(const std::vector<std::string>& paths, const tfl::Program& p, const char* option,
                                            bool ticks) {
  if (paths.size() != p.inputs.size()) {
    throw UsageError(std::string("--") + option + ": the model has " + std::to_string(p.inputs.size()) +
                     " inputs; give one file per input, in order (" + std::to_string(paths.size()) + " given)");
  }
  std::vector<quantizer::SampleSet> sets;
  for (size_t i = 0; i < paths.size(); ++i) {
    tfl::Shape shape = p.tensors[static_cast<size_t>(p.inputs[i])].shape;
    if (!shape.empty()) shape.erase(shape.begin());  // the batch axis
    const bool npy = paths[i].size() > 4 && paths[i].compare(paths[i].size() - 4, 4, ".npy") == 0;
    if (ticks && npy && shape.size() == 2 && shape[0] == 1) {
      formats::NpyArray a = formats::read_npy(paths[i]);
      std::vector<int64_t> rows = a.shape;
      if (a.shape.size() == 3) {  // windows: their ticks in order
        if (a.shape[2] != shape[1]) {
          throw Error(paths[i] + ": --stream takes ticks [N, " + std::to_string(shape[1]) + "] or windows [N, T, " +
                      std::to_string(shape[1]) + "]; this array's last axis is " + std::to_string(a.shape[2]));
        }
        rows = {a.shape[0] * a.shape[1], a.shape[2]};
      }
      sets.push_back(formats::samples_from_array(rows, std::move(a.data), shape, paths[i]));
      continue;
    }
    sets.push_back(formats::read_samples(paths[i], shape));
  }
  return sets;
}

// wants_int8: the mode asked for int8 where it can be (int8, auto), so a layer that is not says why.
void print_table(const quantizer::QuantizeReport& r, bool wants_int8) {
  std::printf("%-24s %-13s %12s %12s %9s\n", "layer", "precision", "max abs err", "max rel err",
              r.latency_measured ? "latency" : "MACs");
  for (size_t l = 0; l < r.layers.size(); ++l) {
    const auto& e = r.evaluation.layers[l];
    std::printf("%-24s %-13s %12s %12s %8.1f%%\n", r.layers[l].label.c_str(), tfl::precision_name(r.precisions[l]),
                fmt("%.3g", e.max_abs).c_str(), fmt("%.3g", e.max_rel()).c_str(), 100.0 * r.latency_share[l]);
  }
  std::printf("%-24s %-13s %12s %12s\n", "model output", "", fmt("%.3g", r.evaluation.output.max_abs).c_str(),
              fmt("%.3g", r.evaluation.output.max_rel()).c_str());
  std::printf("(max rel err = max|y_q - y_f| / max|y_f| over the validation set; latency = share of the quantized model's time)\n");
  for (size_t l = 0; l < r.layers.size(); ++l) {
    if (wants_int8 && r.precisions[l] != tfl::Precision::Int8 && !r.layers[l].why_not_int8.empty()) {
      std::printf("note: layer '%s' is not int8: %s\n", r.layers[l].label.c_str(), r.layers[l].why_not_int8.c_str());
    }
  }
  // Which arithmetic each GRU got (a Bidirectional layer's two are labelled /forward and
  // /backward): the two forms' outputs differ (docs/quantization.md, "GRU").
  for (const tfl::Op& op : r.result.program.ops) {
    if (op.code != tfl::OpCode::SequenceGru) continue;
    std::printf(op.options.own_arithmetic
                    ? "note: GRU '%s' runs in tickinfer's own arithmetic (input products as one block, vector "
                      "gates; held to Keras; --gru-arithmetic exact gives the TFLite converter's bits)\n"
                    : "note: GRU '%s' runs in the TFLite converter's arithmetic (its dynamic-range file's outputs, bit "
                      "for bit, where both are int8-dynamic; --gru-arithmetic own is faster)\n",
                op.label.c_str());
  }
}

// The measured fp32 pass: each quantized layer against fp32, whole programs timed in the same run.
void print_measured(const quantizer::QuantizeReport& r, double max_error) {
  if (!r.choice_measured) return;
  for (const auto& m : r.measured) {
    const char* verdict = m.kept_fp32                      ? "fp32 kept (faster here)"
                          : m.ns_fp32 >= m.ns_quantized    ? "quantized kept (faster)"
                          : m.error_fp32 > max_error       ? "quantized kept (fp32 above --max-error)"
                                                           : "quantized kept (fp32 not faster beyond the margin)";
    std::printf("auto: layer '%s' %s vs fp32, the whole model timed in one run: %.1f vs %.1f us -> %s\n",
                r.layers[m.layer].label.c_str(), tfl::precision_name(m.from), m.ns_quantized / 1e3, m.ns_fp32 / 1e3,
                verdict);
  }
  std::printf("auto: the chosen program %.1f us per run, the float program %.1f us, both on the interpreter that runs .tkq files (same run)\n", r.ns_chosen / 1e3,
              r.ns_float / 1e3);
  if (r.ns_float < r.ns_chosen) {
    std::printf("note: auto: no quantized form of this model is faster than fp32 on this CPU; keep the float model where latency matters more than size\n");
  }
}

void print_auto(const quantizer::QuantizeReport& r, double max_error) {
  if (r.steps.empty()) {
    std::printf("auto: every layer at its cheapest precision meets --max-error %g\n", max_error);
  }
  for (const auto& s : r.steps) {
    if (s.added_cost < 0.0) {  // the pruning pass: this promotion turned out not to be needed
      std::printf("auto: layer '%s' back %s -> %s: not needed once the others were promoted (model max rel err %.3g -> %.3g, %.1f%% of MACs saved)\n",
                  r.layers[s.layer].label.c_str(), tfl::precision_name(s.from), tfl::precision_name(s.to),
                  s.error_before, s.error_after, -100.0 * s.added_cost);
      continue;
    }
    std::printf("auto: layer '%s' %s -> %s: model max rel err %.3g -> %.3g (latency cost +%.1f%% of MACs)\n",
                r.layers[s.layer].label.c_str(), tfl::precision_name(s.from), tfl::precision_name(s.to),
                s.error_before, s.error_after, 100.0 * s.added_cost);
  }
  if (r.met) {
    std::string kept;
    for (size_t l = 0; l < r.layers.size(); ++l) {
      if (r.precisions[l] == tfl::Precision::BF16 || r.precisions[l] == tfl::Precision::F32) {
        kept += (kept.empty() ? "" : ", ") + r.layers[l].label + " (" + tfl::precision_name(r.precisions[l]) + ")";
      }
    }
    std::printf("auto: kept in higher precision: %s; model max rel err %.3g <= %g\n",
                kept.empty() ? "none beyond int8/int8-dynamic" : kept.c_str(), r.evaluation.output.max_rel(), max_error);
  }
  if (!r.met) {
    std::printf("warning: auto: max rel err %.3g is above --max-error %g even with every layer promoted as far as it goes\n",
                r.evaluation.output.max_rel(), max_error);
  }
  print_measured(r, max_error);
}

// The written .tkq against the source model on tickinfer's fp32 plan (what `predict` and `bench`
// run for it), both compiled here and timed alternately on the validation samples: the question a
// user of --mode auto asks is whether the file is faster than the model they started from. stream:
// the file runs one step per call (--stream), so both plans run in stream mode, the samples as ticks.
void compare_on_plans(const std::string& source, const std::string& tkq, const std::vector<quantizer::SampleSet>& data,
                      int window, int runs, bool stream) {
  CompileOptions options;
  options.window_length = window;
  if (stream) options.mode = RecurrentMode::Stream;
  Plan quantized = compile(Model::load(tkq), options), fp32 = compile(Model::load(source), options);
  for (Plan* p : {&quantized, &fp32}) {
    if (p->num_inputs() != data.size() || p->num_outputs() != fp32.num_outputs()) return;
    for (size_t i = 0; i < data.size(); ++i) {
      if (p->input_size(i) != data[i].per_sample) return;
    }
  }
  std::vector<std::vector<float>> out(fp32.num_outputs());
  std::vector<float*> out_ptr;
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].resize(std::max(fp32.output_size(o), quantized.output_size(o)));
    out_ptr.push_back(out[o].data());
  }
  std::vector<const float*> in(data.size());
  size_t next = 0;
  const auto run_next = [&](Plan& plan) {  // the samples in turn, state reset as for each window
    for (size_t i = 0; i < data.size(); ++i) in[i] = data[i].sample(next % data[i].count);
    ++next;
    if (!stream) plan.reset_state();
    plan.run(in.data(), out_ptr.data());
  };
  const kernels::PairTiming t =
      kernels::time_interleaved([&] { run_next(quantized); }, [&] { run_next(fp32); }, runs);
  const double q = t.a_ns / 1e3, f = t.b_ns / 1e3;
  std::printf("auto: on tickinfer's plans (same run, medians of %d interleaved rounds): %s %.1f us, the source model in fp32 %.1f us\n",
              runs, tkq.c_str(), q, f);
  if (f < q) {
    std::printf("note: auto: the fp32 plan of the source model is faster than any precision mix the search allows on this CPU (%s kernels); "
                "keep the source model where latency matters more than size\n", fp32.isa());
  }
}

// Every layer finding, and the inputs' features up to a few per input (a 128-feature input in a
// new regime would otherwise bury the layers): the rest are counted.
void print_coverage(const quantizer::QuantizeReport& r) {
  constexpr int kFeaturesShown = 6;
  std::string input;
  int shown = 0, hidden = 0;
  const auto flush_hidden = [&]() {
    if (hidden > 0) std::printf("warning: %s: %d more features outside the calibrated range\n", input.c_str(), hidden);
    hidden = 0;
  };
  for (const auto& c : r.coverage) {
    const size_t feature = c.subject.find("' feature ");
    if (feature != std::string::npos) {
      const std::string this_input = c.subject.substr(0, feature + 1);
      if (this_input != input) {
        flush_hidden();
        input = this_input;
        shown = 0;
      }
      if (shown++ >= kFeaturesShown) {
        ++hidden;
        continue;
      }
    } else {
      flush_hidden();
    }
    std::printf("warning: %s: %.1f%% of validation values outside the calibrated range [%.4g, %.4g] (seen [%.4g, %.4g])\n",
                c.subject.c_str(), 100.0 * c.outside, c.cal_min, c.cal_max, c.seen_min, c.seen_max);
  }
  flush_hidden();
  if (!r.coverage.empty()) {
    std::printf("warning: calibration data does not cover the validation data: recalibrate on data from every regime\n");
  }
}

}  // namespace

ArgParser quantize_parser() {
  ArgParser p("quantize", "quantize a float model (Keras or .tflite) to a .tkq file, per-layer precision");
  p.positional("MODEL", "float model: .keras, .h5 or float .tflite");
  p.option("calibration", "DATA", "calibration samples (.npy [N, ...input] or .csv, one row per sample); one per model input",
           "", true);
  p.option("output", "OUT", "the .tkq file to write (also -o)");
  p.option("mode", "MODE", "dynamic (int8 weights, float activations), int8 (full integer), bf16 (bf16 weights, fp32 math) or auto", "int8");
  p.option("max-error", "E", "auto: bound on the model output's max rel err", "0.01");
  p.option("validation", "DATA", "validation samples for the error table (default: the calibration samples)", "", true);
  p.option("calibration-method", "METHOD", "minmax or percentile", "minmax");
  p.option("percentile", "P", "percentile method: keep values within [P(100-P), P(P)]", "99.99");
  p.option("window", "T", "steps for inputs with an unknown sequence length", "0");
  p.option("gru-arithmetic", "A",
           "GRU layers: exact (the TFLite converter's loop, bit for bit as its dynamic-range file runs) or own "
           "(tickinfer's vector gates; faster where the recurrent weights outgrow L1: gru_window 2.1-2.5x); default: "
           "exact in dynamic mode, own in the others",
           "");
  p.flag("stream",
         "one time step per call (predict/bench --mode stream, a run model's mode = \"stream\"), the recurrent state "
         "carried between calls; "
         "calibration and validation rows are then ticks in order: [N, features], or windows [N, T, features] "
         "taken as their N * T ticks");
  p.flag("integer-io", "int8 model inputs and outputs (no QUANTIZE/DEQUANTIZE at the edges)");
  p.flag("reset-state", "calibration: zero LSTM state before each sample (default: carry it over, as the TFLite converter does)");
  return p;
}

int run_quantize(const ArgParser& args) {
  const std::string model_path = args.positional_value("MODEL");
  if (!args.given("calibration")) throw UsageError("--calibration DATA is required");
  if (!args.given("output")) throw UsageError("-o OUT is required");
  quantizer::QuantizeRequest req;
  req.mode = parse_mode(args.value("mode"));
  req.max_error = args.number("max-error", 0.0, 1e9);
  const std::string method = args.value("calibration-method");
  if (method == "minmax") {
    req.calibration.method = quantizer::CalibrationMethod::MinMax;
  } else if (method == "percentile") {
    req.calibration.method = quantizer::CalibrationMethod::Percentile;
    req.calibration.percentile = args.number("percentile", 50.000001, 100.0);
  } else {
    throw UsageError("--calibration-method must be minmax or percentile, got '" + method + "'");
  }
  req.quantize.integer_io = args.flag_set("integer-io");
  const std::string gru = args.value("gru-arithmetic");
  if (!gru.empty() && gru != "exact" && gru != "own") {
    throw UsageError("--gru-arithmetic must be exact or own, got '" + gru + "'");
  }
  using Gru = quantizer::QuantizeRequest::GruArithmetic;
  req.gru_arithmetic = gru.empty() ? Gru::ByMode : gru == "own" ? Gru::Own : Gru::Exact;
  req.calibration.carry_state = !args.flag_set("reset-state");

  formats::AnyModel any = formats::load_any_model_file(model_path, formats::TfliteEngine::Interpreter);
  quantizer::LowerOptions lower;
  lower.window_length = static_cast<int>(args.integer("window", 0, 1 << 20));
  lower.one_step_per_call = req.one_step_per_call = args.flag_set("stream");
  if (lower.one_step_per_call && any.program) {
    throw UsageError("--stream lowers a Keras model one step per call; a .tflite or .tkq file's time length is fixed");
  }
  if (lower.one_step_per_call && !req.calibration.carry_state) {
    throw UsageError("--stream feeds the calibration ticks in order with the state carried; --reset-state would zero it every tick");
  }
  const tfl::Program program = any.program ? *any.program : quantizer::lower_graph(any.graph, lower);
  const bool ticks = lower.one_step_per_call;
  const auto calibration = read_sets(args.values("calibration"), program, "calibration", ticks);
  const auto validation =
      args.given("validation") ? read_sets(args.values("validation"), program, "validation", ticks) : calibration;

  const quantizer::QuantizeReport report = quantizer::quantize_model(program, calibration, validation, req);
  const std::string out = args.value("output");
  formats::save_tkq(report.result.program, out);

  std::printf("model: %s (%zu layers), calibration: %zu samples (%s), validation: %zu samples\n", model_path.c_str(),
              report.layers.size(), calibration[0].count, method.c_str(), validation[0].count);
  print_table(report, req.mode == quantizer::QuantizeMode::Int8 || req.mode == quantizer::QuantizeMode::Auto);
  if (req.mode == quantizer::QuantizeMode::Auto) print_auto(report, req.max_error);
  if (req.mode == quantizer::QuantizeMode::Auto && req.timing_runs > 0) {
    try {
      compare_on_plans(model_path, out, validation, lower.window_length, req.timing_runs, lower.one_step_per_call);
    } catch (const Error& e) {  // the file is written; the comparison is advice
      std::printf("auto: not compared with the source model's fp32 plan: %s\n", e.what());
    }
  }
  print_coverage(report);
  std::printf("wrote %s (%ju bytes)\n", out.c_str(), static_cast<uintmax_t>(std::filesystem::file_size(out)));
  return 0;
}

// `-o OUT` is the short spelling of --output; everything else goes to the parser as it is.
int run_quantize_args(const std::vector<std::string>& raw) {
  std::vector<std::string> args;
  for (const auto& a : raw) args.push_back(a == "-o" ? "--output" : a);
  ArgParser p = quantize_parser();
  p.parse(args);
  if (p.help_requested()) {
    std::printf("%s", p.help().c_str());
    return 0;
  }
  return run_quantize(p);
}

}  // namespace tickinfer::cli
