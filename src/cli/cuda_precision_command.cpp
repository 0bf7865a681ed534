// `tickinfer cuda-precision`: each layer's error with its weight matrices, and with the tensors
// holding its outputs, stored in fp16 or bf16 on the CUDA graph and program forms, measured on the
// host executor (no GPU needed), and the per-layer mix within --max-error as the --cuda-precision
// spec to compile with.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/load_warnings.hpp"
#include "cli/plan_options.hpp"
#include "engine/cuda_precision_report.hpp"
#include "formats/array_file.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {
namespace {

// An error as %.3g prints it.
std::string format_error(double e) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", e);
  return text;
}

}  // namespace

int run_cuda_precision(const ArgParser& args) {
  const std::string& path = args.positional_value("MODEL");
  const auto& input_paths = args.values("input");
  if (input_paths.empty()) throw UsageError("'cuda-precision' needs --input");
  const double max_error = args.number("max-error", 0, 1e30);
  const int most = static_cast<int>(args.integer("rows", 1, 1 << 20));
  const CompileOptions options = plan_options(args);
  const Model model = Model::load(path, load_options(args));
  print_load_warnings(model, path);
  // The shapes (a window each, or one tick in --mode stream), and a model the CPU runs.
  CompileOptions on_cpu;
  on_cpu.mode = options.mode;
  on_cpu.window_length = options.window_length;
  const Plan plan = compile(model, on_cpu);
  if (input_paths.size() != plan.num_inputs())
    throw Error("model '" + path + "' has " + std::to_string(plan.num_inputs()) + " input(s) but " +
                std::to_string(input_paths.size()) + " --input file(s) were given");
  std::vector<formats::HostArray> arrays;
  std::vector<const float*> inputs;
  int rows = most;
  for (size_t i = 0; i < input_paths.size(); ++i) {
    arrays.push_back(formats::load_array(input_paths[i]));
    const size_t per_row = plan.input_size(i);
    if (arrays.back().data.size() % per_row != 0)
      throw Error("'" + input_paths[i] + "' does not hold whole rows of input " + std::to_string(i) + " (" +
                  std::to_string(per_row) + " floats each)");
    rows = std::min<int>(rows, static_cast<int>(arrays.back().data.size() / per_row));
    inputs.push_back(arrays.back().data.data());
  }
  const engine::CudaPrecisionReport r = engine::cuda_precision_report(model.graph(), options, inputs, rows, max_error);
  std::printf("model %s: %d rows, fp32 outputs up to %.3g in magnitude; error = max |output - fp32 output|\n\n",
              path.c_str(), r.rows, r.output_scale);
  std::printf("%-32s %10s %10s %10s %10s %10s %10s  %s\n", "layer", "weights", "fp16", "bf16", "outputs", "out fp16",
              "out bf16", "chosen");
  const auto error = [](int64_t values, double e) { return values > 0 ? format_error(e) : std::string("-"); };
  for (const engine::CudaPrecisionLayer& L : r.layers)
    std::printf("%-32s %10lld %10s %10s %10lld %10s %10s  %s\n", L.layer.c_str(), static_cast<long long>(L.matrix_values),
                error(L.matrix_values, L.fp16_error).c_str(), error(L.matrix_values, L.bf16_error).c_str(),
                static_cast<long long>(L.output_values), error(L.output_values, L.out_fp16_error).c_str(),
                error(L.output_values, L.out_bf16_error).c_str(), L.chosen.c_str());
  std::printf("\nchosen within %.3g: error %.3g together, weight matrices %lld -> %lld bytes, "
              "output tensors %lld -> %lld bytes per row\n",
              max_error, r.chosen_error, static_cast<long long>(r.matrix_bytes_fp32),
              static_cast<long long>(r.matrix_bytes_chosen), static_cast<long long>(r.output_bytes_fp32),
              static_cast<long long>(r.output_bytes_chosen));
  std::printf("--cuda-precision %s\n", r.spec.c_str());
  return 0;
}

}  // namespace tickinfer::cli
