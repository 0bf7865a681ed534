#pragma once
// Shared by the SEQUENCE_GRU tests (quant_sequence_gru_test, quant_gru_own_arithmetic_test):
// running a tensor program row by row over a fixture's stacked inputs, and the Keras GRU
// fixtures (tests/fixtures/<case>, bench/models) lowered for the quantizer with their error
// against Keras' own outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "quantizer/calibration.hpp"
#include "quantizer/lower_graph.hpp"
#include "support/fixture_manifest.hpp"
#include "support/source_paths.hpp"
#include "tflite/interpreter.hpp"

namespace tickinfer::test::gru_cases {

// Row r of an .npy of stacked inputs into input i.
inline void set_row(tfl::Interpreter& interp, size_t i, const formats::NpyArray& a, size_t r) {
  const size_t n = static_cast<size_t>(tfl::element_count(interp.input_tensor(i).shape));
  ASSERT_GE(a.data.size(), (r + 1) * n);
  std::memcpy(interp.input_data(i), a.data.data() + r * n, n * sizeof(float));
}

inline std::vector<float> output_row(const tfl::Interpreter& interp, size_t o) {
  const size_t n = static_cast<size_t>(tfl::element_count(interp.output_tensor(o).shape));
  std::vector<float> v(n);
  std::memcpy(v.data(), interp.output_data(o), n * sizeof(float));
  return v;
}

inline std::unique_ptr<tfl::Interpreter> interpreter(std::shared_ptr<const tfl::Program> p, const std::string& isa, bool lower) {
  tfl::InterpreterOptions o;
  o.isa = isa;
  o.lower_recurrent_loops = lower;
  o.reset_variables_each_invoke = true;
  return std::make_unique<tfl::Interpreter>(std::move(p), o);
}

inline quantizer::SampleSet samples(const formats::NpyArray& a) {
  quantizer::SampleSet s;
  s.count = static_cast<size_t>(a.shape.at(0));
  s.per_sample = a.data.size() / s.count;
  s.values = a.data;
  return s;
}

struct KerasCase {
  ::tickinfer::testing::FixtureCase c;
  tfl::Program f;
};

inline KerasCase keras_case(const std::string& name) {
  std::vector<::tickinfer::testing::FixtureCase> cases = ::tickinfer::testing::load_manifest(::tickinfer::testing::fixtures_dir());
  for (const auto& c : ::tickinfer::testing::load_manifest(std::string(::tickinfer::test::source_dir()) + "/bench/models")) cases.push_back(c);
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
  if (it == cases.end()) throw std::runtime_error("no fixture " + name);
  quantizer::LowerOptions o;
  o.window_length = it->window_length;
  return {*it, quantizer::lower_graph(formats::load_any_model_file(it->file).graph, o)};
}

// Largest |quantized - Keras| over the largest |Keras|, every output of every sample.
inline double error_against_keras(tfl::Interpreter& interp, const KerasCase& k) {
  std::vector<formats::NpyArray> in, want;
  for (const auto& f : k.c.inputs) in.push_back(formats::read_npy(f));
  for (const auto& f : k.c.outputs) want.push_back(formats::read_npy(f));
  const size_t rows = static_cast<size_t>(in.at(0).shape.at(0));
  double err = 0.0, ref = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < in.size(); ++i) set_row(interp, i, in[i], r);
    interp.invoke();
    for (size_t o = 0; o < want.size(); ++o) {
      const std::vector<float> y = output_row(interp, o);
      for (size_t j = 0; j < y.size(); ++j) {
        const double w = want[o].data.at(r * y.size() + j);
        err = std::max(err, std::fabs(y[j] - w));
        ref = std::max(ref, std::fabs(w));
      }
    }
  }
  return err / ref;
}

}  // namespace tickinfer::test::gru_cases
