#pragma once
// Loads an LSTM fixture written by tools/make_lstm_fixtures.py (tests/fixtures/quant_lstm/<name>)
// into a one-op tfl::Program, prepares UNIDIRECTIONAL_SEQUENCE_LSTM from it and runs it on the
// fixture's inputs. The fixture's manifest lists every operand of the LSTM op as TFLite held it
// (type, shape, quantization, constant data), so this needs no TFLite loader.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_isa.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/prepared_op.hpp"
#include "tflite/program.hpp"
#include "support/source_paths.hpp"

namespace lstm_fixture {

using namespace tickinfer::tfl;

inline std::string fixture_dir(const std::string& name) {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  const std::string root = env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
  return root + "/quant_lstm/" + name;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline DType dtype_of(const std::string& s) {
  if (s == "float32") return DType::F32;
  if (s == "int8") return DType::I8;
  if (s == "int16") return DType::I16;
  if (s == "int32") return DType::I32;
  throw std::runtime_error("unexpected dtype " + s);
}

struct LstmFixture {
  std::string name, mode;
  int samples = 0;
  bool bf16_weights = false;  // weights are bfloat16 values stored as float32
  Program program;
  std::vector<uint8_t> inputs;   // samples x LSTM input tensor bytes
  std::vector<uint8_t> outputs;  // samples x LSTM output tensor bytes (TFLite's)
  const Op& op() const { return program.ops.at(0); }
  int input_tensor() const { return op().inputs.at(0); }
  int output_tensor() const { return op().outputs.at(0); }
  size_t tensor_bytes(int t) const {
    const Tensor& x = program.tensors.at(static_cast<size_t>(t));
    return static_cast<size_t>(element_count(x.shape)) * dtype_size(x.type);
  }
};

inline int add_tensor(Program& p, const nlohmann::json& e, const std::string& dir) {
  Tensor t;
  t.name = e.at("name").get<std::string>();
  t.type = dtype_of(e.at("dtype").get<std::string>());
  for (int d : e.at("shape")) t.shape.push_back(d);
  for (float s : e.at("scale")) t.quant.scale.push_back(s);
  for (int64_t z : e.at("zero_point")) t.quant.zero_point.push_back(z);
  t.quant.axis = e.at("quantized_dimension").get<int>();
  t.is_variable = e.at("is_variable").get<bool>();
  if (e.contains("data")) t.data = read_bytes(dir + "/" + e.at("data").get<std::string>());
  p.tensors.push_back(std::move(t));
  return static_cast<int>(p.tensors.size()) - 1;
}

inline LstmFixture load(const std::string& name) {
  const std::string dir = fixture_dir(name);
  const std::vector<uint8_t> text = read_bytes(dir + "/manifest.json");
  const nlohmann::json m = nlohmann::json::parse(text.begin(), text.end());
  LstmFixture f;
  f.name = name;
  f.mode = m.at("mode").get<std::string>();
  f.samples = m.at("samples").get<int>();
  f.bf16_weights = m.value("bf16_weights", false);
  Op op;
  op.code = OpCode::SequenceLstm;
  op.label = name;
  for (const auto& e : m.at("inputs")) op.inputs.push_back(e.is_null() ? -1 : add_tensor(f.program, e, dir));
  for (const auto& e : m.at("outputs")) op.outputs.push_back(add_tensor(f.program, e, dir));
  for (const auto& e : m.at("intermediates")) op.intermediates.push_back(add_tensor(f.program, e, dir));
  const auto& o = m.at("options");
  op.options.activation = static_cast<FusedActivation>(o.at("fused_activation_function").get<int>());
  op.options.cell_clip = o.at("cell_clip").get<float>();
  op.options.proj_clip = o.at("proj_clip").get<float>();
  op.options.time_major = o.at("time_major").get<bool>();
  op.options.asymmetric_quantize_inputs = o.at("asymmetric_quantize_inputs").get<bool>();
  f.program.ops.push_back(op);
  f.program.inputs = {op.inputs[0]};
  f.program.outputs = {op.outputs[0]};
  f.inputs = read_bytes(dir + "/input.bin");
  f.outputs = read_bytes(dir + "/lstm_out.bin");
  if (f.inputs.size() != f.tensor_bytes(f.input_tensor()) * static_cast<size_t>(f.samples) ||
      f.outputs.size() != f.tensor_bytes(f.output_tensor()) * static_cast<size_t>(f.samples)) {
    throw std::runtime_error(name + ": input.bin / lstm_out.bin sizes do not match the manifest");
  }
  return f;
}

// Re-types the 8 gate weight tensors of a bf16_weights fixture as BF16 (the upper halves of the
// float32 values, which the fixture guarantees are exact bfloat16 values).
inline void make_weights_bf16(LstmFixture& f) {
  for (int operand = 1; operand <= 8; ++operand) {
    const int t = f.op().inputs[static_cast<size_t>(operand)];
    if (t < 0) continue;
    Tensor& w = f.program.tensors[static_cast<size_t>(t)];
    std::vector<uint8_t> half(w.data.size() / 2);
    for (size_t i = 0; i < w.data.size() / 4; ++i) {
      uint32_t bits;
      std::memcpy(&bits, w.data.data() + 4 * i, 4);
      if ((bits & 0xFFFFu) != 0) throw std::runtime_error(f.name + ": weight is not a bfloat16 value");
      const uint16_t top = static_cast<uint16_t>(bits >> 16);
      std::memcpy(half.data() + 2 * i, &top, 2);
    }
    w.data = std::move(half);
    w.type = DType::BF16;
  }
}

// Memory for every tensor of a one-op program: constants point at their data, the rest get
// zeroed buffers owned here.
struct Memory {
  std::vector<std::vector<uint8_t>> owned;
  TensorMemory mem;
  explicit Memory(Program& p) {
    owned.resize(p.tensors.size());
    mem.addr.resize(p.tensors.size(), nullptr);
    for (size_t i = 0; i < p.tensors.size(); ++i) {
      Tensor& t = p.tensors[i];
      if (t.is_constant()) {
        mem.addr[i] = t.data.data();
      } else {
        const int64_t n = element_count(t.shape);
        owned[i].assign(static_cast<size_t>(n > 0 ? n : 0) * dtype_size(t.type) + 64, 0);
        mem.addr[i] = owned[i].data();
      }
    }
  }
  // What TFLite's reset_all_variables() writes: the zero point for int8 tensors (real 0), else 0.
  void reset(const Program& p, int t) {
    const Tensor& x = p.tensors[static_cast<size_t>(t)];
    const int value = x.type == DType::I8 && !x.quant.zero_point.empty() ? static_cast<int>(x.quant.zero_point[0]) : 0;
    std::memset(owned[static_cast<size_t>(t)].data(), value, owned[static_cast<size_t>(t)].size());
  }
  uint8_t* bytes(int t) { return static_cast<uint8_t*>(mem.addr[static_cast<size_t>(t)]); }
};

inline std::unique_ptr<PreparedOp> prepare(const Program& p, const InterpreterOptions& options,
                                           const char* isa) {
  PrepareContext ctx{p, p.ops.at(0), options, tickinfer::test_isa(isa)};
  return tickinfer::tfl::ops::prepare_sequence_lstm(ctx);
}

// Runs every sample from zero state; returns the op's output bytes for all samples.
inline std::vector<uint8_t> run_all(LstmFixture& f, PreparedOp& op) {
  Memory m(f.program);
  const size_t in_bytes = f.tensor_bytes(f.input_tensor());
  const size_t out_bytes = f.tensor_bytes(f.output_tensor());
  std::vector<uint8_t> got(out_bytes * static_cast<size_t>(f.samples));
  for (int s = 0; s < f.samples; ++s) {
    m.reset(f.program, f.op().inputs[18]);
    m.reset(f.program, f.op().inputs[19]);
    std::memcpy(m.bytes(f.input_tensor()), f.inputs.data() + in_bytes * static_cast<size_t>(s), in_bytes);
    op.eval(m.mem);
    std::memcpy(got.data() + out_bytes * static_cast<size_t>(s), m.bytes(f.output_tensor()), out_bytes);
  }
  return got;
}

inline std::vector<float> as_floats(const std::vector<uint8_t>& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

}  // namespace lstm_fixture
