// The CUDA backend's integer program (int8 TFLite and .tkq models), on any machine: each model is
// made an integer program from its ops' own integer forms and run by the host executor, which
// calls the very step bodies the GPU kernels are instantiated from (cuda/integer_steps.cuh).
//  * the converter's int8 files (tools/make_tflite_fixtures.py) must give exactly the outputs of
//    TFLite's reference interpreter (expected_ref, int8 in, int8 out), items forwards and
//    backwards (the GPU runs them in any order);
//  * tickinfer-quantized models (.tkq, and Keras fixtures with Conv2D, depthwise and pooling
//    layers quantized here) must give exactly the CPU plan's outputs;
//  * the integer arithmetic written again for the device must equal the tflite module's;
//  * the integer LSTM (its one-block step) against the CPU plan on the LSTM fixtures;
//  * models with an op that has no integer form (an LSTM with a peephole ...) are refused naming it.
// Where a GPU is visible, the same programs run on it and are held to the same bits.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "cuda/devices.hpp"
#include "cuda/integer_math.hpp"
#include "engine/cuda_plan.hpp"
#include "engine/program_plan.hpp"
#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "tflite/kernels/requant_scaled.hpp"
#include "quantizer/lower_graph.hpp"
#include "quantizer/quantize_session.hpp"
#include "quantizer/sample_set.hpp"
#include "support/fixture_manifest.hpp"
#include "support/source_paths.hpp"
#include "support/tflite_file.hpp"
#include "tflite/fixed_point.hpp"
#include "tflite/fixed_point_math.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

const std::string kTflite = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite";

nlohmann::json manifest() {
  std::ifstream f(kTflite + "/manifest.json");
  return nlohmann::json::parse(f);
}

bool have_gpu() { return cuda::built_with_cuda() && cuda::device_count() > 0; }

// Runs `rows` rows through a plan: xs[i] holds [rows][input i]; the result is row after row, each
// row's outputs in order.
std::vector<float> run_rows(engine::PlanBackend& plan, const std::vector<std::vector<float>>& xs, size_t rows) {
  size_t per_row = 0;
  for (const Shape& s : plan.output_shapes()) per_row += size_t(shape_size(s));
  std::vector<float> y(rows * per_row);
  std::vector<const float*> in(xs.size());
  std::vector<float*> out(plan.output_shapes().size());
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < in.size(); ++i) in[i] = xs[i].data() + r * size_t(shape_size(plan.input_shapes()[i]));
    float* at = y.data() + r * per_row;
    for (size_t o = 0; o < out.size(); ++o) out[o] = at, at += shape_size(plan.output_shapes()[o]);
    plan.run(in.data(), out.data());
  }
  return y;
}

// ---- the arithmetic -----------------------------------------------------------------------------

TEST(IntegerMath, EqualsTheTfliteModulesDefinitions) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> shift(-31, 30), small(-40000, 40000);
  const int32_t edges[] = {0, 1, -1, INT32_MIN, INT32_MAX, 1 << 30, -(1 << 30), 12345, -12345};
  for (int k = 0; k < 400000; ++k) {
    const int32_t a = k < 81 ? edges[k % 9] : (k % 2 ? any(rng) : small(rng));
    const int32_t b = k < 81 ? edges[k / 9] : mult(rng);
    ASSERT_EQ(cuda::intmath::doubling_high_mul(a, b), tfl::saturating_rounding_doubling_high_mul(a, b)) << a << " " << b;
    const int e = k % 32;
    ASSERT_EQ(cuda::intmath::divide_by_pot(a, e), tfl::rounding_divide_by_pot(a, e)) << a << " " << e;
    const int s = shift(rng);
    ASSERT_EQ(cuda::intmath::multiply(a, b, s, false),
              tfl::multiply_by_quantized_multiplier<tfl::Rounding::Double>(a, b, s)) << a << " " << b << " " << s;
    ASSERT_EQ(cuda::intmath::multiply(a, b, s, true),
              tfl::multiply_by_quantized_multiplier<tfl::Rounding::Single>(a, b, s)) << a << " " << b << " " << s;
    const double scale = std::ldexp(double(b), s - 31);
    ASSERT_EQ(cuda::intmath::requant_scaled(a, scale, -5, -128, 127), tfl::kernels::requant_scaled_one(a, scale, -5, -128, 127))
        << a << " " << scale;
  }
  // SOFTMAX's fixed-point reciprocal, over sums of 1 to 2^31 - 1 with 12 integer bits.
  for (int k = 0; k < 200000; ++k) {
    const int32_t sum = k < 31 ? int32_t((int64_t(1) << k) - (k > 0)) : std::uniform_int_distribution<int32_t>(1, INT32_MAX)(rng);
    int want_bits = 0, got_bits = 0;
    ASSERT_EQ(cuda::intmath::reciprocal(sum, 12, &got_bits), tfl::fx::get_reciprocal(sum, 12, &want_bits)) << sum;
    ASSERT_EQ(got_bits, want_bits) << sum;
    const int32_t a = any(rng);
    const int e = int(k % 63) - 31;
    ASSERT_EQ(cuda::intmath::multiply_by_pot(a, e), tfl::fx::mul_pot(a, e)) << a << " " << e;
  }
  // Ties of the double-precision scaling, where the two roundings part (kernels/requant_scaled.hpp).
  for (int32_t acc = -1000; acc <= 1000; ++acc)
    ASSERT_EQ(cuda::intmath::requant_scaled(acc, 0.5, 3, -128, 127), tfl::kernels::requant_scaled_one(acc, 0.5, 3, -128, 127));
}

// ---- the converter's int8 files against TFLite's reference interpreter -------------------------

struct Int8Case {
  std::string model;
  bool backwards;
};
void PrintTo(const Int8Case& c, std::ostream* os) { *os << c.model << (c.backwards ? "/backwards" : ""); }

// Every int8 fixture (the converter refused the GRU).
std::vector<Int8Case> int8_cases() {
  std::vector<Int8Case> out;
  for (const char* m : {"mlp_small", "tcn", "merge", "lnorm", "conv_pool", "lstm_tiny", "lstm_window"})
    for (bool back : {false, true}) out.push_back({m, back});
  return out;
}

class ConverterInt8 : public ::testing::TestWithParam<Int8Case> {};

TEST_P(ConverterInt8, HostIntegerProgramGivesTheReferenceInterpretersBits) {
  const Int8Case& c = GetParam();
  const nlohmann::json entry = manifest()["models"][c.model]["modes"]["int8"];
  const std::string dir = kTflite + "/" + c.model + "/";
  const auto program = ::tickinfer::test::load_shared_tflite_file(dir + entry["file"].get<std::string>());
  std::unique_ptr<engine::PlanBackend> plan;
  try {
    plan = engine::compile_cuda_integer_on_host(program, CompileOptions{}, c.backwards);
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  ASSERT_STREQ(plan->isa(), "cuda-int8");
  // The stored int8 rows as the Plan API's floats: scale * (q - zero point) quantizes back to q.
  std::vector<std::vector<float>> xs;
  size_t rows = 0;
  for (size_t i = 0; i < entry["input_files"].size(); ++i) {
    const formats::NpyArray in = formats::read_npy(dir + entry["input_files"][i].get<std::string>());
    const float si = entry["inputs"][i]["scales"][0];
    const int zi = entry["inputs"][i]["zero_points"][0];
    rows = size_t(in.shape[0]);
    xs.emplace_back(in.data.size());
    for (size_t k = 0; k < in.data.size(); ++k) xs.back()[k] = si * static_cast<float>(int(in.data[k]) - zi);
  }
  // TFLite's int8 outputs as the plan gives them: row after row, each row's outputs in order.
  std::vector<formats::NpyArray> outs;
  for (const auto& f : entry["expected_ref_files"]) outs.push_back(formats::read_npy(dir + f.get<std::string>()));
  std::vector<float> want;
  for (size_t r = 0; r < rows; ++r)
    for (size_t o = 0; o < outs.size(); ++o) {
      const float so = entry["outputs"][o]["scales"][0];
      const int zo = entry["outputs"][o]["zero_points"][0];
      const size_t n = outs[o].data.size() / rows;
      for (size_t k = 0; k < n; ++k) want.push_back(so * static_cast<float>(int(outs[o].data[r * n + k]) - zo));
    }
  const std::vector<float> got = run_rows(*plan, xs, rows);
  ASSERT_EQ(got.size(), want.size());
  size_t mismatches = 0;
  for (size_t k = 0; k < got.size(); ++k) mismatches += got[k] != want[k];
  EXPECT_EQ(mismatches, 0u) << c.model << ": " << mismatches << " of " << got.size() << " outputs differ";
  if (have_gpu() && !c.backwards) {
    CompileOptions o;
    o.device = "cuda";
    auto gpu = engine::compile_cuda_integer(program, o, 0);
    const std::vector<float> on_gpu = run_rows(*gpu, xs, rows);
    size_t gpu_mismatches = 0;
    for (size_t k = 0; k < got.size(); ++k) gpu_mismatches += on_gpu[k] != want[k];
    EXPECT_EQ(gpu_mismatches, 0u) << c.model << " on the GPU: " << gpu->describe();
    if (xs.size() == 1 && outs.size() == 1) {  // the rows side by side on the card
      ASSERT_EQ(gpu->reserve_rows(64), "") << c.model;
      std::vector<float> batched(got.size());
      gpu->run_rows(xs[0].data(), int(rows), batched.data());
      size_t batch_mismatches = 0;
      for (size_t k = 0; k < got.size(); ++k) batch_mismatches += batched[k] != want[k];
      EXPECT_EQ(batch_mismatches, 0u) << c.model << " batched on the GPU";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Int8Files, ConverterInt8, ::testing::ValuesIn(int8_cases()),
                         [](const ::testing::TestParamInfo<Int8Case>& i) {
                           return i.param.model + (i.param.backwards ? "_backwards" : "");
                         });

// ---- tickinfer-quantized models against the CPU plan -------------------------------------------

// The host integer program and the CPU plan (this machine's fastest kernels) on the same rows;
// where a GPU is visible, the program on the card too (tools/gpu_check.sh runs this binary there).
void expect_same_as_cpu_plan(const std::shared_ptr<const tfl::Program>& program,
                             const std::vector<std::vector<float>>& xs, const std::string& what) {
  engine::ProgramPlan cpu(program, CompileOptions{});
  std::unique_ptr<engine::PlanBackend> host;
  try {
    host = engine::compile_cuda_integer_on_host(program, CompileOptions{}, true);
  } catch (const Error& e) {
    FAIL() << what << ": " << e.what();
  }
  const size_t rows = xs[0].size() / size_t(shape_size(cpu.input_shapes()[0]));
  ASSERT_GE(rows, 1u);
  const std::vector<float> want = run_rows(cpu, xs, rows), got = run_rows(*host, xs, rows);
  size_t mismatches = 0;
  for (size_t k = 0; k < got.size(); ++k) mismatches += std::memcmp(&got[k], &want[k], 4) != 0;
  EXPECT_EQ(mismatches, 0u) << what << ": " << mismatches << " of " << got.size() << " outputs differ";
  if (!have_gpu()) return;
  CompileOptions o;
  o.device = "cuda";
  const auto gpu = engine::compile_cuda_integer(program, o, 0);
  const std::vector<float> on_gpu = run_rows(*gpu, xs, rows);
  size_t gpu_mismatches = 0;
  for (size_t k = 0; k < on_gpu.size(); ++k) gpu_mismatches += std::memcmp(&on_gpu[k], &want[k], 4) != 0;
  EXPECT_EQ(gpu_mismatches, 0u) << what << " on the GPU: " << gpu_mismatches << " of " << on_gpu.size()
                                << " outputs differ";
}

TEST(QuantizedModels, TkqFileGivesTheCpuPlansBits) {
  const Model m = Model::load(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tkq/mlp_small_int8.tkq");
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.5f);
  std::vector<float> x(300 * 10);
  for (float& v : x) v = n(rng);
  expect_same_as_cpu_plan(m.shared_program(), {x}, "mlp_small_int8.tkq");
}

const char* const kQuantizedCases[] = {"depthwise_k3", "conv2d_k3", "conv2d_wide_k3", "pool2d_k3", "conv1d_k3",
                                       "conv1d_same_dilated_k3", "pooling_k3", "dense_act_k3",
                                       "merge_two_in_two_out_k3", "global_pool_keepdims_k3", "reshape_k3",
                                       "concat_seq_k3", "dense_seq_k3", "batchnorm_k3"};

// Keras fixtures with the 2-D layers (Conv2D, DepthwiseConv2D, SeparableConv2D, the 2-D pools,
// padding and permutes), quantized int8 here from their own inputs.
TEST(QuantizedModels, ConvolutionAndPoolingModelsGiveTheCpuPlansBits) {
  const std::string dir = ::tickinfer::testing::fixtures_dir();
  const auto cases = ::tickinfer::testing::load_manifest(dir);
  for (const char* name : kQuantizedCases) {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == name; });
    ASSERT_NE(it, cases.end()) << name;
    formats::AnyModel any = formats::load_any_model_file(it->file);
    quantizer::LowerOptions lo;
    lo.window_length = it->window_length;
    const tfl::Program f = quantizer::lower_graph(any.graph, lo);
    std::vector<quantizer::SampleSet> sets;
    std::vector<std::vector<float>> xs;
    for (const std::string& file : it->inputs) {
      const formats::NpyArray in = formats::read_npy(file);
      quantizer::SampleSet s;
      s.count = size_t(in.shape.at(0));
      s.per_sample = in.data.size() / s.count;
      s.values = in.data;
      sets.push_back(s);
      xs.push_back(in.data);
    }
    quantizer::QuantizeRequest req;
    req.mode = quantizer::QuantizeMode::Int8;
    req.timing_runs = 0;
    const quantizer::QuantizeReport rep = quantizer::quantize_model(f, sets, sets, req);
    expect_same_as_cpu_plan(std::make_shared<const tfl::Program>(rep.result.program), xs, name);
  }
}

// A RESHAPE only renames bytes: its output shares its input's, and no kernel runs for it (tcn's
// eight RESHAPEs around its four CONV_2Ds); a PAD that only a convolution reads is that
// convolution's padding (tcn's four causal PADs). The outputs stay the reference's (above).
TEST(IntegerProgramSteps, ReshapesAndPadsTakeNoStep) {
  const auto program = ::tickinfer::test::load_shared_tflite_file(kTflite + "/tcn/int8.tflite");
  auto plan = engine::compile_cuda_integer_on_host(program, CompileOptions{}, false);
  const std::string d = plan->describe();
  int steps = 0, reshapes = 0, pads = 0, convs = 0;
  for (size_t at = d.find("  step "); at != std::string::npos; at = d.find("  step ", at + 1)) {
    ++steps;
    const std::string line = d.substr(at, d.find('\n', at) - at);
    reshapes += line.find("RESHAPE") != std::string::npos;
    pads += line.find("PAD") != std::string::npos;
    convs += line.find("CONV_2D") != std::string::npos;
  }
  EXPECT_EQ(reshapes, 0) << d;
  EXPECT_EQ(pads, 0) << d;
  EXPECT_EQ(convs, 4) << d;
  EXPECT_EQ(steps, 6) << d;  // the convolutions, MEAN, FULLY_CONNECTED
}

// ---- batched rows --------------------------------------------------------------------------------

// run_rows over a reservation of 40 (a slice of 40, then a rest) gives each row the bits run()
// gives it: the host executor runs a batch as the GPU does (each step over every row, rows and
// items forwards or backwards), so a step that read another row's arena would differ; with the
// FULLY_CONNECTED steps as tiles too (the GPU's batched tile variants: two row tiles, the second
// partly filled, tiles forwards and backwards).
TEST(IntegerRows, EachRowEqualsRunBitForBit) {
  const std::string tkq = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tkq/mlp_small_int8.tkq";
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 1.5f);
  for (const std::string& file :
       {kTflite + "/tcn/int8.tflite", kTflite + "/conv_pool/int8.tflite", kTflite + "/lstm_window/int8.tflite", tkq}) {
    const Model m = Model::load(file);
    for (int variant = 0; variant < 4; ++variant) {
      const bool backwards = variant & 1, tiles = variant & 2;
      auto plan = engine::compile_cuda_integer_on_host(m.shared_program(), CompileOptions{}, backwards, tiles);
      auto one = engine::compile_cuda_integer_on_host(m.shared_program(), CompileOptions{}, false);
      ASSERT_EQ(plan->reserve_rows(40), "") << file;
      EXPECT_EQ(plan->reserved_rows(), 40);
      const size_t in = size_t(shape_size(plan->input_shapes()[0])), out = size_t(shape_size(plan->output_shapes()[0]));
      const int rows = 45;
      std::vector<float> x(size_t(rows) * in), y(size_t(rows) * out);
      for (float& v : x) v = n(rng);
      plan->run_rows(x.data(), rows, y.data());
      const std::vector<float> want = run_rows(*one, {x}, size_t(rows));
      size_t mismatches = 0;
      for (size_t k = 0; k < y.size(); ++k) mismatches += std::memcmp(&y[k], &want[k], 4) != 0;
      EXPECT_EQ(mismatches, 0u) << file << (backwards ? " backwards" : "") << (tiles ? " as tiles" : "");
    }
  }
  // Two inputs: rows side by side are refused, saying why.
  const Model merge = Model::load(kTflite + "/merge/int8.tflite");
  auto plan = engine::compile_cuda_integer_on_host(merge.shared_program(), CompileOptions{}, false);
  EXPECT_NE(plan->reserve_rows(8).find("one input and one output"), std::string::npos);
  EXPECT_EQ(plan->reserved_rows(), 0);
}

// ---- the integer LSTM ----------------------------------------------------------------------------

// The integer LSTM fixtures of tools/make_quant_lstm_fixtures (cell clip, sequences out, several
// sizes), on rows of random inputs: the host integer program against the CPU plan, bit for bit.
TEST(IntegerLstm, GivesTheCpuPlansBits) {
  const std::string dir = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/quant_lstm/";
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (const char* model : {"small_int8", "big_int8", "big_seq_int8", "small_seq_int8"}) {
    const Model m = Model::load(dir + model + "/model.tflite");
    engine::ProgramPlan cpu(m.shared_program(), CompileOptions{});
    std::vector<float> x(40 * size_t(shape_size(cpu.input_shapes()[0])));
    for (float& v : x) v = n(rng);
    expect_same_as_cpu_plan(m.shared_program(), {x}, model);
  }
}

// ---- refusals -----------------------------------------------------------------------------------

TEST(IntegerProgramRefusal, NamesTheOpWithoutAnIntegerForm) {
  // The integer LSTM with a peephole, a projection or a coupled input gate (CIFG).
  const std::string lstm = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/quant_lstm/";
  for (const char* model : {"peephole_int8", "projection_int8", "cifg_int8"}) {
    const auto program = ::tickinfer::test::load_shared_tflite_file(lstm + model + "/model.tflite");
    const char* op = "UNIDIRECTIONAL_SEQUENCE_LSTM";
    try {
      engine::compile_cuda_integer_on_host(program, CompileOptions{}, false);
      ADD_FAILURE() << model << " compiled";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--device cuda"), std::string::npos) << e.what();
    }
  }
  // A float program has float ops between its input and output.
  const auto f = ::tickinfer::test::load_shared_tflite_file(kTflite + "/mlp_small/float.tflite");
  EXPECT_THROW(engine::compile_cuda_integer_on_host(f, CompileOptions{}, false), Error);
  // Stream mode: the integer program keeps no state between calls.
  CompileOptions stream;
  stream.mode = RecurrentMode::Stream;
  const auto lstm_tiny = ::tickinfer::test::load_shared_tflite_file(kTflite + "/lstm_tiny/int8.tflite");
  try {
    engine::compile_cuda_integer_on_host(lstm_tiny, stream, false);
    ADD_FAILURE() << "stream mode compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stream mode"), std::string::npos) << e.what();
  }
  // The graph form's options mean nothing to an int8 program.
  CompileOptions o;
  o.cuda_precision = "fp16";
  const auto q = ::tickinfer::test::load_shared_tflite_file(kTflite + "/mlp_small/int8.tflite");
  EXPECT_THROW(engine::compile_cuda_integer_on_host(q, o, false), Error);
  // It runs as a CUDA graph: asking for that form (as serve --device cuda does for every model)
  // compiles; the resident program form is refused by name.
  CompileOptions graph;
  graph.cuda_form = "graph";
  EXPECT_NO_THROW(engine::compile_cuda_integer_on_host(q, graph, false));
  // A precision spec that asks for fp32 everywhere, however written, is no 16-bit request.
  graph.cuda_precision = "fp32/fp32,dense=fp32";
  EXPECT_NO_THROW(engine::compile_cuda_integer_on_host(q, graph, false));
  CompileOptions program;
  program.cuda_form = "program";
  try {
    engine::compile_cuda_integer_on_host(q, program, false);
    ADD_FAILURE() << "--cuda-form program compiled an int8 program";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--cuda-form program"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tickinfer
