#include "engine/cuda_precision_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cuda/device_runner.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

int64_t matrix_values(const LoweredOp& op) {
  return int64_t(op.kernel.data.size() + op.recurrent_kernel.data.size() + op.recurrent_kernel_h.data.size() +
                 op.depthwise.size());
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    if (!(d <= worst)) worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  }
  return worst;
}

}  // namespace

CudaPrecisionReport cuda_precision_report(const Graph& graph, const CompileOptions& options,
                                          const std::vector<const float*>& inputs, int rows, double max_error) {
  if (options.mode == RecurrentMode::Stream) throw Error("cuda-precision: window mode only");
  if (rows < 1) throw Error("cuda-precision: no input rows");
  const LoweredGraph lowered = lower_for_plan(graph, options);
  if (inputs.size() != lowered.input_shapes.size())
    throw Error("cuda-precision: the model has " + std::to_string(lowered.input_shapes.size()) + " input(s), " +
                std::to_string(inputs.size()) + " given");
  // Every output of every row of the program in `formats`, run on the host executor.
  const auto outputs = [&](const WeightFormats& formats) {
    return cuda::run_rows_on_host(device_program_from(lowered, graph.name, formats), inputs, rows);
  };
  const std::vector<float> reference = outputs({});
  CudaPrecisionReport report;
  report.rows = rows;
  for (float v : reference) report.output_scale = std::max(report.output_scale, double(std::fabs(v)));
  for (const LoweredOp& op : lowered.ops) {
    const int64_t n = matrix_values(op);
    if (n == 0) continue;
    report.matrix_bytes_fp32 += 4 * n;
    auto same = std::find_if(report.layers.begin(), report.layers.end(),
                             [&](const CudaPrecisionLayer& l) { return l.layer == op.label; });
    if (same != report.layers.end()) {  // a layer lowered into several ops: one format for all
      same->matrix_values += n;
      continue;
    }
    CudaPrecisionLayer L;
    L.layer = op.label;
    L.matrix_values = n;
    WeightFormats one;
    one.by_layer[op.label] = cuda::kWeightsFp16;
    L.fp16_error = max_abs_difference(outputs(one), reference);
    one.by_layer[op.label] = cuda::kWeightsBf16;
    L.bf16_error = max_abs_difference(outputs(one), reference);
    report.layers.push_back(std::move(L));
  }
  // Largest first: the bytes that matter most are tried first.
  std::vector<size_t> order(report.layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return report.layers[a].matrix_values > report.layers[b].matrix_values; });
  WeightFormats mix;
  for (size_t i : order) {
    CudaPrecisionLayer& L = report.layers[i];
    const bool fp16 = L.fp16_error <= L.bf16_error;
    if (std::min(L.fp16_error, L.bf16_error) > max_error) continue;
    WeightFormats trial = mix;
    trial.by_layer[L.layer] = fp16 ? cuda::kWeightsFp16 : cuda::kWeightsBf16;
    const double e = max_abs_difference(outputs(trial), reference);
    if (e > max_error) continue;
    mix = std::move(trial);
    report.chosen_error = e;
    L.chosen = fp16 ? "fp16" : "bf16";
  }
  // The spec in its shortest form: the most common choice for every layer, the others by name.
  WeightFormats spec;
  int counts[3] = {};
  for (const CudaPrecisionLayer& L : report.layers) {
    report.matrix_bytes_chosen += (L.chosen == "fp32" ? 4 : 2) * L.matrix_values;
    ++counts[mix.of(L.layer)];
  }
  spec.all = int32_t(std::max_element(counts, counts + 3) - counts);
  for (const CudaPrecisionLayer& L : report.layers)
    if (mix.of(L.layer) != spec.all) spec.by_layer[L.layer] = mix.of(L.layer);
  report.spec = weight_formats_spec(spec);
  return report;
}

}  // namespace tickinfer::engine
