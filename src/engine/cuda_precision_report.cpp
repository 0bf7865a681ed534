#include "engine/cuda_precision_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

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

// One thing the mix may store in 16 bits: a layer's matrices or its output tensors.
struct Candidate {
  size_t layer;
  bool outputs;
  int64_t bytes;  // in fp32
};

}  // namespace

CudaPrecisionReport cuda_precision_report(const Graph& graph, const CompileOptions& options,
                                          const std::vector<const float*>& inputs, int rows, double max_error) {
  if (rows < 1) throw Error("cuda-precision: no input rows");
  // Stream mode: the rows are the ticks of one sequence, each tick's outputs compared.
  const bool stream = options.mode == RecurrentMode::Stream;
  const LoweredGraph lowered = lower_for_plan(graph, options);
  if (inputs.size() != lowered.input_shapes.size())
    throw Error("cuda-precision: the model has " + std::to_string(lowered.input_shapes.size()) + " input(s), " +
                std::to_string(inputs.size()) + " given");
  // Every output of every row of the program in `formats`, run on the host executor.
  const auto outputs = [&](const StorageFormats& formats) {
    return cuda::run_rows_on_host(device_program_from(lowered, graph.name, formats), inputs, rows, {}, stream);
  };
  const cuda::DeviceProgram fp32 = device_program_from(lowered, graph.name);
  const std::vector<float> reference = cuda::run_rows_on_host(fp32, inputs, rows, {}, stream);
  CudaPrecisionReport report;
  report.rows = rows;
  for (float v : reference) report.output_scale = std::max(report.output_scale, double(std::fabs(v)));
  // The layers in run order, each once (a layer lowered into several ops takes one format for all).
  std::map<std::string, size_t> index;
  const auto layer = [&](const std::string& name) -> CudaPrecisionLayer& {
    const auto [it, fresh] = index.emplace(name, report.layers.size());
    if (fresh) report.layers.push_back({.layer = name});
    return report.layers[it->second];
  };
  std::map<std::string, int64_t> output_values;
  for (const cuda::DeviceTensor& t : fp32.tensors)
    if (!t.fp32_only && !t.layer.empty()) output_values[t.layer] += t.floats;
  for (const LoweredOp& op : lowered.ops) {
    const int64_t n = matrix_values(op);
    const auto out = output_values.find(op.label);
    if (n == 0 && out == output_values.end()) continue;
    CudaPrecisionLayer& L = layer(op.label);
    L.matrix_values += n;
    if (out != output_values.end()) L.output_values = out->second;
  }
  for (CudaPrecisionLayer& L : report.layers) {
    report.matrix_bytes_fp32 += 4 * L.matrix_values;
    report.output_bytes_fp32 += 4 * L.output_values;
    StorageFormats one;
    if (L.matrix_values > 0) {
      one.by_layer[L.layer] = {cuda::kWeightsFp16, cuda::kWeightsFp32};
      L.fp16_error = max_abs_difference(outputs(one), reference);
      one.by_layer[L.layer] = {cuda::kWeightsBf16, cuda::kWeightsFp32};
      L.bf16_error = max_abs_difference(outputs(one), reference);
    }
    if (L.output_values > 0) {
      one.by_layer[L.layer] = {cuda::kWeightsFp32, cuda::kWeightsFp16};
      L.out_fp16_error = max_abs_difference(outputs(one), reference);
      one.by_layer[L.layer] = {cuda::kWeightsFp32, cuda::kWeightsBf16};
      L.out_bf16_error = max_abs_difference(outputs(one), reference);
    }
  }
  // Largest first: the bytes that matter most are tried first.
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < report.layers.size(); ++i) {
    if (report.layers[i].matrix_values > 0) candidates.push_back({i, false, 4 * report.layers[i].matrix_values});
    if (report.layers[i].output_values > 0) candidates.push_back({i, true, 4 * report.layers[i].output_values});
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.bytes > b.bytes; });
  StorageFormats mix;
  for (const Candidate& c : candidates) {
    const CudaPrecisionLayer& L = report.layers[c.layer];
    const double e16 = c.outputs ? L.out_fp16_error : L.fp16_error, eb16 = c.outputs ? L.out_bf16_error : L.bf16_error;
    if (std::min(e16, eb16) > max_error) continue;
    const int32_t format = e16 <= eb16 ? cuda::kWeightsFp16 : cuda::kWeightsBf16;
    StorageFormats trial = mix;
    LayerStorage& s = trial.by_layer[L.layer];
    (c.outputs ? s.activations : s.weights) = format;
    const double e = max_abs_difference(outputs(trial), reference);
    if (e > max_error) continue;
    mix = std::move(trial);
    report.chosen_error = e;
  }
  // The spec in its shortest form: the storage most layers agree with as `all`, the others by
  // name. A layer without matrices takes any weight format, one without such outputs any output
  // format (neither changes what it stores), so those parts follow `all`.
  const auto agrees = [&](const CudaPrecisionLayer& L, const LayerStorage& a) {
    const LayerStorage s = mix.of(L.layer);
    return (L.matrix_values == 0 || s.weights == a.weights) && (L.output_values == 0 || s.activations == a.activations);
  };
  StorageFormats spec;
  size_t most = 0;
  for (int32_t w : {cuda::kWeightsFp32, cuda::kWeightsFp16, cuda::kWeightsBf16})
    for (int32_t a : {cuda::kWeightsFp32, cuda::kWeightsFp16, cuda::kWeightsBf16}) {
      const LayerStorage candidate{w, a};
      const size_t n = size_t(std::count_if(report.layers.begin(), report.layers.end(),
                                            [&](const CudaPrecisionLayer& L) { return agrees(L, candidate); }));
      if (n > most) most = n, spec.all = candidate;
    }
  for (CudaPrecisionLayer& L : report.layers) {
    LayerStorage s = mix.of(L.layer);
    report.matrix_bytes_chosen += (s.weights == cuda::kWeightsFp32 ? 4 : 2) * L.matrix_values;
    report.output_bytes_chosen += (s.activations == cuda::kWeightsFp32 ? 4 : 2) * L.output_values;
    if (L.matrix_values == 0) s.weights = spec.all.weights;
    if (L.output_values == 0) s.activations = spec.all.activations;
    L.chosen = layer_storage_spec(s);
    if (!(s == spec.all)) spec.by_layer[L.layer] = s;
  }
  report.spec = cuda_precision_spec(spec);
  return report;
}

}  // namespace tickinfer::engine
