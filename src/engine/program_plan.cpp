// ProgramPlan: runs a tfl::Program behind the Plan API.
#include "engine/step_clock.hpp"
#include "engine/program_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "model/graph.hpp"
#include "tflite/kernels/quantize_input.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {

namespace {

ProgramIo io_of(const tfl::Tensor& t) {
  ProgramIo io;
  io.type = t.type;
  io.elements = static_cast<size_t>(tfl::element_count(t.shape));
  if (t.type == tfl::DType::I8 || t.type == tfl::DType::I16) {
    if (t.quant.scale.size() != 1) {
      throw Error("tensor '" + t.name + "': a quantized model input/output needs one scale");
    }
    io.scale = t.quant.scale[0];
    io.zero_point = t.quant.zero_point.empty() ? 0 : static_cast<int32_t>(t.quant.zero_point[0]);
  } else if (t.type != tfl::DType::F32) {
    throw Error(std::string("tensor '") + t.name + "': model inputs/outputs of type " +
                tfl::dtype_name(t.type) + " are not supported (float32, int8, int16 are)");
  }
  return io;
}

// TFLite's reference Quantize: round half away from zero of x / scale (the division in float),
// plus the zero point, clamped to the type's range.
template <class Q>
void quantize_row(const float* x, Q* q, size_t n, float scale, int32_t zp) noexcept {
  constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  // Branch-free: this runs on every Plan::run over inputs that differ call to call, where a
  // branch per element mispredicts about half the time (it cost ~80 ns on mlp_small's ten).
  for (size_t i = 0; i < n; ++i) {
    const float v0 = x[i] / scale;  // the division in float, as TFLite's Quantize does it
    // fmax/fmin turn NaN into the bound; the select below then maps NaN to the zero point
    // (a real 0), never to undefined behaviour.
    const float v = std::fmin(std::fmax(v0, -1e9f), 1e9f);
    // Round half away from zero without libm: v minus its truncation is exact in float.
    int32_t r = static_cast<int32_t>(v);
    const float frac = v - static_cast<float>(r);
    r += static_cast<int32_t>(frac >= 0.5f) - static_cast<int32_t>(frac <= -0.5f);
    r = v0 == v0 ? r : 0;
    r = std::min(std::max(r + zp, lo), hi);
    q[i] = static_cast<Q>(r);
  }
}

// Float inputs and outputs are a few to a few hundred values: copied inline (eight at a time,
// then one by one) instead of through a libc call, which costs more than the copy at these sizes.
// The attribute keeps GCC from turning the tail loop back into that call (clang has no such
// pass option and does not do it at these sizes).
#if defined(__GNUC__) && !defined(__clang__)
#define TICKINFER_KEEP_COPY_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TICKINFER_KEEP_COPY_LOOP
#endif
TICKINFER_KEEP_COPY_LOOP void copy_floats(float* dst, const float* src, size_t n) noexcept {
  struct Eight {
    float v[8];
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Eight e;
    std::memcpy(&e, src + i, sizeof e);
    std::memcpy(dst + i, &e, sizeof e);
  }
  for (; i < n; ++i) dst[i] = src[i];
}

// DEQUANTIZE's own arithmetic (tflite/ops/quantize.cpp): the scale as a double, as TFLite's
// DequantizationParams holds it.
void dequantize_like_op(const int8_t* q, float* y, size_t n, float scale, int32_t zp) noexcept {
  const double s = scale;
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(s * (static_cast<int32_t>(q[i]) - zp));
}

template <class Q>
void dequantize_row(const Q* q, float* y, size_t n, float scale, int32_t zp) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] = scale * static_cast<float>(static_cast<int32_t>(q[i]) - zp);
}

}  // namespace

Shape plan_shape(const tfl::Shape& s, bool stream) {
  Shape out(s.begin(), s.end());
  if (!out.empty() && out[0] == 1) out.erase(out.begin());
  if (stream && out.size() >= 2 && out[0] == 1) out.erase(out.begin());
  return out;
}

ProgramPlan::ProgramPlan(std::shared_ptr<const tfl::Program> program, const CompileOptions& options)
    : ProgramPlan(std::move(program), options, IntegerStart{}) {}

ProgramPlan::ProgramPlan(std::shared_ptr<const tfl::Program> program, const CompileOptions& options,
                         IntegerStart start)
    : program_(std::move(program)), options_(options), mode_(options.mode) {
  start_ = std::move(start);
  tfl::InterpreterOptions io;
  io.isa = options.isa;
  if (start_) {
    // On a device: the reference kernels describe the integer forms (tflite/integer_form.hpp),
    // and every tensor keeps memory of its own, since the host runs the edge conversions around
    // the device's run in an order of its own (engine/program_plan_device.cpp).
    io.isa = "scalar";
    io.keep_all_tensors = true;
  }
  io.reset_variables_each_invoke = options.mode == RecurrentMode::Window;
  io.sparse = options.sparse == SparseMode::Dense    ? tfl::SparseChoice::Dense
              : options.sparse == SparseMode::Sparse ? tfl::SparseChoice::Sparse
                                                     : tfl::SparseChoice::Auto;
  // TFLite builds differ in how they round requantization (tflite/prepared_op.hpp): the default
  // matches the PyPI interpreters (per op family); the others round every op one way.
  if (options.rounding != RoundingMode::Tflite) {
    io.tflite_mixed_rounding = false;
    io.rounding = options.rounding == RoundingMode::Double ? tfl::Rounding::Double : tfl::Rounding::Single;
  }
  const bool stream = options.mode == RecurrentMode::Stream;
  if (program_->stream_only && !stream) {
    throw Error("this model was quantized one tick per call for stream mode (`tickinfer quantize --stream`): each call "
                "is the next tick and the recurrent state carries over, so a window-mode run would start every call "
                "from a zero state; compile it in stream mode (--mode stream, mode = \"stream\")");
  }
  interp_ = std::make_unique<tfl::Interpreter>(program_, io);
  bool has_state = false;
  // The interpreter's program: a stateful TFLite model's resource variables are variable tensors there.
  for (const tfl::Tensor& t : interp_->program().tensors) has_state = has_state || t.is_variable;
  for (size_t i = 0; i < interp_->num_inputs(); ++i) {
    const tfl::Tensor& t = interp_->input_tensor(i);
    if (!t.shape.empty() && t.shape[0] != 1) {
      throw Error("input '" + t.name + "': batch dimension " + std::to_string(t.shape[0]) +
                  " (tickinfer runs batch 1; convert with a batch size of 1)");
    }
    if (stream) {
      if (!has_state) throw Error("stream mode needs a recurrent model (no state tensors in this model)");
      if (t.shape.size() != 3 || t.shape[1] != 1) {
        throw Error("stream mode runs one time step per call: input '" + t.name +
                    "' must be [1, 1, features] (convert the model with a time length of 1)");
      }
    }
    in_.push_back(io_of(t));
    in_.back().tensor = program_->inputs[i];
    input_shapes_.push_back(plan_shape(t.shape, stream));
  }
  for (size_t i = 0; i < interp_->num_outputs(); ++i) {
    const tfl::Tensor& t = interp_->output_tensor(i);
    out_.push_back(io_of(t));
    out_.back().memory = interp_->tensor_data(program_->outputs[i]);
    out_.back().tensor = program_->outputs[i];
    output_shapes_.push_back(plan_shape(t.shape, false));
  }
  for (size_t i = 0; i < in_.size(); ++i) in_[i].memory = interp_->tensor_data(program_->inputs[i]);
  first_op_ = 0;
  last_op_ = interp_->num_ops();
  fold_edge_conversions();
  if (start_) start_device();
}

namespace {

bool reads(const tfl::Op& op, int tensor) {
  return std::find(op.inputs.begin(), op.inputs.end(), tensor) != op.inputs.end();
}

bool is_per_tensor_int8(const tfl::Tensor& t) {
  return t.type == tfl::DType::I8 && t.quant.scale.size() == 1 && t.quant.scale[0] > 0.0f;
}

}  // namespace

// Folds a QUANTIZE (float -> int8) that only the first op applies to the one model input, and a
// DEQUANTIZE (int8 -> float) that the last op applies into a model output. Both conversions are
// bit-identical to the ops' own: the same quantization kernel, and the op's dequantization
// formula (dequantize_op).
void ProgramPlan::fold_edge_conversions() {
  const tfl::Program& p = *program_;
  if (p.ops.empty()) return;
  const auto is_model_output = [&](int t) { return std::find(p.outputs.begin(), p.outputs.end(), t) != p.outputs.end(); };
  const tfl::Op& first = p.ops.front();
  if (p.inputs.size() == 1 && first.code == tfl::OpCode::Quantize && first.inputs.size() == 1 &&
      first.outputs.size() == 1 && first.inputs[0] == p.inputs[0] && !is_model_output(p.inputs[0]) &&
      in_[0].type == tfl::DType::F32 && is_per_tensor_int8(p.tensors[static_cast<size_t>(first.outputs[0])])) {
    bool read_elsewhere = false;
    for (size_t k = 1; k < p.ops.size(); ++k) read_elsewhere = read_elsewhere || reads(p.ops[k], p.inputs[0]);
    if (!read_elsewhere) {
      const int q = first.outputs[0];
      in_[0] = io_of(p.tensors[static_cast<size_t>(q)]);
      in_[0].memory = interp_->tensor_data(q);
      in_[0].tensor = q;
      first_op_ = 1;
    }
  }
  const tfl::Op& last = p.ops.back();
  if (p.ops.size() > first_op_ + 1 && last.code == tfl::OpCode::Dequantize && last.inputs.size() == 1 &&
      last.outputs.size() == 1 && is_per_tensor_int8(p.tensors[static_cast<size_t>(last.inputs[0])]) &&
      !is_model_output(last.inputs[0])) {
    for (size_t j = 0; j < p.outputs.size(); ++j) {
      if (p.outputs[j] != last.outputs[0] || out_[j].type != tfl::DType::F32) continue;
      const int q = last.inputs[0];
      out_[j] = io_of(p.tensors[static_cast<size_t>(q)]);
      out_[j].memory = interp_->tensor_data(q);
      out_[j].tensor = q;
      out_[j].dequantize_op = true;
      last_op_ = p.ops.size() - 1;
      break;
    }
  }
}

std::string ProgramPlan::reserve_rows(int max_rows) {
  if (!device_) return "TFLite and .tkq plans run one row per call";
  return reserve_device_rows(max_rows);
}

std::unique_ptr<PlanBackend> ProgramPlan::clone() const {
  if (start_) return std::make_unique<ProgramPlan>(program_, options_, start_);
  return std::make_unique<ProgramPlan>(program_, options_);
}

void ProgramPlan::run_rows(const float* x, int rows, float* y) noexcept {
  const size_t in = static_cast<size_t>(shape_size(input_shapes_[0])), out = static_cast<size_t>(shape_size(output_shapes_[0]));
  if (reserved_rows_ == 0) return run_each_row(*this, x, rows, in, y, out);
  for (int r = 0; r < rows; r += reserved_rows_) {
    const int n = std::min(reserved_rows_, rows - r);
    float* yr = y + static_cast<size_t>(r) * out;
    if (!run_rows_on_device(x + static_cast<size_t>(r) * in, n, yr))  // a failed slice gives NaN rows
      std::fill(yr, yr + static_cast<size_t>(n) * out, std::numeric_limits<float>::quiet_NaN());
  }
}

void ProgramPlan::run(const float* const* inputs, float* const* outputs) noexcept {
  convert_inputs(inputs);
  if (!device_) {
    interp_->invoke_ops(first_op_, last_op_);
  } else if (!run_on_device()) {
    for (size_t o = 0; o < out_.size(); ++o)  // a failed device gives NaN, never stale outputs
      std::fill(outputs[o], outputs[o] + out_[o].elements, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  convert_outputs(outputs);
}

void ProgramPlan::convert_inputs(const float* const* inputs) noexcept {
  for (size_t i = 0; i < in_.size(); ++i) {
    const ProgramIo& io = in_[i];
    void* dst = io.memory;
    switch (io.type) {
      case tfl::DType::I8:
        interp_->quantize_input_kernel()(inputs[i], static_cast<int8_t*>(dst), io.elements, io.scale, io.zero_point);
        break;
      case tfl::DType::I16: quantize_row(inputs[i], static_cast<int16_t*>(dst), io.elements, io.scale, io.zero_point); break;
      default: copy_floats(static_cast<float*>(dst), inputs[i], io.elements); break;
    }
  }
}

void ProgramPlan::convert_outputs(float* const* outputs) noexcept {
  for (size_t i = 0; i < out_.size(); ++i) {
    const ProgramIo& io = out_[i];
    const void* src = io.memory;
    if (io.dequantize_op) {
      dequantize_like_op(static_cast<const int8_t*>(src), outputs[i], io.elements, io.scale, io.zero_point);
      continue;
    }
    switch (io.type) {
      case tfl::DType::I8: dequantize_row(static_cast<const int8_t*>(src), outputs[i], io.elements, io.scale, io.zero_point); break;
      case tfl::DType::I16: dequantize_row(static_cast<const int16_t*>(src), outputs[i], io.elements, io.scale, io.zero_point); break;
      default: copy_floats(outputs[i], static_cast<const float*>(src), io.elements); break;
    }
  }
}

int64_t ProgramPlan::weight_bytes() const {
  int64_t bytes = 0;
  for (const tfl::Tensor& t : program_->tensors) {
    if (t.is_constant() && !t.is_variable) bytes += static_cast<int64_t>(t.data.size());
  }
  return bytes;
}

// The ops run() invokes, one profile entry each (the folded edge conversions are run()'s own
// input and output handling, timed with the first and last op).
std::vector<Plan::StepProfile> ProgramPlan::profile_steps() const {
  if (device_) return {{"CUDA integer program (whole run)", flops(), 0}};
  std::vector<Plan::StepProfile> out;
  const tfl::Program& p = interp_->program();
  for (size_t i = first_op_; i < last_op_; ++i) {
    std::string name = "op " + std::to_string(i);
    if (p.ops.size() == interp_->num_ops()) name = std::string(tfl::op_name(p.ops[i].code)) + "  " + p.ops[i].label;
    out.push_back({name, 2 * interp_->op_macs(i), 0});
  }
  return out;
}

void ProgramPlan::run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept {
  if (device_) {
    const uint64_t t0 = step_clock();
    run(inputs, outputs);
    ticks[0] = step_clock() - t0;
    return;
  }
  // run() with its one invoke split per op; the input conversion is timed with the first op,
  // the output conversion with the last.
  uint64_t before = step_clock();
  convert_inputs(inputs);
  for (size_t i = first_op_; i < last_op_; ++i) {
    if (i == first_op_) {
      interp_->invoke_ops(i, i + 1);  // resets per-invoke state first, as run()'s invoke does
    } else {
      interp_->invoke_range(i, i + 1);
    }
    if (i + 1 == last_op_) convert_outputs(outputs);
    const uint64_t after = step_clock();
    ticks[i - first_op_] = after - before;
    before = after;
  }
  if (first_op_ == last_op_) convert_outputs(outputs);
}

std::string ProgramPlan::describe() const {
  const tfl::Interpreter& in = *interp_;
  std::ostringstream os;
  os << "plan: " << in.num_ops() << " ops (" << in.program().source_format << "), "
     << (device_ ? device_->describe() : std::string("kernels ") + in.isa()) << ", mode " << (mode_ == RecurrentMode::Stream ? "stream" : "window") << ", arena " << arena_bytes()
     << " B, " << in.macs() << " MAC per run\n";
  if (folds_first_op() || folds_last_op()) {
    os << "  (" << (folds_first_op() ? "the first QUANTIZE" : "")
       << (folds_first_op() && folds_last_op() ? " and " : "") << (folds_last_op() ? "the last DEQUANTIZE" : "")
       << " done by the plan while it converts inputs and outputs)\n";
  }
  if (device_) {
    for (size_t op : host_before_) os << "  op " << op << " on the host before the device's run (a float input's QUANTIZE)\n";
    for (size_t i = 0; i < device_program_->labels.size(); ++i)
      os << "  step " << i << ": " << device_program_->labels[i] << "\n";
    for (size_t op : host_after_) os << "  op " << op << " on the host after it (a float output's DEQUANTIZE)\n";
    return os.str();
  }
  std::istringstream lines(in.describe());
  for (std::string line; std::getline(lines, line);) os << "  " << line << '\n';
  return os.str();
}

}  // namespace tickinfer::engine
