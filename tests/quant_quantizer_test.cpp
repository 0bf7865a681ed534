// The quantizer end to end, every expectation from outside the code under test:
//  * lowering: a lowered Keras fixture run by the interpreter reproduces TensorFlow's outputs
//    (tests/fixtures/<case>/out*.npy from tools/make_fixtures.py);
//  * int8 mode against the TFLite converter (tests/fixtures/tflite/, tools/make_tflite_fixtures.py):
//    the same scales, zero points, int8 weights and int32 biases as the converter's int8.tflite,
//    and outputs within 1 LSB of the TFLite reference interpreter on the converter's inputs;
//  * quantization numbers derived by hand from the formulas (interop facts, section 6);
//  * calm-regime calibration vs crash-regime validation: coverage warnings name the inputs and
//    layers, and auto mode meets the error bound (checked by an error computed here);
//  * a quantized model saved as .tkq loads back and runs identically, and is small.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "formats/tkq/tkq_file.hpp"
#include "quantizer/calibration.hpp"
#include "tflite/interpreter.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/measured_choice.hpp"
#include "quantizer/quant_params.hpp"
#include "quantizer/quantize_session.hpp"
#include "quantizer/quantizer.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::quantizer {
namespace {

const std::string kSource = ::tickinfer::test::source_dir();
std::string tflite_dir(const std::string& model) { return kSource + "/tests/fixtures/tflite/" + model; }

Program lower_file(const std::string& path, int window = 0) {
  formats::AnyModel any = formats::load_any_model_file(path);
  LowerOptions o;
  o.window_length = window;
  return lower_graph(any.graph, o);
}

SampleSet samples(const formats::NpyArray& a) {
  SampleSet s;
  s.count = static_cast<size_t>(a.shape.at(0));
  s.per_sample = a.data.size() / s.count;
  s.values = a.data;
  return s;
}

// An interpreter, or a skip naming the op the interpreter cannot run yet (op families land one
// at a time; the case starts checking by itself once its ops exist).
std::unique_ptr<Interpreter> make_interpreter(const Program& p, InterpreterOptions o = {}) {
  try {
    return std::make_unique<Interpreter>(std::make_shared<const Program>(p), o);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("not supported yet") != std::string::npos || what.find("not available in this build") != std::string::npos) {
      return nullptr;
    }
    throw;
  }
}

// Runs every sample through `interp` (float inputs), returning the outputs sample-major.
std::vector<std::vector<float>> run_all(Interpreter& interp, const std::vector<SampleSet>& in) {
  std::vector<std::vector<float>> out(interp.num_outputs());
  for (size_t s = 0; s < in[0].count; ++s) {
    for (size_t i = 0; i < in.size(); ++i) std::memcpy(interp.input_data(i), in[i].sample(s), in[i].per_sample * 4);
    interp.invoke();
    for (size_t o = 0; o < interp.num_outputs(); ++o) {
      const Tensor& t = interp.output_tensor(o);
      const auto n = static_cast<size_t>(element_count(t.shape));
      std::vector<float> v(n);
      if (t.type == DType::F32) {
        std::memcpy(v.data(), interp.output_data(o), n * 4);
      } else {
        for (size_t k = 0; k < n; ++k) {
          v[k] = t.quant.scale[0] * static_cast<float>(static_cast<const int8_t*>(interp.output_data(o))[k] - t.quant.zero_point[0]);
        }
      }
      out[o].insert(out[o].end(), v.begin(), v.end());
    }
  }
  return out;
}

// ---- lowering ----------------------------------------------------------------------------------

class Lowering : public ::testing::TestWithParam<std::string> {};

TEST_P(Lowering, FloatProgramReproducesKeras) {
  const std::string name = GetParam();
  std::string dir = testing::fixtures_dir();
  std::vector<testing::FixtureCase> cases = testing::load_manifest(dir);
  for (const auto& c : testing::load_manifest(kSource + "/bench/models")) cases.push_back(c);
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
  ASSERT_NE(it, cases.end()) << name;
  const Program p = lower_file(it->file, it->window_length);
  EXPECT_NO_THROW(validate(p));
  auto interp = make_interpreter(p);
  if (!interp) GTEST_SKIP() << name << ": an op of this model is not in the interpreter yet";
  std::vector<SampleSet> in;
  for (const auto& f : it->inputs) in.push_back(samples(formats::read_npy(f)));
  const auto got = run_all(*interp, in);
  ASSERT_EQ(got.size(), it->outputs.size());
  for (size_t o = 0; o < got.size(); ++o) {
    const auto want = formats::read_npy(it->outputs[o]);
    ASSERT_EQ(got[o].size(), want.data.size());
    for (size_t k = 0; k < got[o].size(); ++k) {
      ASSERT_NEAR(got[o][k], want.data[k], 1e-5 + 1e-5 * std::fabs(want.data[k])) << name << " output " << o << " value " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Lowering,
                         ::testing::Values("mlp_small", "mlp_large", "dense_act_k3", "dense_act_k2", "dense_seq_k3", "inference_noops_k3", "reshape_k3",
                                           "batchnorm_k3", "layernorm_k3", "lstm_last_k3", "lstm_seq_k3",
                                           "lstm_tiny", "conv1d_k3", "conv1d_same_dilated_k3",
                                           "tcn", "pooling_k3", "global_pool_keepdims_k3", "concat_seq_k3",
                                           "merge_two_in_two_out_k3", "shared_branch_k3", "conv2d_k3", "conv2d_k2",
                                           "conv2d_wide_k3", "pool2d_k3", "pool2d_k2", "deeplob_tiny_k3", "deeplob_tiny_k2",
                                           "layout_k3", "layout_k2", "depthwise_k3", "depthwise_k2",
                                           // SEQUENCE_GRU, REVERSE_V2 and the STRIDED_SLICE of SliceRows
                                           "gru_window", "gru_seq_k3", "gru_seq_k2", "gru_reset_after_k3",
                                           "gru_reset_after_k2", "gru_reset_before_k3", "gru_reset_before_k2",
                                           "gru_stacked_k3", "gru_stacked_k2", "go_backwards_k3", "go_backwards_k2",
                                           "bidirectional_k3", "bidirectional_k2", "bidirectional_merges_k3",
                                           "bidirectional_merges_k2", "bidirectional_two_outputs_k3",
                                           "bidirectional_input_shape_k2", "bidirectional_variable_length_k3"),
                         [](const auto& info) { return info.param; });

TEST(Lowering, DenseBecomesFullyConnectedWithTheKernelTransposed) {
  Graph g;
  Node in;
  in.name = "x";
  in.kind = OpKind::Input;
  in.shape = {3};
  Node d;
  d.name = "dense";
  d.keras_class = "Dense";
  d.kind = OpKind::Dense;
  d.units = 2;
  d.inputs = {0};
  d.activation.kind = ActKind::Sigmoid;
  d.weights = {{{3, 2}, {1, 2, 3, 4, 5, 6}}, {{2}, {0.5f, -0.5f}}};
  g.nodes = {in, d};
  g.inputs = {0};
  g.outputs = {1};
  infer_shapes(g);
  const Program p = lower_graph(g);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].code, OpCode::FullyConnected);
  EXPECT_EQ(p.ops[1].code, OpCode::Logistic);  // sigmoid has no fused slot in TFLite
  EXPECT_EQ(p.ops[0].label, "dense");
  EXPECT_EQ(p.ops[1].label, "dense");
  const Tensor& w = p.tensors[static_cast<size_t>(p.ops[0].inputs[1])];
  EXPECT_EQ(w.shape, (Shape{2, 3}));
  std::vector<float> wv(6);
  std::memcpy(wv.data(), w.data.data(), 24);
  EXPECT_EQ(wv, (std::vector<float>{1, 3, 5, 2, 4, 6}));  // Keras (in, units) -> [units, in]
  EXPECT_EQ(p.tensors[static_cast<size_t>(p.inputs[0])].shape, (Shape{1, 3}));
}

TEST(Lowering, ActivationsWithoutATfliteOpAreRefusedNamingTheLayer) {
  try {
    lower_file(testing::fixtures_dir() + "/activation_layers_k3/model.keras");
    FAIL() << "selu lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(Activation): activation 'selu' has no TFLite op"), std::string::npos) << e.what();
  }
}

// A GRU the quantized op does not compute (gates other than Keras' default sigmoid / tanh) is
// refused by name, not run with the wrong gates.
TEST(Lowering, GruWithOtherGateActivationsIsRefusedNamingTheLayer) {
  Graph g;
  Node in;
  in.name = "x";
  in.kind = OpKind::Input;
  in.shape = {3, 2};
  Node r;
  r.name = "gru";
  r.keras_class = "GRU";
  r.kind = OpKind::GRU;
  r.units = 2;
  r.inputs = {0};
  r.reset_after = true;
  r.activation.kind = ActKind::Tanh;
  r.recurrent_activation.kind = ActKind::HardSigmoid;
  r.weights = {{{2, 6}, std::vector<float>(12, 0.1f)}, {{2, 6}, std::vector<float>(12, 0.2f)},
               {{2, 6}, std::vector<float>(12, 0.0f)}};
  g.nodes = {in, r};
  g.inputs = {0};
  g.outputs = {1};
  infer_shapes(g);
  try {
    lower_graph(g);
    FAIL() << "a hard_sigmoid GRU lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'gru' (GRU)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hard_sigmoid"), std::string::npos) << e.what();
  }
  g.nodes[1].recurrent_activation.kind = ActKind::Sigmoid;
  const Program p = lower_graph(g);
  ASSERT_EQ(p.ops.size(), 2u);  // the sequence, then its last step
  EXPECT_EQ(p.ops[0].code, OpCode::SequenceGru);
  EXPECT_EQ(p.ops[1].code, OpCode::StridedSlice);
}

// ---- quantization numbers, derived by hand ------------------------------------------------------

TEST(QuantParams, ActivationRangeToScaleAndNudgedZeroPoint) {
  // [-1, 3]: scale 4/255; zero point -128 + 1/(4/255) = -64.25 -> -64.
  AffineParams a = activation_params(-1.0f, 3.0f);
  EXPECT_FLOAT_EQ(a.scale, 4.0f / 255.0f);
  EXPECT_EQ(a.zero_point, -64);
  // A range above zero is widened to include it: [0, 2], zero point -128.
  a = activation_params(0.5f, 2.0f);
  EXPECT_FLOAT_EQ(a.scale, 2.0f / 255.0f);
  EXPECT_EQ(a.zero_point, -128);
  // Below zero: [-3, 0], zero point 127.
  a = activation_params(-3.0f, -1.0f);
  EXPECT_FLOAT_EQ(a.scale, 3.0f / 255.0f);
  EXPECT_EQ(a.zero_point, 127);
  // Nothing observed but zeros.
  a = activation_params(0.0f, 0.0f);
  EXPECT_EQ(a.scale, 1.0f);
  EXPECT_EQ(a.zero_point, 0);
  // 0 is exact: it quantizes to the zero point.
  a = activation_params(-0.37f, 5.1f);
  EXPECT_EQ(quantize_value(0.0f, a), a.zero_point);
}

TEST(QuantParams, SymmetricWeightsAndBias) {
  // Two channels: max|w| 31.75 and 15.875 -> scales 0.25 and 0.125 (exact in binary).
  const QuantizedWeights q = quantize_weights({31.75f, -15.875f, 0.25f, 15.875f, -0.0625f, 0.0f}, 2, true);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 0.25f);
  EXPECT_EQ(q.scales[1], 0.125f);
  EXPECT_EQ(q.values, (std::vector<int8_t>{127, -64, 1, 127, -1, 0}));  // -63.5 and -0.5 round away from 0
  // bias / (in_scale * w_scale): 3.75 / (0.5 * 0.25) = 30, -0.125 / (0.5 * 0.125) = -2.
  EXPECT_EQ(quantize_bias({3.75f, -0.125f}, 0.5f, q.scales), (std::vector<int32_t>{30, -2}));
  // Per tensor: one scale for all, 31.75 / 127.
  EXPECT_EQ(quantize_weights({31.75f, -15.875f, 0.25f, 15.875f}, 2, false).scales, (std::vector<float>{0.25f}));
}

TEST(QuantParams, Bf16RoundsToNearestEven) {
  const auto from_bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  EXPECT_EQ(to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(to_bf16(from_bits(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(to_bf16(from_bits(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(to_bf16(from_bits(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(from_bf16(0xC040), -3.0f);
}

// One RELU op over one value: the calibrated range of its input, by both methods.
TEST(Calibration, MinMaxAndPercentile) {
  Program p;
  p.tensors.resize(2);
  p.tensors[0].shape = p.tensors[1].shape = {1, 1};
  Op relu;
  relu.code = OpCode::Relu;
  relu.inputs = {0};
  relu.outputs = {1};
  p.ops = {relu};
  p.inputs = {0};
  p.outputs = {1};
  SampleSet s;
  s.count = 10000;
  s.per_sample = 1;
  for (int i = 0; i < 10000; ++i) s.values.push_back(static_cast<float>(i) / 10000.0f - 0.25f);
  auto r = calibrate(p, {s});
  EXPECT_FLOAT_EQ(r[0].min, -0.25f);
  EXPECT_FLOAT_EQ(r[0].max, 0.7499f);
  EXPECT_FLOAT_EQ(r[1].min, 0.0f);
  // Nearest rank of 10000 values at 99%: the 9900th smallest (0.9899 - 0.25) and the 100th.
  CalibrationOptions o;
  o.method = CalibrationMethod::Percentile;
  o.percentile = 99.0;
  r = calibrate(p, {s}, o);
  EXPECT_FLOAT_EQ(r[0].max, 0.9899f - 0.25f);
  EXPECT_FLOAT_EQ(r[0].min, 0.0099f - 0.25f);
}

// ---- int8 against the TFLite converter -----------------------------------------------------------

struct Converted {
  Program ours, theirs;
};

Converted int8_like_converter(const std::string& model) {
  const Program f = lower_file(tflite_dir(model) + "/model.h5");
  const std::vector<SampleSet> cal{samples(formats::read_npy(tflite_dir(model) + "/calibration.npy"))};
  const auto layers = find_layers(f);
  std::vector<Precision> plan;
  for (const auto& l : layers) plan.push_back(nearest_allowed(l, Precision::Int8));
  QuantizeOptions o;
  o.integer_io = true;  // the fixture's converter ran with int8 input and output
  Converted c;
  c.ours = quantize_program(f, layers, plan, calibrate(f, cal), o).program;
  std::ifstream in(tflite_dir(model) + "/int8.tflite", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  c.theirs = formats::load_tflite(bytes.data(), bytes.size(), "int8.tflite");
  return c;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

void expect_same_params(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.type, b.type) << what;
  ASSERT_EQ(a.quant.scale.size(), b.quant.scale.size()) << what;
  for (size_t k = 0; k < a.quant.scale.size(); ++k) {
    EXPECT_NEAR(a.quant.scale[k], b.quant.scale[k], 1e-6 * b.quant.scale[k]) << what << " scale " << k;
    EXPECT_EQ(a.quant.zero_point[k], b.quant.zero_point[k]) << what << " zero point " << k;
  }
}

TEST(Int8VsConverter, MlpSmallHasTheConvertersParameters) {
  const Converted c = int8_like_converter("mlp_small");
  ASSERT_EQ(c.ours.ops.size(), c.theirs.ops.size());
  for (size_t i = 0; i < c.ours.ops.size(); ++i) {
    const Op &a = c.ours.ops[i], &b = c.theirs.ops[i];
    ASSERT_EQ(a.code, b.code) << "op " << i;
    ASSERT_EQ(a.inputs.size(), b.inputs.size()) << "op " << i;
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      const Tensor &x = c.ours.tensors[static_cast<size_t>(a.inputs[k])], &y = c.theirs.tensors[static_cast<size_t>(b.inputs[k])];
      expect_same_params(x, y, "op " + std::to_string(i) + " input " + std::to_string(k));
      if (x.type == DType::I8 && x.is_constant()) {
        EXPECT_EQ(values<int8_t>(x), values<int8_t>(y)) << "op " << i << " weights";
      }
      if (x.type == DType::I32) {
        const auto u = values<int32_t>(x), v = values<int32_t>(y);
        ASSERT_EQ(u.size(), v.size());
        for (size_t e = 0; e < u.size(); ++e) EXPECT_NEAR(u[e], v[e], 1) << "op " << i << " bias " << e;
      }
    }
    expect_same_params(c.ours.tensors[static_cast<size_t>(a.outputs[0])], c.theirs.tensors[static_cast<size_t>(b.outputs[0])],
                       "op " + std::to_string(i) + " output");
  }
}

class Int8Outputs : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8Outputs, WithinOneLsbOfTflite) {
  const std::string model = GetParam();
  const Converted c = int8_like_converter(model);
  auto interp = make_interpreter(c.ours);
  ASSERT_TRUE(interp);
  const auto in = formats::read_npy(tflite_dir(model) + "/inputs_int8_0.npy");
  const auto want = formats::read_npy(tflite_dir(model) + "/expected_ref_int8_0.npy");
  const size_t rows = static_cast<size_t>(in.shape[0]), n_in = in.data.size() / rows, n_out = want.data.size() / rows;
  int worst = 0;
  for (size_t r = 0; r < rows; ++r) {
    auto* x = static_cast<int8_t*>(interp->input_data(0));
    for (size_t k = 0; k < n_in; ++k) x[k] = static_cast<int8_t>(in.data[r * n_in + k]);
    interp->invoke();
    const auto* y = static_cast<const int8_t*>(interp->output_data(0));
    for (size_t k = 0; k < n_out; ++k) worst = std::max(worst, std::abs(y[k] - static_cast<int>(want.data[r * n_out + k])));
  }
  EXPECT_LE(worst, 1);
}

INSTANTIATE_TEST_SUITE_P(Converter, Int8Outputs, ::testing::Values("mlp_small", "lstm_tiny"),
                         [](const auto& info) { return info.param; });

// The converter's full-integer LSTM (8x8_16): every tensor's type and parameters, the int8
// weights and the int32 biases, op by op (the converter slices the last step with STRIDED_SLICE
// where T = 1 lets us RESHAPE: both keep their input's parameters, so that op is skipped).
TEST(Int8VsConverter, LstmTinyHasTheConvertersParameters) {
  const Converted c = int8_like_converter("lstm_tiny");
  ASSERT_EQ(c.ours.ops.size(), c.theirs.ops.size());
  size_t lstms = 0;
  for (size_t i = 0; i < c.ours.ops.size(); ++i) {
    const Op &a = c.ours.ops[i], &b = c.theirs.ops[i];
    if (a.code == OpCode::Reshape && b.code == OpCode::StridedSlice) continue;
    ASSERT_EQ(a.code, b.code) << "op " << i;
    ASSERT_EQ(a.inputs.size(), b.inputs.size()) << "op " << i;
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      ASSERT_EQ(a.inputs[k] < 0, b.inputs[k] < 0) << "op " << i << " input " << k;
      if (a.inputs[k] < 0) continue;
      const Tensor &x = c.ours.tensors[static_cast<size_t>(a.inputs[k])], &y = c.theirs.tensors[static_cast<size_t>(b.inputs[k])];
      const std::string what = "op " + std::to_string(i) + " input " + std::to_string(k);
      expect_same_params(x, y, what);
      EXPECT_EQ(x.shape, y.shape) << what;
      if (x.type == DType::I8 && x.is_constant()) {
        EXPECT_EQ(values<int8_t>(x), values<int8_t>(y)) << what;
      }
      if (x.type == DType::I32 && x.quant.scale.size() > 0) {
        const auto u = values<int32_t>(x), v = values<int32_t>(y);
        ASSERT_EQ(u.size(), v.size());
        for (size_t e = 0; e < u.size(); ++e) EXPECT_NEAR(u[e], v[e], 1) << what << " value " << e;
      }
    }
    ASSERT_EQ(a.intermediates.size(), b.intermediates.size()) << "op " << i;
    for (size_t k = 0; k < a.intermediates.size(); ++k) {
      expect_same_params(c.ours.tensors[static_cast<size_t>(a.intermediates[k])], c.theirs.tensors[static_cast<size_t>(b.intermediates[k])],
                         "op " + std::to_string(i) + " intermediate " + std::to_string(k));
    }
    expect_same_params(c.ours.tensors[static_cast<size_t>(a.outputs[0])], c.theirs.tensors[static_cast<size_t>(b.outputs[0])],
                       "op " + std::to_string(i) + " output");
    lstms += a.code == OpCode::SequenceLstm ? 1 : 0;
  }
  EXPECT_EQ(lstms, 2u);
}

// Dynamic-range mode: the converter's int8 weights (one scale per gate matrix) for the LSTMs.
TEST(DynamicVsConverter, LstmTinyWeightsMatchTheDynamicRangeConverter) {
  const Program f = lower_file(tflite_dir("lstm_tiny") + "/model.h5");
  const auto layers = find_layers(f);
  std::vector<Precision> plan;
  for (const auto& l : layers) plan.push_back(nearest_allowed(l, Precision::Int8Dynamic));
  const Program ours = quantize_program(f, layers, plan, std::vector<TensorRange>(f.tensors.size())).program;
  std::ifstream in(tflite_dir("lstm_tiny") + "/dynamic.tflite", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const Program theirs = formats::load_tflite(bytes.data(), bytes.size(), "dynamic.tflite");
  size_t compared = 0;
  for (size_t i = 0; i < ours.ops.size() && i < theirs.ops.size(); ++i) {
    if (ours.ops[i].code != OpCode::SequenceLstm) continue;
    ASSERT_EQ(theirs.ops[i].code, OpCode::SequenceLstm);
    for (size_t k = 1; k <= 8; ++k) {
      const Tensor &x = ours.tensors[static_cast<size_t>(ours.ops[i].inputs[k])],
                   &y = theirs.tensors[static_cast<size_t>(theirs.ops[i].inputs[k])];
      expect_same_params(x, y, "lstm op " + std::to_string(i) + " weight " + std::to_string(k));
      EXPECT_EQ(values<int8_t>(x), values<int8_t>(y)) << "lstm op " << i << " weight " << k;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 16u);
}

// Dynamic mode on lstm_tiny (every weight matrix over the converter's 1024-element threshold, so
// the converter quantizes all of them too): the outputs of TFLite's reference interpreter on the
// converter's dynamic-range model, to the tolerance the TFLite reference test uses for hybrid
// models.
TEST(DynamicVsConverter, LstmTinyOutputsMatchTflite) {
  const Program f = lower_file(tflite_dir("lstm_tiny") + "/model.h5");
  const auto layers = find_layers(f);
  std::vector<Precision> plan;
  for (const auto& l : layers) plan.push_back(nearest_allowed(l, Precision::Int8Dynamic));
  const Program q = quantize_program(f, layers, plan, std::vector<TensorRange>(f.tensors.size())).program;
  auto interp = make_interpreter(q);
  if (!interp) GTEST_SKIP() << "an op of lstm_tiny is not in the interpreter yet";
  const std::vector<SampleSet> in{samples(formats::read_npy(tflite_dir("lstm_tiny") + "/inputs_dynamic_0.npy"))};
  const auto want = formats::read_npy(tflite_dir("lstm_tiny") + "/expected_ref_dynamic_0.npy");
  const auto got = run_all(*interp, in);
  ASSERT_EQ(got[0].size(), want.data.size());
  double scale = 0.0, worst = 0.0;
  for (float v : want.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (size_t k = 0; k < got[0].size(); ++k) worst = std::max(worst, static_cast<double>(std::fabs(got[0][k] - want.data[k])));
  EXPECT_LE(worst, 1e-4 * scale) << "worst |ours - tflite| " << worst << " of max |y| " << scale;
}

// ---- calm calibration, crash validation ----------------------------------------------------------

struct Regimes {
  Program f;
  std::vector<SampleSet> calm, crash;
};

// mlp_small's 10 features: calm = small moves around 0; crash = features 0-2 make large moves.
Regimes calm_and_crash() {
  Regimes r;
  r.f = lower_file(kSource + "/bench/models/mlp_small/model.keras");
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const auto make = [&](size_t count, bool crash) {
    SampleSet s;
    s.count = count;
    s.per_sample = 10;
    for (size_t i = 0; i < count * 10; ++i) {
      const size_t feature = i % 10;
      s.values.push_back(n(rng) * (crash && feature < 3 ? 4.0f : 0.2f));
    }
    return std::vector<SampleSet>{s};
  };
  r.calm = make(1000, false);
  r.crash = make(300, true);
  return r;
}

TEST(Regimes, CoverageWarningNamesInputsAndLayers) {
  const Regimes r = calm_and_crash();
  QuantizeRequest req;
  req.mode = QuantizeMode::Int8;
  req.timing_runs = 0;
  const QuantizeReport rep = quantize_model(r.f, r.calm, r.crash, req);
  std::vector<std::string> subjects;
  for (const auto& c : rep.coverage) subjects.push_back(c.subject);
  const std::string input_name = r.f.tensors[static_cast<size_t>(r.f.inputs[0])].name;
  for (int feature = 0; feature < 3; ++feature) {
    const std::string want = "input '" + input_name + "' feature " + std::to_string(feature);
    EXPECT_NE(std::find(subjects.begin(), subjects.end(), want), subjects.end()) << want;
  }
  // Calm features stay covered; the first layer's output leaves its calm range too.
  EXPECT_EQ(std::find(subjects.begin(), subjects.end(), "input '" + input_name + "' feature 7"), subjects.end());
  EXPECT_NE(std::find(subjects.begin(), subjects.end(), "layer '" + rep.layers[0].label + "' output"), subjects.end());
  for (const auto& c : rep.coverage) {
    if (c.subject.find("feature 0") != std::string::npos) {
      EXPECT_GT(c.outside, 0.5) << c.subject;
    }
  }
}

// The model error of a quantized program, computed here from two interpreter runs.
double model_max_rel(const Program& f, const Program& q, const std::vector<SampleSet>& data) {
  auto fi = make_interpreter(f), qi = make_interpreter(q);
  const auto yf = run_all(*fi, data), yq = run_all(*qi, data);
  double abs_err = 0.0, ref = 0.0;
  for (size_t k = 0; k < yf[0].size(); ++k) {
    abs_err = std::max(abs_err, static_cast<double>(std::fabs(yq[0][k] - yf[0][k])));
    ref = std::max(ref, static_cast<double>(std::fabs(yf[0][k])));
  }
  return abs_err / ref;
}

TEST(Regimes, AutoModeMeetsTheErrorBound) {
  const Regimes r = calm_and_crash();
  QuantizeRequest req;
  req.timing_runs = 0;
  req.mode = QuantizeMode::Int8;
  const QuantizeReport all_int8 = quantize_model(r.f, r.calm, r.crash, req);
  const double int8_error = model_max_rel(r.f, all_int8.result.program, r.crash);
  req.mode = QuantizeMode::Auto;
  req.max_error = int8_error / 4;  // int8 calibrated on calm data is not good enough for a crash
  const QuantizeReport rep = quantize_model(r.f, r.calm, r.crash, req);
  EXPECT_TRUE(rep.met);
  EXPECT_FALSE(rep.steps.empty());
  const double err = model_max_rel(r.f, rep.result.program, r.crash);
  EXPECT_LE(err, req.max_error);
  // A bound the all-int8 model already meets needs no promotion.
  req.max_error = int8_error * 1.01;
  const QuantizeReport loose = quantize_model(r.f, r.calm, r.crash, req);
  EXPECT_TRUE(loose.steps.empty());
  for (Precision p : loose.precisions) EXPECT_EQ(p, Precision::Int8);
}

// Models with 2-D layers quantized in each mode from their fixture's inputs: DeepLOB's shape
// (Conv2D blocks with LeakyReLU, an Inception module with a MaxPooling2D branch, an LSTM), the
// layout layers (ZeroPadding1D/2D, Permute, TimeDistributed(Dense), Conv2D) and the depthwise ones
// (DepthwiseConv2D, SeparableConv2D). Every convolution becomes an int8 or hybrid CONV_2D or
// DEPTHWISE_CONV_2D, and the output stays within the bound the error table reports.
TEST(Conv2DModels, QuantizeInEveryMode) {
  const std::string dir = testing::fixtures_dir();
  const auto cases = testing::load_manifest(dir);
  for (const char* name : {"deeplob_tiny_k3", "layout_k3", "depthwise_k3"}) {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
    ASSERT_NE(it, cases.end()) << name;
    const Program f = lower_file(it->file, it->window_length);
    std::vector<SampleSet> data;
    for (const auto& file : it->inputs) data.push_back(samples(formats::read_npy(file)));
    for (QuantizeMode mode : {QuantizeMode::Dynamic, QuantizeMode::Int8}) {
      const char* what = mode == QuantizeMode::Int8 ? "int8" : "dynamic";
      QuantizeRequest req;
      req.mode = mode;
      req.timing_runs = 0;
      const QuantizeReport rep = quantize_model(f, data, data, req);
      int convs = 0;
      for (const Op& op : rep.result.program.ops) {
        if (op.code != OpCode::Conv2D && op.code != OpCode::DepthwiseConv2D) continue;
        ++convs;
        EXPECT_EQ(op.precision, mode == QuantizeMode::Int8 ? Precision::Int8 : Precision::Int8Dynamic) << name << " " << op.label;
      }
      EXPECT_GE(convs, 1) << name;
      const double err = model_max_rel(f, rep.result.program, data);
      EXPECT_LT(err, 0.05) << name << " " << what;
      EXPECT_NEAR(err, rep.evaluation.output.max_rel(), 1e-6) << name << " " << what;
    }
  }
}

// ---- auto's measured fp32 pass ------------------------------------------------------------------

// The decision rule against its own recorded measurements, and the two margins whose outcome
// does not depend on the timings: one no time can beat, one every time beats.
TEST(MeasuredChoice, KeepsFp32ExactlyWhereMeasuredFasterAndWithinTheBound) {
  const Regimes r = calm_and_crash();
  const std::vector<Layer> layers = find_layers(r.f);
  const auto ranges = calibrate(r.f, r.calm, {});
  const Evaluator evaluator(r.f, layers, r.crash);
  std::vector<Precision> int8(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) int8[l] = nearest_allowed(layers[l], Precision::Int8);
  size_t quantized = 0;
  for (Precision p : int8) quantized += p != Precision::F32;
  ASSERT_GT(quantized, 0u);

  // fp32 would have to take no time at all: nothing changes, every quantized layer was timed.
  const MeasuredChoice never = keep_fp32_where_faster(r.f, layers, ranges, evaluator, int8, 1.0, {}, r.crash, {50, 1.0});
  EXPECT_EQ(never.precisions, int8);
  ASSERT_EQ(never.steps.size(), quantized);
  for (const MeasuredStep& s : never.steps) {
    EXPECT_FALSE(s.kept_fp32);
    EXPECT_GT(s.ns_quantized, 0.0);
    EXPECT_GT(s.ns_fp32, 0.0);
  }
  EXPECT_GT(never.ns_chosen, 0.0);
  EXPECT_GT(never.ns_float, 0.0);

  // Any fp32 time counts as faster and any error is within the bound: every layer ends fp32.
  const MeasuredChoice always = keep_fp32_where_faster(r.f, layers, ranges, evaluator, int8, 1.0, {}, r.crash, {50, -1e9});
  for (Precision p : always.precisions) EXPECT_EQ(p, Precision::F32);
  for (const MeasuredStep& s : always.steps) EXPECT_TRUE(s.kept_fp32);

  // The real margin: each decision follows from the step's own numbers.
  const double bound = 0.05;
  const MeasuredChoice real = keep_fp32_where_faster(r.f, layers, ranges, evaluator, int8, bound, {}, r.crash, {100, 0.03});
  for (const MeasuredStep& s : real.steps) {
    EXPECT_EQ(s.kept_fp32, s.ns_fp32 < s.ns_quantized * 0.97 && s.error_fp32 <= bound) << layers[s.layer].label;
    EXPECT_EQ(real.precisions[s.layer], s.kept_fp32 ? Precision::F32 : s.from) << layers[s.layer].label;
  }
}

// Through quantize_model: the report carries the pass, and the final model still meets the bound.
TEST(MeasuredChoice, AutoModeReportsThePassAndMeetsTheBound) {
  const Regimes r = calm_and_crash();
  QuantizeRequest req;
  req.mode = QuantizeMode::Auto;
  req.max_error = 0.05;
  req.timing_runs = 60;
  const QuantizeReport rep = quantize_model(r.f, r.calm, r.crash, req);
  EXPECT_TRUE(rep.choice_measured);
  EXPECT_GT(rep.ns_chosen, 0.0);
  for (const MeasuredStep& s : rep.measured) {
    if (s.kept_fp32) {
      EXPECT_EQ(rep.precisions[s.layer], Precision::F32);
    }
  }
  ASSERT_TRUE(rep.met);  // the search meets 0.05 on these data, and the pass keeps it met
  EXPECT_LE(model_max_rel(r.f, rep.result.program, r.crash), req.max_error);
  req.timing_runs = 0;  // no timing: no pass
  EXPECT_FALSE(quantize_model(r.f, r.calm, r.crash, req).choice_measured);
}

// ---- the .tkq file of a quantized model ----------------------------------------------------------

// Keras 2's default LSTM gate is hard_sigmoid, which TFLite's LSTM cannot run.
TEST(Lowering, HardSigmoidLstmGatesAreRefused) {
  try {
    lower_file(testing::fixtures_dir() + "/lstm_stacked_k2/model.h5");
    FAIL() << "hard_sigmoid gates lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("recurrent_activation 'hard_sigmoid'"), std::string::npos) << e.what();
  }
}

TEST(QuantizedFile, RoundTripRunsIdenticallyAndIsSmall) {
  const Program f = lower_file(kSource + "/bench/models/mlp_small/model.keras");
  const std::vector<SampleSet> cal{samples(formats::read_npy(tflite_dir("mlp_small") + "/calibration.npy"))};
  QuantizeRequest req;
  req.timing_runs = 0;
  const QuantizeReport rep = quantize_model(f, cal, cal, req);
  const auto bytes = formats::serialize_tkq(rep.result.program);
  const Program back = formats::load_tkq(bytes.data(), bytes.size(), "mlp_small.tkq");
  auto a = make_interpreter(rep.result.program), b = make_interpreter(back);
  const auto ya = run_all(*a, cal), yb = run_all(*b, cal);
  EXPECT_EQ(ya, yb);
  // mlp_small is so small that per-channel scales and alignment weigh in: 33% of the same
  // program in fp32, against the Keras file it came from well under 30%.
  EXPECT_LE(bytes.size(), std::filesystem::file_size(kSource + "/bench/models/mlp_small/model.keras") * 30 / 100);
  EXPECT_LE(bytes.size(), formats::serialize_tkq(f).size() * 35 / 100);
}

TEST(QuantizedFile, Int8IsUnderThirtyPercentOfFp32) {
  const Program f = lower_file(kSource + "/bench/models/mlp_large/model.keras");
  const std::vector<SampleSet> cal{samples(formats::read_npy(kSource + "/bench/models/mlp_large/in0.npy"))};
  const auto layers = find_layers(f);
  std::vector<Precision> plan(layers.size(), Precision::Int8);
  const auto bytes = formats::serialize_tkq(quantize_program(f, layers, plan, calibrate(f, cal)).program);
  const size_t fp32 = formats::serialize_tkq(f).size();
  EXPECT_LE(bytes.size(), fp32 * 30 / 100) << bytes.size() << " bytes vs fp32 " << fp32;
}

}  // namespace
}  // namespace tickinfer::quantizer
