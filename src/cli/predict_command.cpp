// `tickinfer predict MODEL --input IN --output OUT`: runs every row of IN through a compiled plan,
// one batch-1 call per row as production does, and writes the outputs.
//
// Shape contract (per model input i, E = plan.input_size(i), S = plan.input_shape(i)):
//   window mode: IN is [N, ...S] or [N, E] (flattened rows, e.g. a CSV); OUT is [N, ...out].
//   stream mode: S is one tick [features]. IN [N, features] is one sequence of N ticks (state
//                reset once, then carried over); IN [B, T, features] is B sequences of T ticks,
//                state reset at the start of each; OUT is [N, ...out] or [B, T, ...out].
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "formats/array_file.hpp"
#include "cli/commands.hpp"
#include "cli/load_warnings.hpp"
#include "cli/plan_options.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

using formats::HostArray;
using formats::array_file_kind;
using formats::load_array;
using formats::save_array;
using formats::shape_text;

namespace {

std::vector<int64_t> widen(const Shape& shape) { return {shape.begin(), shape.end()}; }

int64_t product(const std::vector<int64_t>& dims, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= dims[i];
  return p;
}

// One input file bound to one model input.
struct BoundInput {
  std::string path;
  std::string name;               // the model's name for this input
  HostArray array;
  std::vector<int64_t> leading;   // the run axes: [N] or, in stream mode, [B, T]
  size_t floats_per_run = 0;
};

std::string describe_input(size_t i, const std::string& name) {
  return "input " + std::to_string(i) + " ('" + name + "')";
}

// Splits the array's shape into run axes and the per-run shape, or throws naming both shapes.
std::vector<int64_t> run_axes(const BoundInput& in, size_t index, const Plan& plan) {
  const auto& shape = in.array.shape;
  const auto per_run = widen(plan.input_shape(index));
  const auto per_run_size = static_cast<int64_t>(plan.input_size(index));
  const bool stream = plan.mode() == RecurrentMode::Stream;
  if (shape.size() >= 1) {
    const std::vector<int64_t> rest(shape.begin() + 1, shape.end());
    if (rest == per_run || (rest.size() == 1 && rest[0] == per_run_size) ||
        (rest.empty() && per_run_size == 1)) {
      return {shape[0]};
    }
  }
  if (stream && shape.size() >= 2) {
    const std::vector<int64_t> rest(shape.begin() + 2, shape.end());
    if (rest == per_run || (rest.size() == 1 && rest[0] == per_run_size)) return {shape[0], shape[1]};
  }
  // "[N, 32, 10]": the per-run shape behind a named run axis.
  const auto with_run_axes = [&](const char* axes) {
    std::string text = shape_text(per_run);
    text.insert(1, per_run.empty() ? std::string(axes) : std::string(axes) + ", ");
    return text;
  };
  std::string want = with_run_axes("N");
  if (stream) {
    want += " (one sequence of N ticks) or " + with_run_axes("B, T") + " (B sequences of T ticks)";
  } else if (per_run.size() > 1) {
    want += " or [N, " + std::to_string(per_run_size) + "] (flattened)";
  }
  throw Error(describe_input(index, in.name) + " from '" + in.path + "': expected shape " + want +
              " for " + mode_name(plan.mode()) + " mode, got " + shape_text(shape));
}

void refuse_nonfinite_rows(const BoundInput& in, size_t index) {
  const auto& d = in.array.data;
  for (size_t i = 0; i < d.size(); ++i) {
    if (std::isfinite(d[i])) continue;
    const size_t row = i / in.floats_per_run, column = i % in.floats_per_run;
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(d[i]));
    throw Error(describe_input(index, in.name) + " from '" + in.path + "': row " + std::to_string(row) +
                " (0-based) has a non-finite value (" + value + " at flat position " + std::to_string(column) +
                "); pass --allow-nonfinite to run it anyway");
  }
}

}  // namespace

ArgParser predict_parser() {
  ArgParser p("predict", "run every row of an input file through the model and write the outputs");
  p.positional("MODEL", "a .keras (Keras 3) or .h5 (Keras 2) model file");
  p.option("input", "IN", "input rows, .npy or .csv; one per model input, in the model's order", "", true);
  p.option("output", "OUT", "where to write outputs, .npy or .csv; one per model output, in order", "", true);
  declare_plan_options(p);
  declare_load_options(p);
  p.flag("allow-nonfinite", "run rows containing NaN or Inf instead of refusing them");
  p.option("expect", "REF", "reference outputs (e.g. from Keras), .npy or .csv, one per output: "
           "compare and exit 1 if any value differs by more than atol + rtol * |ref|", "", true);
  p.option("rtol", "R", "relative tolerance for --expect", "1e-5");
  p.option("atol", "A", "absolute tolerance for --expect", "1e-6");
  return p;
}

namespace {

// Compares one output with its reference; prints the agreement, or returns false naming the
// first value outside |got - ref| <= atol + rtol * |ref|.
bool check_against(const HostArray& got, const std::string& ref_path, size_t o, double rtol,
                   double atol) {
  const HostArray ref = load_array(ref_path);
  if (ref.data.size() != got.data.size()) {
    throw Error("--expect '" + ref_path + "' holds " + std::to_string(ref.data.size()) +
                " values " + shape_text(ref.shape) + " but output " + std::to_string(o) + " has " +
                std::to_string(got.data.size()) + " " + shape_text(got.shape));
  }
  double max_abs = 0, max_rel = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    const double g = got.data[i], r = ref.data[i], diff = std::fabs(g - r);
    const bool both_nan = std::isnan(g) && std::isnan(r);
    if (!both_nan && !(diff <= atol + rtol * std::fabs(r))) {
      std::fprintf(stderr,
                   "tickinfer: output %zu differs from '%s' at flat index %zu: got %.9g, "
                   "reference %.9g (rtol %g, atol %g)\n",
                   o, ref_path.c_str(), i, g, r, rtol, atol);
      return false;
    }
    if (!both_nan) {
      max_abs = std::max(max_abs, diff);
      if (r != 0) max_rel = std::max(max_rel, diff / std::fabs(r));
    }
  }
  std::printf("output %zu agrees with %s: %zu values, max |diff| %.3g, max rel %.3g\n", o,
              ref_path.c_str(), got.data.size(), max_abs, max_rel);
  return true;
}

}  // namespace

int run_predict(const ArgParser& args) {
  const std::string& model_path = args.positional_value("MODEL");
  const auto& input_paths = args.values("input");
  const auto& output_paths = args.values("output");
  if (input_paths.empty()) throw UsageError("'predict' needs --input");
  if (output_paths.empty()) throw UsageError("'predict' needs --output");
  for (const auto& p : input_paths) array_file_kind(p);  // fail on a bad extension before any work
  for (const auto& p : output_paths) array_file_kind(p);
  CompileOptions options = plan_options(args);

  const Model model = Model::load(model_path, load_options(args));
  default_mode_for(model, args, options);
  print_load_warnings(model, model_path);
  Plan plan = compile(model, options);
  const auto input_info = model.inputs();
  const auto output_info = model.outputs();
  if (input_paths.size() != plan.num_inputs()) {
    throw Error("model '" + model_path + "' has " + std::to_string(plan.num_inputs()) + " input(s) but " +
                std::to_string(input_paths.size()) + " --input file(s) were given");
  }
  if (output_paths.size() != plan.num_outputs()) {
    throw Error("model '" + model_path + "' has " + std::to_string(plan.num_outputs()) + " output(s) but " +
                std::to_string(output_paths.size()) + " --output file(s) were given");
  }

  std::vector<BoundInput> inputs(input_paths.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    BoundInput& in = inputs[i];
    in.path = input_paths[i];
    in.name = i < input_info.size() ? input_info[i].name : "input";
    in.array = load_array(in.path);
    in.leading = run_axes(in, i, plan);
    in.floats_per_run = plan.input_size(i);
    if (i > 0 && in.leading != inputs[0].leading) {
      throw Error(describe_input(i, in.name) + " from '" + in.path + "' has rows " + shape_text(in.leading) +
                  " but input 0 has " + shape_text(inputs[0].leading));
    }
    if (!args.flag_set("allow-nonfinite")) refuse_nonfinite_rows(in, i);
  }
  const std::vector<int64_t> leading = inputs[0].leading;
  const auto runs = static_cast<size_t>(product(leading));
  // Stream mode starts every sequence from a zero state: once for [N, features], every T runs
  // for [B, T, features]. Window mode has no state to reset.
  const size_t runs_per_sequence = leading.size() == 2 ? static_cast<size_t>(leading[1]) : runs;

  std::vector<HostArray> outputs(plan.num_outputs());
  for (size_t o = 0; o < outputs.size(); ++o) {
    outputs[o].shape = leading;
    for (int d : plan.output_shape(o)) outputs[o].shape.push_back(d);
    outputs[o].data.assign(runs * plan.output_size(o), 0.0f);
  }
  std::vector<const float*> in_ptrs(inputs.size());
  std::vector<float*> out_ptrs(outputs.size());
  // A feed-forward plan scores its rows 8 at a time (Plan::run_rows slices them: the same numbers
  // as one run() per row, each layer's weights read once per slice); anything else row by row.
  const bool by_rows = runs <= static_cast<size_t>(INT_MAX) && plan.try_reserve_rows(8);
  if (by_rows) plan.run_rows(inputs[0].array.data.data(), static_cast<int>(runs), outputs[0].data.data());
  for (size_t r = 0; !by_rows && r < runs; ++r) {
    if (runs_per_sequence > 0 && r % runs_per_sequence == 0) plan.reset_state();
    for (size_t i = 0; i < inputs.size(); ++i) in_ptrs[i] = inputs[i].array.data.data() + r * inputs[i].floats_per_run;
    for (size_t o = 0; o < outputs.size(); ++o) out_ptrs[o] = outputs[o].data.data() + r * plan.output_size(o);
    plan.run(in_ptrs.data(), out_ptrs.data());
  }

  for (size_t o = 0; o < outputs.size(); ++o) {
    size_t nonfinite = 0;
    for (float v : outputs[o].data) nonfinite += std::isfinite(v) ? 0 : 1;
    if (nonfinite) {
      std::fprintf(stderr, "tickinfer: warning: output %zu ('%s') has %zu non-finite value(s)\n", o,
                   o < output_info.size() ? output_info[o].name.c_str() : "output", nonfinite);
    }
    save_array(output_paths[o], outputs[o]);
  }
  std::printf("predicted %zu run(s) in %s mode with isa %s; wrote", runs, mode_name(plan.mode()), plan.isa());
  for (const auto& p : output_paths) std::printf(" %s", p.c_str());
  std::printf("\n");
  const auto& expect_paths = args.values("expect");
  if (expect_paths.empty()) return 0;
  if (expect_paths.size() != outputs.size()) {
    throw UsageError("--expect: give one reference file per model output (" +
                     std::to_string(outputs.size()) + "), got " + std::to_string(expect_paths.size()));
  }
  const double rtol = args.number("rtol", 0.0, 1.0), atol = args.number("atol", 0.0, 1e30);
  bool all_agree = true;
  for (size_t o = 0; o < outputs.size(); ++o) {
    all_agree = check_against(outputs[o], expect_paths[o], o, rtol, atol) && all_agree;
  }
  return all_agree ? 0 : 1;
}

}  // namespace tickinfer::cli
