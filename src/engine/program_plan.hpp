#pragma once
// The backend of a tfl::Program (TFLite and tickinfer-quantized models): the interpreter plus
// the conversion between the Plan API's float buffers and the program's own input and output
// types. A full-integer model's int8 input is quantized here exactly as TFLite's QUANTIZE op
// does (x / scale in float, rounded half away from zero, plus the zero point, clamped), and its
// int8 output dequantized (scale * (q - zero_point)); float inputs and outputs are copied. A float
// model input that goes straight into a QUANTIZE op (a tickinfer-quantized model's first op) is
// quantized here into that op's output, and a closing DEQUANTIZE to a model output is done here
// too: the same arithmetic, one copy and one op call fewer per run.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/integer_runner.hpp"
#include "engine/plan_backend.hpp"
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
  int tensor = -1;             // the program tensor behind `memory`
};

// Starts what runs a program's integer ops on a device (the CUDA graph of cuda/integer_runner.hpp,
// or its host executor in the tests).
using IntegerStart = std::function<std::unique_ptr<cuda::IntegerRunner>(std::shared_ptr<const cuda::IntegerProgram>)>;

class ProgramPlan final : public PlanBackend {
 public:
  // Prepares the interpreter (its own arena): throws tickinfer::Error for a batch other than 1,
  // stream mode on a program without state or with an input not [1, 1, features], and input or
  // output types other than float32, int8 and int16.
  ProgramPlan(std::shared_ptr<const tfl::Program> program, const CompileOptions& options);
  // The same plan with its ops (all but the folded edge conversions) on a device: the integer
  // program (engine/cuda_integer_lowering.hpp) started by `start`. The conversions stay on the
  // host, so the outputs are the CPU plan's to the bit. Throws tickinfer::Error naming the first
  // op without an integer form, or a model input or output that is not int8 once the edges fold.
  ProgramPlan(std::shared_ptr<const tfl::Program> program, const CompileOptions& options, IntegerStart start);

  void run(const float* const* inputs, float* const* outputs) noexcept override;
  void run_rows(const float* x, int rows, float* y) noexcept override;
  void reset_state() noexcept override { interp_->reset_state(); }

  // On the CPU always refuses: a program runs one row per call (run_rows is run() per row). On a
  // device: one launch per slice of up to max_rows rows (engine/program_plan_device.cpp), each row
  // the bits run() gives it; refused for a program with more than one input or output.
  std::string reserve_rows(int max_rows) override;
  int reserved_rows() const noexcept override { return reserved_rows_; }
  // Shares the program; prepares a new interpreter (packed weights included) for it.
  std::unique_ptr<PlanBackend> clone() const override;

  const std::vector<Shape>& input_shapes() const override { return input_shapes_; }
  const std::vector<Shape>& output_shapes() const override { return output_shapes_; }
  RecurrentMode mode() const override { return mode_; }
  const char* isa() const override { return device_ ? "cuda-int8" : interp_->isa(); }
  size_t arena_bytes() const override { return interp_->arena_bytes(); }
  int64_t flops() const override { return 2 * interp_->macs(); }
  // Constant tensors as stored (int8 weights one byte each); both per run and resident.
  int64_t weight_bytes() const override;
  int64_t weight_footprint_bytes() const override { return weight_bytes(); }
  std::string describe() const override;
  std::vector<Plan::StepProfile> profile_steps() const override;
  void run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept override;

  // Whether run() does the program's opening QUANTIZE / closing DEQUANTIZE itself (skipping them).
  bool folds_first_op() const { return first_op_ == 1; }
  bool folds_last_op() const { return last_op_ + 1 == interp_->num_ops(); }

 private:
  void fold_edge_conversions();

  std::shared_ptr<const tfl::Program> program_;
  CompileOptions options_;
  RecurrentMode mode_;
  std::unique_ptr<tfl::Interpreter> interp_;
  std::vector<ProgramIo> in_, out_;
  void convert_inputs(const float* const* inputs) noexcept;  // float rows into the input tensors
  void convert_outputs(float* const* outputs) noexcept;      // the output tensors into float rows
  size_t first_op_ = 0, last_op_ = 0;  // the ops run() invokes: all but folded edge conversions
  // On a device (engine/program_plan_device.cpp): ops [first_op_, last_op_) run there, but for
  // QUANTIZE ops of float model inputs (host_before_) and DEQUANTIZE ops into float model outputs
  // (host_after_), which the host runs around the device's run.
  void start_device();
  bool run_on_device() noexcept;
  bool run_rows_on_device(const float* x, int rows, float* y) noexcept;  // at most reserved_rows_
  std::string reserve_device_rows(int max_rows);
  IntegerStart start_;
  std::shared_ptr<const cuda::IntegerProgram> device_program_;
  std::unique_ptr<cuda::IntegerRunner> device_;
  std::vector<size_t> host_before_, host_after_;
  std::vector<const int8_t*> device_in_;        // the interpreter's memory of the device's inputs
  std::vector<int8_t*> device_out_;             // and of its outputs
  int reserved_rows_ = 0;
  std::vector<int8_t> rows_in_, rows_out_;      // a slice's device inputs and outputs, row after row
  std::vector<Shape> input_shapes_, output_shapes_;
};

// The shape a Plan or Model reports for a program tensor: without the leading batch dimension
// of 1; in stream mode the time axis of a [1, 1, features] input is dropped too.
Shape plan_shape(const tfl::Shape& program_shape, bool stream);

}  // namespace tickinfer::engine
