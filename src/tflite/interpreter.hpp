#pragma once
// Runs a tfl::Program (a TFLite model or a tickinfer-quantized one) at batch 1 with no
// allocation after construction. Construction prepares every op once (tflite/prepared_op.hpp:
// types and shapes checked, multipliers and lookup tables derived, weights packed) and lays the
// activation tensors out in one 64-byte aligned arena, reusing memory between tensors whose
// lifetimes do not overlap (unless keep_all_tensors). invoke() walks the prepared ops.
//
// An Interpreter owns mutable state (arena, recurrent state): one per thread. The Program it
// runs is shared read-only, so many interpreters over one Program cost one copy of the weights
// in the Program plus each op's packed copy.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tflite/kernels/quantize_input.hpp"
#include "tflite/prepared_op.hpp"
#include "tflite/program.hpp"

namespace tickinfer::tfl {

class Interpreter {
 public:
  // Throws tickinfer::Error (naming the op) for anything it cannot run.
  explicit Interpreter(std::shared_ptr<const Program> program, InterpreterOptions options = {});
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;
  ~Interpreter();

  // The program as run: the one given, or its copy with resource variables lowered and static
  // ops folded (tflite/rewrite/program_rewrite.hpp; same tensor and op indices, variables appended).
  const Program& program() const { return *program_; }
  const InterpreterOptions& options() const { return options_; }
  size_t num_inputs() const { return program_->inputs.size(); }
  size_t num_outputs() const { return program_->outputs.size(); }
  const Tensor& input_tensor(size_t i) const { return program_->tensors[program_->inputs[i]]; }
  const Tensor& output_tensor(size_t i) const { return program_->tensors[program_->outputs[i]]; }

  // Raw memory of input i / output i in the tensor's own type (int8 for full-integer models).
  void* input_data(size_t i) noexcept { return mem_.addr[static_cast<size_t>(program_->inputs[i])]; }
  const void* output_data(size_t i) const noexcept {
    return mem_.addr[static_cast<size_t>(program_->outputs[i])];
  }
  // Any tensor's memory (constants included). Every activation keeps its value after invoke()
  // only with keep_all_tensors; otherwise its memory may have been reused by a later tensor.
  const void* tensor_data(int tensor) const noexcept { return mem_.addr[static_cast<size_t>(tensor)]; }
  void* tensor_data(int tensor) noexcept { return mem_.addr[static_cast<size_t>(tensor)]; }

  // Runs every op once. Zeroes the variable tensors first when reset_variables_each_invoke.
  void invoke() noexcept;
  // Runs ops [first, last) only (for per-op timing by the quantizer and the bench).
  void invoke_range(size_t first, size_t last) noexcept;
  // invoke() for ops [first, last): the state reset as invoke() does it, then those ops (a Plan
  // that does an edge QUANTIZE/DEQUANTIZE itself skips them).
  void invoke_ops(size_t first, size_t last) noexcept;
  // Zeroes every variable tensor (recurrent state), as TFLite's ResetVariableTensors does
  // (zero point of the tensor for quantized state).
  void reset_state() noexcept;

  size_t num_ops() const { return ops_.size(); }
  const char* isa() const { return ::tickinfer::kernels::isa_name(isa_); }
  ::tickinfer::kernels::Isa kernel_isa() const { return isa_; }
  // The float -> int8 input quantization of this ISA (bit-identical to TFLite's Quantize loop),
  // for a caller that quantizes the model inputs itself instead of running the first QUANTIZE
  // (engine/program_plan.cpp).
  kernels::QuantizeF32S8Fn quantize_input_kernel() const noexcept { return quantize_input_; }
  size_t arena_bytes() const { return arena_bytes_; }
  int64_t macs() const;
  int64_t op_macs(size_t op) const { return ops_[op]->macs(); }  // one op's share of macs()
  // One line per op: index, op, label, precision, output shape/type, the kernel's own description.
  std::string describe() const;
  // Op `op`'s int8 arithmetic for another executor (tflite/integer_form.hpp), appended to `out`
  // (one form per output), from the prepared op's own parameters: "" or why not, naming the op.
  // FULLY_CONNECTED and CONV_2D describe their reference kernels only: prepare with isa "scalar".
  std::string integer_forms(size_t op, std::vector<IntegerForm>* out) const;

 private:
  void choose_timed_forms();  // interpreter_timed_forms.cpp

  std::shared_ptr<const Program> program_;
  InterpreterOptions options_;
  ::tickinfer::kernels::Isa isa_ = ::tickinfer::kernels::Isa::Scalar;
  kernels::QuantizeF32S8Fn quantize_input_ = kernels::quantize_f32_to_s8_scalar;
  struct ArenaFree {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, ArenaFree> arena_;
  size_t arena_bytes_ = 0;
  TensorMemory mem_;
  std::vector<std::unique_ptr<PreparedOp>> ops_;
  std::vector<PreparedOp*> stateful_ops_;  // has_state(): reset by reset_state()
  struct VariableRange {
    void* data;
    size_t bytes;
    int8_t fill;  // zero point of quantized state, else 0
    bool fill_is_int16 = false;
    int16_t fill16 = 0;
  };
  std::vector<VariableRange> variables_;
};

}  // namespace tickinfer::tfl
