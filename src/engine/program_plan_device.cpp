// ProgramPlan on a device: its int8 ops as the CUDA backend's integer program, the conversions
// between the Plan API's floats and the program's int8 tensors left on the host (the plan's own,
// and a float model input's QUANTIZE or a float model output's DEQUANTIZE, run by the
// interpreter's ops), so the outputs are the CPU plan's to the bit.
#include <algorithm>
#include <cstring>

#include "engine/cuda_integer_lowering.hpp"
#include "engine/program_plan.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {

void ProgramPlan::start_device() {
  const tfl::Program& p = interp_->program();
  const std::string& name = program_->name;
  auto listed = [](const std::vector<int>& v, int t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  auto tensor = [&](int t) -> const tfl::Tensor& { return p.tensors[size_t(t)]; };
  std::vector<int> inputs, outputs;
  std::vector<size_t> device_ops;
  for (size_t i = first_op_; i < last_op_; ++i) {
    const tfl::Op& op = p.ops[i];
    const bool one_to_one = op.inputs.size() == 1 && op.outputs.size() == 1;
    if (one_to_one && op.code == tfl::OpCode::Quantize && listed(p.inputs, op.inputs[0]) &&
        tensor(op.inputs[0]).type == tfl::DType::F32 && tensor(op.outputs[0]).type == tfl::DType::I8) {
      host_before_.push_back(i);
      inputs.push_back(op.outputs[0]);
    } else if (one_to_one && op.code == tfl::OpCode::Dequantize && listed(p.outputs, op.outputs[0]) &&
               tensor(op.inputs[0]).type == tfl::DType::I8) {
      host_after_.push_back(i);
      outputs.push_back(op.inputs[0]);
    } else {
      device_ops.push_back(i);
    }
  }
  for (const ProgramIo& io : in_)
    if (io.type == tfl::DType::I8) inputs.push_back(io.tensor);
  for (const ProgramIo& io : out_) {
    if (io.type == tfl::DType::I8) {
      outputs.push_back(io.tensor);
      continue;
    }
    const bool dequantized_here = std::any_of(host_after_.begin(), host_after_.end(),
                                              [&](size_t i) { return p.ops[i].outputs[0] == io.tensor; });
    if (io.type != tfl::DType::F32 || !dequantized_here)
      throw Error("--device cuda: model '" + name + "': output '" + tensor(io.tensor).name + "' is " +
                  tfl::dtype_name(io.type) + " and not dequantized from an int8 tensor by the model's last op");
  }
  device_program_ = std::make_shared<const cuda::IntegerProgram>(
      integer_program_from(*interp_, device_ops, inputs, outputs, name));
  try {
    device_ = start_(device_program_);
  } catch (const std::exception& e) {
    throw Error(std::string("--device cuda: ") + e.what());
  }
  for (int t : inputs) device_in_.push_back(static_cast<const int8_t*>(interp_->tensor_data(t)));
  for (int t : outputs) device_out_.push_back(static_cast<int8_t*>(interp_->tensor_data(t)));
}

bool ProgramPlan::run_on_device() noexcept {
  for (size_t op : host_before_) interp_->invoke_range(op, op + 1);
  if (!device_->run(device_in_.data(), device_out_.data())) return false;
  for (size_t op : host_after_) interp_->invoke_range(op, op + 1);
  return true;
}

std::string ProgramPlan::reserve_device_rows(int max_rows) {
  if (in_.size() != 1 || out_.size() != 1) return "--device cuda: rows side by side need one input and one output";
  if (std::string why = device_->reserve_rows(max_rows); !why.empty()) {
    reserved_rows_ = 0;  // a failed reservation may have released the one before: rows one at a time
    return "--device cuda: " + why;
  }
  rows_in_.assign(size_t(device_program_->inputs[0].bytes) * size_t(max_rows), 0);
  rows_out_.assign(size_t(device_program_->outputs[0].bytes) * size_t(max_rows), 0);
  reserved_rows_ = max_rows;
  return {};
}

// Each row's conversion (and host ops) as run() does it, into the slice's device inputs; one
// device call for the slice; each row's outputs back through the same conversions.
bool ProgramPlan::run_rows_on_device(const float* x, int rows, float* y) noexcept {
  const size_t in = size_t(shape_size(input_shapes_[0])), out = size_t(shape_size(output_shapes_[0]));
  const size_t in_bytes = size_t(device_program_->inputs[0].bytes), out_bytes = size_t(device_program_->outputs[0].bytes);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * in;
    convert_inputs(&xr);
    for (size_t op : host_before_) interp_->invoke_range(op, op + 1);
    std::memcpy(rows_in_.data() + size_t(r) * in_bytes, device_in_[0], in_bytes);
  }
  if (!device_->run_rows(rows_in_.data(), rows, rows_out_.data())) return false;
  for (int r = 0; r < rows; ++r) {
    std::memcpy(device_out_[0], rows_out_.data() + size_t(r) * out_bytes, out_bytes);
    for (size_t op : host_after_) interp_->invoke_range(op, op + 1);
    float* yr = y + size_t(r) * out;
    convert_outputs(&yr);
  }
  return true;
}

}  // namespace tickinfer::engine
