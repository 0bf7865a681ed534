#pragma once
// Builds small tfl::Programs by hand for op tests: tensors with data and quantization, one op,
// prepare through the registry, and TensorMemory pointing at caller-owned buffers.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "test_isa.hpp"
#include "tflite/prepared_op.hpp"
#include "tflite/program.hpp"

namespace tickinfer::tfl::testing {

class ProgramBuilder {
 public:
  int tensor(const std::string& name, DType type, Shape shape, std::vector<float> scale = {},
             std::vector<int64_t> zp = {}, int axis = 0) {
    Tensor t;
    t.name = name;
    t.type = type;
    t.shape = std::move(shape);
    t.quant.scale = std::move(scale);
    t.quant.zero_point = std::move(zp);
    t.quant.axis = axis;
    program.tensors.push_back(std::move(t));
    return static_cast<int>(program.tensors.size()) - 1;
  }
  template <class T>
  int constant(const std::string& name, DType type, Shape shape, const std::vector<T>& values,
               std::vector<float> scale = {}, std::vector<int64_t> zp = {}, int axis = 0) {
    const int i = tensor(name, type, std::move(shape), std::move(scale), std::move(zp), axis);
    auto& d = program.tensors[static_cast<size_t>(i)].data;
    d.resize(values.size() * sizeof(T));
    std::memcpy(d.data(), values.data(), d.size());
    return i;
  }
  Op& op(OpCode code, std::vector<int> inputs, std::vector<int> outputs) {
    Op o;
    o.code = code;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    o.label = "test_op";
    program.ops.push_back(std::move(o));
    return program.ops.back();
  }
  // Prepares op `index` with the given ISA and rounding.
  std::unique_ptr<PreparedOp> prepare(size_t index, const char* isa = "scalar",
                                      Rounding rounding = Rounding::Double) {
    options.rounding = rounding;
    options.tflite_mixed_rounding = false;  // the mode under test applies to every op
    PrepareContext ctx{program, program.ops.at(index), options, ::tickinfer::test_isa(isa)};
    return prepare_op(ctx);
  }
  // Memory: constants point at their data; others at buffers the caller binds.
  TensorMemory memory() const {
    TensorMemory m;
    m.addr.assign(program.tensors.size(), nullptr);
    for (size_t i = 0; i < program.tensors.size(); ++i) {
      if (program.tensors[i].is_constant()) m.addr[i] = const_cast<uint8_t*>(program.tensors[i].data.data());
    }
    return m;
  }

  Program program;
  InterpreterOptions options;
};

}  // namespace tickinfer::tfl::testing
