// fp16/bf16 weight storage on the CUDA graph form (activations: cuda_half_activations_test.cpp):
// the encoders against independent references
// (the compiler's _Float16 conversions, a nearest-candidate search for bf16), the step bodies
// reading 16-bit matrices bit for bit as the fp32 program reads the same weights rounded
// beforehand (every window fixture, on the host executor), the --cuda-precision spec, and the
// per-layer report's chosen mix held to its bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cuda/device_runner.hpp"
#include "cuda/half_bits.hpp"
#include "engine/cuda_precision_report.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "formats/npy.hpp"
#include "support/fixture_manifest.hpp"
#include "support/lowered_fixture.hpp"
#include "support/half_references.hpp"
#include "support/source_paths.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

using testing::bf16_reference;
using testing::float_of_bits;
#if defined(__FLT16_MAX__)
using testing::fp16_reference;
#endif

bool same_value(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

TEST(HalfBits, Fp16EncodeAndDecodeMatchTheCompilersFloat16) {
#if defined(__FLT16_MAX__)
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    _Float16 v;
    const uint16_t bits = uint16_t(h);
    std::memcpy(&v, &bits, 2);
    ASSERT_TRUE(same_value(cuda::fp16_to_float(bits), float(v))) << std::hex << h;
  }
  // Every 997th float bit pattern, both signs, every exponent: normals, fp16 subnormals, overflow.
  for (uint64_t b = 0; b <= 0xffffffffull; b += 997) {
    const float f = float_of_bits(uint32_t(b));
    ASSERT_TRUE(same_value(cuda::fp16_to_float(cuda::float_to_fp16(f)), fp16_reference(f))) << std::hex << b;
  }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 6.1035156e-05f,
                  std::numeric_limits<float>::infinity(), -0.0f})
    EXPECT_TRUE(same_value(cuda::fp16_to_float(cuda::float_to_fp16(f)), fp16_reference(f))) << f;
#else
  GTEST_SKIP() << "this compiler has no _Float16 to check against";
#endif
}

TEST(HalfBits, Bf16EncodeRoundsToTheNearestCandidate) {
  for (uint64_t b = 0; b <= 0xffffffffull; b += 997) {
    const float f = float_of_bits(uint32_t(b));
    if (std::isnan(f) || std::isinf(f)) continue;
    const float want = bf16_reference(f);
    ASSERT_TRUE(same_value(cuda::bf16_to_float(cuda::float_to_bf16(f)), want)) << std::hex << b;
  }
  EXPECT_TRUE(std::isnan(cuda::bf16_to_float(cuda::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

std::vector<FixtureCase> window_cases() { return testing::storage_window_cases(); }

// Every output of the first rows of the case, run on the host executor.
std::vector<float> host_outputs(const cuda::DeviceProgram& program, const std::vector<formats::NpyArray>& ins, int rows) {
  std::vector<const float*> in;
  for (const formats::NpyArray& a : ins) in.push_back(a.data.data());
  return cuda::run_rows_on_host(program, in, rows);
}

void round_matrices(engine::LoweredGraph& g, float (*round)(float)) {
  for (engine::LoweredOp& op : g.ops)
    for (std::vector<float>* m : {&op.kernel.data, &op.recurrent_kernel.data, &op.recurrent_kernel_h.data, &op.depthwise})
      for (float& w : *m) w = round(w);
}

class HalfWeights : public ::testing::TestWithParam<FixtureCase> {};

// A program storing every matrix in fp16 (bf16) gives exactly the outputs of the fp32 program
// whose matrices were rounded to fp16 (bf16) by the references above: the step bodies read
// 16-bit weights as the values they stand for, and nothing else changes.
TEST_P(HalfWeights, EqualTheFp32ProgramOnRoundedWeights) {
  const FixtureCase& c = GetParam();
  const engine::LoweredGraph lowered = testing::lower_fixture(c);
  std::vector<formats::NpyArray> ins;
  for (const auto& f : c.inputs) ins.push_back(formats::read_npy(f));
  const int rows = int(std::min<int64_t>(ins[0].shape[0], 2));
  struct Form {
    int32_t format;
    float (*round)(float);
  };
  std::vector<Form> forms = {{cuda::kWeightsBf16, bf16_reference}};
#if defined(__FLT16_MAX__)
  forms.push_back({cuda::kWeightsFp16, fp16_reference});
#endif
  for (const Form& f : forms) {
    engine::StorageFormats all;
    all.all.weights = f.format;
    const cuda::DeviceProgram half = engine::device_program_from(lowered, c.name, all);
    ASSERT_EQ(cuda::program_error(half), "") << c.name;
    for (const cuda::DeviceStep& s : half.steps)
      if (s.kernel >= 0 || s.recurrent >= 0 || s.depthwise >= 0) {
        EXPECT_EQ(s.weight_format, f.format) << c.name;
      }
    engine::LoweredGraph rounded = lowered;
    round_matrices(rounded, f.round);
    const std::vector<float> got = host_outputs(half, ins, rows);
    const std::vector<float> want = host_outputs(engine::device_program_from(rounded, c.name), ins, rows);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << c.name << " " << engine::storage_format_name(f.format);
  }
}

std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) { return testing::case_test_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Fixtures, HalfWeights, ::testing::ValuesIn(window_cases()), case_name);

TEST(CudaPrecisionSpec, ParsesFormatsAndOverridesAndRefusesTheRest) {
  using engine::LayerStorage;
  const engine::StorageFormats f = engine::parse_cuda_precision("fp16,lstm=fp32/bf16,dense_1=bf16");
  EXPECT_EQ(f.all, (LayerStorage{cuda::kWeightsFp16, cuda::kWeightsFp32}));
  EXPECT_EQ(f.of("lstm"), (LayerStorage{cuda::kWeightsFp32, cuda::kWeightsBf16}));
  EXPECT_EQ(f.of("dense_1"), (LayerStorage{cuda::kWeightsBf16, cuda::kWeightsFp32}));
  EXPECT_EQ(f.of("conv1d"), f.all);
  EXPECT_EQ(engine::cuda_precision_spec(f), "fp16,dense_1=bf16,lstm=fp32/bf16");
  EXPECT_EQ(engine::parse_cuda_precision("").all, LayerStorage{});
  EXPECT_EQ(engine::parse_cuda_precision("bf16/fp16").all, (LayerStorage{cuda::kWeightsBf16, cuda::kWeightsFp16}));
  EXPECT_EQ(engine::cuda_precision_spec(engine::parse_cuda_precision("fp16/fp32")), "fp16");
  for (const char* bad : {"fp8", "fp16,lstm", "fp16,=bf16", "fp16,lstm=int8", "fp16/", "/fp16", "fp16/bf16/fp32", "fp16/int8"}) {
    try {
      engine::parse_cuda_precision(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--cuda-precision"), std::string::npos) << e.what();
    }
  }
  const Model model = Model::load(std::string(test::source_dir()) + "/bench/models/tcn/model.keras");
  const engine::LoweredGraph g = engine::lower_for_plan(model.graph(), {});
  try {
    engine::device_program_from(g, "tcn", engine::parse_cuda_precision("fp32,no_such_layer=fp16"));
    ADD_FAILURE() << "an unknown layer accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_layer"), std::string::npos) << e.what();
  }
}

// The report on tcn: every layer's matrices and outputs measured in both formats, and the spec it
// prints, compiled again, reproduces the error it states, within the bound.
TEST(CudaPrecisionReport, TheChosenSpecHoldsItsBound) {
  const std::string dir = std::string(test::source_dir()) + "/bench/models/tcn/";
  const Model model = Model::load(dir + "model.keras");
  const formats::NpyArray x = formats::read_npy(dir + "in0.npy");
  const double bound = 1e-4;
  const engine::CudaPrecisionReport r = engine::cuda_precision_report(model.graph(), {}, {x.data.data()}, 8, bound);
  // Four Conv1D (matrices and outputs), the pooling (outputs only) and the Dense head (matrices
  // only: its output is the model's, which stays fp32).
  ASSERT_EQ(r.layers.size(), 6u);
  EXPECT_EQ(r.layers[4].matrix_values, 0);
  EXPECT_EQ(r.layers[5].output_values, 0);
  bool half_weights = false, half_outputs = false;
  for (const engine::CudaPrecisionLayer& L : r.layers) {
    if (L.matrix_values > 0) {
      EXPECT_GT(L.fp16_error, 0) << L.layer;
      EXPECT_GT(L.bf16_error, 0) << L.layer;
    }
    if (L.output_values > 0) {
      EXPECT_GT(L.out_fp16_error, 0) << L.layer;
      EXPECT_GT(L.out_bf16_error, 0) << L.layer;
    }
    const engine::LayerStorage chosen = engine::parse_cuda_precision(L.chosen).all;
    half_weights = half_weights || chosen.weights != cuda::kWeightsFp32;
    half_outputs = half_outputs || chosen.activations != cuda::kWeightsFp32;
  }
  EXPECT_TRUE(half_weights);
  EXPECT_TRUE(half_outputs);
  EXPECT_LE(r.chosen_error, bound);
  EXPECT_LT(r.matrix_bytes_chosen, r.matrix_bytes_fp32);
  EXPECT_LT(r.output_bytes_chosen, r.output_bytes_fp32);
  const engine::LoweredGraph g = engine::lower_for_plan(model.graph(), {});
  std::vector<formats::NpyArray> ins = {x};
  const std::vector<float> ref = host_outputs(engine::device_program_from(g, "tcn"), ins, 8);
  const std::vector<float> got = host_outputs(engine::device_program_from(g, "tcn", engine::parse_cuda_precision(r.spec)), ins, 8);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - double(ref[i])));
  EXPECT_EQ(worst, r.chosen_error) << r.spec;
}

// Stream mode: the rows are the ticks of one sequence (the state carried, as a stream plan runs),
// every tick's outputs compared; lstm_tiny's 64 ticks, and the printed spec reproduces its error.
TEST(CudaPrecisionReport, StreamModeRunsTheTicksAsOneSequence) {
  const std::string dir = std::string(test::source_dir()) + "/bench/models/lstm_tiny/";
  const Model model = Model::load(dir + "model.keras");
  const formats::NpyArray x = formats::read_npy(dir + "stream_in.npy");  // [sequences][ticks][features]
  CompileOptions opt;
  opt.mode = RecurrentMode::Stream;
  const engine::CudaPrecisionReport r = engine::cuda_precision_report(model.graph(), opt, {x.data.data()}, 64, 1e-4);
  ASSERT_EQ(r.layers.size(), 3u);  // two LSTMs, the Dense head
  for (const engine::CudaPrecisionLayer& L : r.layers) EXPECT_GT(L.fp16_error, 0) << L.layer;
  EXPECT_LE(r.chosen_error, 1e-4);
  const engine::LoweredGraph g = engine::lower_for_plan(model.graph(), opt);
  const std::vector<const float*> in = {x.data.data()};
  const auto ticks = [&](const std::string& spec, bool one_sequence) {
    return cuda::run_rows_on_host(engine::device_program_from(g, "lstm_tiny", engine::parse_cuda_precision(spec)), in, 64,
                                  {}, one_sequence);
  };
  const std::vector<float> ref = ticks("fp32", true), got = ticks(r.spec, true);
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - double(ref[i])));
  EXPECT_EQ(worst, r.chosen_error) << r.spec;
  // The state is carried: the same ticks each from zero state give other outputs.
  EXPECT_NE(ticks("fp32", false), ref);
}

}  // namespace
}  // namespace tickinfer
