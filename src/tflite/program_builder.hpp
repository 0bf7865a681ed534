#pragma once
// Appends tensors and ops to a Program: what the Keras lowering and the quantizer use to build
// one. Indices returned are tensor indices in the program.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tflite/program.hpp"

namespace tickinfer::tfl {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(Program& p) : p_(p) {}

  // An activation (no data).
  int activation(std::string name, DType type, Shape shape, QuantParams quant = {}) {
    Tensor t;
    t.name = std::move(name);
    t.type = type;
    t.shape = std::move(shape);
    t.quant = std::move(quant);
    p_.tensors.push_back(std::move(t));
    return static_cast<int>(p_.tensors.size() - 1);
  }
  // A constant holding `values` as `type` (T must match the type's element size).
  template <class T>
  int constant(std::string name, DType type, Shape shape, const std::vector<T>& values, QuantParams quant = {}) {
    const int i = activation(std::move(name), type, std::move(shape), std::move(quant));
    auto& d = p_.tensors[static_cast<size_t>(i)].data;
    d.resize(values.size() * sizeof(T));
    if (!d.empty()) std::memcpy(d.data(), values.data(), d.size());
    return i;
  }
  int int32_constant(std::string name, const std::vector<int32_t>& values) {
    return constant(std::move(name), DType::I32, {static_cast<int>(values.size())}, values);
  }
  Op& op(OpCode code, std::vector<int> inputs, std::vector<int> outputs, std::string label,
         Precision precision = Precision::F32) {
    Op o;
    o.code = code;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    o.label = std::move(label);
    o.precision = precision;
    p_.ops.push_back(std::move(o));
    return p_.ops.back();
  }
  Tensor& tensor(int i) { return p_.tensors[static_cast<size_t>(i)]; }
  Program& program() { return p_; }

 private:
  Program& p_;
};

}  // namespace tickinfer::tfl
