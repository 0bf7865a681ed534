#pragma once
// A Plan over a tfl::Program (TFLite and tickinfer-quantized models): the interpreter plus
// the conversion between the Plan API's float buffers and the program's own input and output
// types. A full-integer model's int8 input is quantized here exactly as TFLite's QUANTIZE op
// does (x / scale in float, rounded half away from zero, plus the zero point, clamped), and its
// int8 output dequantized (scale * (q - zero_point)); float inputs and outputs are copied. A float
// model input that goes straight into a QUANTIZE op (a tickinfer-quantized model's first op) is
// quantized here into that op's output, and a closing DEQUANTIZE to a model output is done here
// too: the same arithmetic, one copy and one op call fewer per run.
#include <memory>
#include <vector>

#include "tflite/interpreter.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

struct ProgramIo {
  tfl::DType type = tfl::DType::F32;
  float scale = 1.0f;
  int32_t zero_point = 0;
  size_t elements = 0;
  // Where the plan writes this input / reads this output: the program's input/output tensor, or,
  // for a QUANTIZE that opens / a DEQUANTIZE that closes the program, that op's output / input
  // (the plan then does the op's conversion itself and skips the op).
  void* memory = nullptr;
  bool dequantize_op = false;  // an output folded from DEQUANTIZE: its formula, scale in double
};

class ProgramPlan {
 public:
  ProgramPlan(std::shared_ptr<const tfl::Program> program, const CompileOptions& options);

  void run(const float* const* inputs, float* const* outputs) noexcept;
  void reset_state() noexcept { interp_->reset_state(); }
  std::unique_ptr<ProgramPlan> clone() const;

  const std::vector<Shape>& input_shapes() const { return input_shapes_; }
  const std::vector<Shape>& output_shapes() const { return output_shapes_; }
  RecurrentMode mode() const { return mode_; }
  const tfl::Interpreter& interpreter() const { return *interp_; }
  // Whether run() does the program's opening QUANTIZE / closing DEQUANTIZE itself (skipping them).
  bool folds_first_op() const { return first_op_ == 1; }
  bool folds_last_op() const { return last_op_ + 1 == interp_->num_ops(); }
  tfl::Interpreter& interpreter() { return *interp_; }
  int64_t weight_bytes() const;

 private:
  void fold_edge_conversions();

  std::shared_ptr<const tfl::Program> program_;
  CompileOptions options_;
  RecurrentMode mode_;
  std::unique_ptr<tfl::Interpreter> interp_;
  std::vector<ProgramIo> in_, out_;
  size_t first_op_ = 0, last_op_ = 0;  // the ops run() invokes: all but folded edge conversions
  std::vector<Shape> input_shapes_, output_shapes_;
};

// The shape a Plan or Model reports for a program tensor: without the leading batch dimension
// of 1; in stream mode the time axis of a [1, 1, features] input is dropped too.
Shape plan_shape(const tfl::Shape& program_shape, bool stream);

}  // namespace tickinfer::engine
