// UNIDIRECTIONAL_SEQUENCE_LSTM end to end: .tflite files read by formats::load_tflite and run by
// quant::Interpreter (default options: the int8 zero-point state reset, the default rounding),
// against TFLite's reference interpreter.
//  * tests/fixtures/quant_lstm/*/model.tflite: the program is cut before its STRIDED_SLICE, so
//    its output is the LSTM's whole output sequence, compared with the LSTM tensor TFLite held.
//  * tests/fixtures/tflite/lstm_tiny (2 stacked LSTM(128), one time step, then a Dense): the
//    one-step STRIDED_SLICE is a reshape, so it is run as RESHAPE, and the model's output is
//    compared with TFLite's for all 200 rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "formats/tflite_file.hpp"
#include "quant/interpreter.hpp"
#include "quant_lstm_fixture.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::quant;

quant::Program load_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.empty()) throw std::runtime_error("cannot read " + path);
  return formats::load_tflite(bytes.data(), bytes.size(), path);
}

// Drops every op from the first STRIDED_SLICE on; the program's output becomes that op's input.
void cut_before_strided_slice(Program& p) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].code != OpCode::StridedSlice) continue;
    p.outputs = {p.ops[i].inputs.at(0)};
    p.ops.resize(i);
    return;
  }
}

double max_abs(const float* v, size_t n) {
  double m = 1e-30;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(v[i])));
  return m;
}

void expect_fixture_matches(const std::string& name, double tolerance) {
  const lstm_fixture::LstmFixture f = lstm_fixture::load(name);
  auto program = std::make_shared<Program>(load_file(lstm_fixture::fixture_dir(name) + "/model.tflite"));
  cut_before_strided_slice(*program);
  ASSERT_EQ(program->ops.back().code, OpCode::SequenceLstm);
  Interpreter interp(program);
  const size_t in_bytes = f.tensor_bytes(f.input_tensor());
  const size_t out_bytes = f.tensor_bytes(f.output_tensor());
  const bool int8 = interp.output_tensor(0).type == DType::I8;
  const size_t n = out_bytes / (int8 ? 1 : 4);
  for (int s = 0; s < f.samples; ++s) {
    std::memcpy(interp.input_data(0), f.inputs.data() + in_bytes * static_cast<size_t>(s), in_bytes);
    interp.invoke();
    const uint8_t* want = f.outputs.data() + out_bytes * static_cast<size_t>(s);
    if (int8) {
      EXPECT_EQ(std::memcmp(interp.output_data(0), want, out_bytes), 0) << name << " sample " << s;
      continue;
    }
    std::vector<float> w(n), g(n);
    std::memcpy(w.data(), want, out_bytes);
    std::memcpy(g.data(), interp.output_data(0), out_bytes);
    const double scale = max_abs(w.data(), n);
    for (size_t k = 0; k < n; ++k) {
      ASSERT_LE(std::fabs(static_cast<double>(g[k]) - w[k]) / scale, tolerance) << name << " sample " << s << " [" << k << "]";
    }
  }
}

TEST(QuantLstmTflite, Int8ModelFileBitExact) {
  expect_fixture_matches("small_int8", 0);
  expect_fixture_matches("big_seq_int8", 0);
}
TEST(QuantLstmTflite, FloatModelFile) { expect_fixture_matches("big_float", 1e-5); }
// Bit for bit: the hybrid step reproduces TFLite's input quantization and float activations.
TEST(QuantLstmTflite, DynamicRangeModelFile) { expect_fixture_matches("wide_seq_dynamic", 0.0); }

std::string tflite_fixtures() { return std::string(TICKINFER_SOURCE_DIR) + "/tests/fixtures/tflite"; }

// lstm_tiny: [x] -> LSTM(128) -> LSTM(128) -> STRIDED_SLICE (one step: a reshape) -> Dense.
void expect_lstm_tiny(const std::string& mode, const char* isa) {
  std::ifstream mf(tflite_fixtures() + "/manifest.json");
  ASSERT_TRUE(mf.good());
  const nlohmann::json entry = nlohmann::json::parse(mf)["models"]["lstm_tiny"]["modes"][mode];
  const std::string dir = tflite_fixtures() + "/lstm_tiny/";
  auto program = std::make_shared<Program>(load_file(dir + entry["file"].get<std::string>()));
  for (Op& op : program->ops) {
    if (op.code != OpCode::StridedSlice) continue;
    const Tensor& in = program->tensors.at(static_cast<size_t>(op.inputs.at(0)));
    ASSERT_EQ(in.shape.size(), 3u);
    ASSERT_EQ(in.shape[1], 1) << "only a one-step slice is a reshape";
    op.code = OpCode::Reshape;
    op.inputs.resize(1);
  }
  InterpreterOptions options;
  options.isa = isa;
  Interpreter interp(program, options);
  const formats::NpyArray in = formats::read_npy(dir + entry["input_files"][0].get<std::string>());
  const formats::NpyArray want = formats::read_npy(dir + entry["expected_ref_files"][0].get<std::string>());
  const size_t rows = static_cast<size_t>(in.shape[0]);
  const size_t n_in = in.data.size() / rows, n_out = want.data.size() / rows;
  const bool int8 = interp.input_tensor(0).type == DType::I8;
  const double scale = max_abs(want.data.data(), want.data.size());
  size_t bad = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < n_in; ++k) {
      if (int8) {
        static_cast<int8_t*>(interp.input_data(0))[k] = static_cast<int8_t>(in.data[r * n_in + k]);
      } else {
        static_cast<float*>(interp.input_data(0))[k] = in.data[r * n_in + k];
      }
    }
    interp.invoke();
    for (size_t k = 0; k < n_out; ++k) {
      const double w = want.data[r * n_out + k];
      const double g = int8 ? static_cast<const int8_t*>(interp.output_data(0))[k]
                            : static_cast<const float*>(interp.output_data(0))[k];
      const double err = int8 ? std::fabs(g - w) : std::fabs(g - w) / scale;
      if (err > (int8 || mode == "dynamic" ? 0.0 : 1e-5)) ++bad;  // hybrid: bit for bit
    }
  }
  EXPECT_EQ(bad, 0u) << "lstm_tiny " << mode << " isa " << interp.isa() << ": " << bad << " of " << rows * n_out
                     << " outputs differ from TFLite";
}

TEST(QuantLstmTflite, LstmTinyInt8BitExact) {
  expect_lstm_tiny("int8", "scalar");
  expect_lstm_tiny("int8", "");
}
TEST(QuantLstmTflite, LstmTinyDynamicRange) {
  expect_lstm_tiny("dynamic", "scalar");
  expect_lstm_tiny("dynamic", "");
}
TEST(QuantLstmTflite, LstmTinyFloat) {
  expect_lstm_tiny("float", "scalar");
  expect_lstm_tiny("float", "");
}

}  // namespace
