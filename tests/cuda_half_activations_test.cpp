// fp16/bf16 activation storage on the CUDA graph and program forms (--cuda-precision W/A): on every
// window fixture, the program storing every tensor it may in 16 bits gives bit for bit the outputs
// of the fp32 program whose step outputs are rounded after each step by independent references
// (the compiler's _Float16, a nearest-candidate search for bf16), in either item order; batched
// rows equal run(); on a GPU the card agrees with the host within the storage's own error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "cuda/device_runner.hpp"
#include "cuda/devices.hpp"
#include "cuda/half_bits.hpp"
#include "engine/cuda_graph_plan.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "formats/npy.hpp"
#include "support/fixture_manifest.hpp"
#include "support/lowered_fixture.hpp"
#include "support/half_references.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

struct Form {
  int32_t format;
  float (*round)(float);
  const char* spec;  // every layer's outputs in the format, weights fp32
};

std::vector<Form> forms() {
  std::vector<Form> f = {{cuda::kWeightsBf16, testing::bf16_reference, "fp32/bf16"}};
#if defined(__FLT16_MAX__)
  f.push_back({cuda::kWeightsFp16, testing::fp16_reference, "fp32/fp16"});
#endif
  return f;
}

struct Case {
  engine::LoweredGraph lowered;
  std::vector<formats::NpyArray> ins;
  std::vector<const float*> in;
  int rows = 0;
};

Case load(const FixtureCase& c) {
  Case k{testing::lower_fixture(c), {}, {}, 0};
  for (const auto& f : c.inputs) k.ins.push_back(formats::read_npy(f));
  for (const formats::NpyArray& a : k.ins) k.in.push_back(a.data.data());
  k.rows = int(std::min<int64_t>(k.ins[0].shape[0], 2));
  return k;
}

class HalfActivations : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(HalfActivations, EqualTheFp32ProgramRoundedAfterEachStep) {
  const FixtureCase& c = GetParam();
  const Case k = load(c);
  const cuda::DeviceProgram fp32 = engine::device_program_from(k.lowered, c.name);
  std::map<int64_t, int64_t> floats_at;  // the fp32 program's tensors by offset
  for (const cuda::DeviceTensor& t : fp32.tensors) floats_at[t.offset] = t.floats;
  for (const Form& f : forms()) {
    engine::StorageFormats all;
    all.all.activations = f.format;
    const cuda::DeviceProgram half = engine::device_program_from(k.lowered, c.name, all);
    ASSERT_EQ(cuda::program_error(half), "") << c.name;
    ASSERT_EQ(half.steps.size(), fp32.steps.size());
    // Every tensor that may be 16-bit is; the rest (inputs, outputs, attention's) stay fp32.
    for (const cuda::DeviceTensor& t : half.tensors)
      EXPECT_EQ(t.format, t.fp32_only || t.layer.empty() ? int32_t(cuda::kWeightsFp32) : f.format)
          << c.name << " tensor of " << t.layer;
    // What the 16-bit program stores rounded, the reference rounds after the step, in fp32.
    std::vector<int64_t> rounded(fp32.steps.size(), 0);
    for (size_t s = 0; s < half.steps.size(); ++s) {
      if (half.steps[s].out_format == cuda::kWeightsFp32) continue;
      EXPECT_EQ(half.steps[s].out_format, f.format);
      EXPECT_EQ(half.steps[s].out, 2 * fp32.steps[s].out) << "a 16-bit tensor's offset counts 16-bit units";
      rounded[s] = floats_at.at(fp32.steps[s].out);
    }
    const std::vector<float> got = cuda::run_rows_on_host(half, k.in, k.rows);
    const std::vector<float> want = cuda::run_rows_on_host(fp32, k.in, k.rows, [&](size_t s, float* A) {
      for (int64_t i = 0; i < rounded[s]; ++i) A[fp32.steps[s].out + i] = f.round(A[fp32.steps[s].out + i]);
    });
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << c.name << " " << f.spec;
    // Items backwards: a Mixed body whose items depend on each other answers differently.
    auto backwards = cuda::host_program_runner(std::make_shared<const cuda::DeviceProgram>(half), true);
    cuda::ProgramIo io(half, 0.0f);
    size_t at = 0;
    for (int r = 0; r < k.rows; ++r) {
      for (size_t i = 0; i < k.in.size(); ++i)
        std::memcpy(io.in[i].data(), k.in[i] + size_t(r) * io.in[i].size(), io.in[i].size() * sizeof(float));
      ASSERT_TRUE(backwards->run(io.in_ptrs.data(), io.out_ptrs.data(), true));
      for (const std::vector<float>& o : io.out) {
        EXPECT_EQ(std::memcmp(o.data(), got.data() + at, o.size() * sizeof(float)), 0) << c.name << " backwards";
        at += o.size();
      }
    }
  }
}

// A batch of rows on the host executor, each row bit-identical to run() on it, with 16-bit
// activations (the row arenas hold 16-bit tensors at the same 16-bit offsets).
TEST_P(HalfActivations, BatchedRowsEqualRun) {
  const FixtureCase& c = GetParam();
  const Model model = Model::load(c.file);
  CompileOptions opt;
  opt.window_length = c.window_length;
  opt.cuda_precision = "fp16/bf16";
  auto one = engine::compile_cuda_graph_on_host(model.graph(), opt, false);
  auto batched = engine::compile_cuda_graph_on_host(model.graph(), opt, true);
  if (one->input_shapes().size() != 1 || one->output_shapes().size() != 1) GTEST_SKIP() << "rows take one input and one output";
  ASSERT_EQ(batched->reserve_rows(2), "") << c.name;
  const formats::NpyArray x = formats::read_npy(c.inputs[0]);
  const size_t in = size_t(shape_size(one->input_shapes()[0])), out = size_t(shape_size(one->output_shapes()[0]));
  const int rows = int(std::min<int64_t>(x.shape[0], 3));
  std::vector<float> want(rows * out), got(rows * out, -1.0f);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x.data.data() + r * in;
    float* yr = want.data() + r * out;
    one->run(&xr, &yr);
  }
  batched->run_rows(x.data.data(), rows, got.data());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << c.name;
}

// On a card: the graph form's Mixed kernels (or the resident program's) agree with the host
// executor within twice the storage's own error there (the card's expf and tanhf are not the
// host's, so a value may round to the neighbouring 16-bit number), plus Keras's tolerance.
void check_on_gpu(const FixtureCase& c, bool program) {
  const Model model = Model::load(c.file);
  const Case k = load(c);
  engine::StorageFormats all;
  all.all.activations = cuda::kWeightsFp16;
  const cuda::DeviceProgram half = engine::device_program_from(k.lowered, c.name, all);
  const std::vector<float> host = cuda::run_rows_on_host(half, k.in, k.rows);
  const std::vector<float> fp32 = cuda::run_rows_on_host(engine::device_program_from(k.lowered, c.name), k.in, k.rows);
  double storage = 0;
  for (size_t i = 0; i < host.size(); ++i) storage = std::max(storage, std::fabs(double(host[i]) - double(fp32[i])));
  CompileOptions opt;
  opt.window_length = c.window_length;
  opt.device = "cuda";
  opt.cuda_precision = "fp32/fp16";
  auto plan = program ? engine::compile_cuda_program(model.graph(), opt, 0, 8) : engine::compile_cuda_graph(model.graph(), opt, 0);
  cuda::ProgramIo io(half, 0.0f);
  size_t at = 0;
  for (int r = 0; r < k.rows; ++r) {
    for (size_t i = 0; i < k.in.size(); ++i)
      std::memcpy(io.in[i].data(), k.in[i] + size_t(r) * io.in[i].size(), io.in[i].size() * sizeof(float));
    plan->run(io.in_ptrs.data(), io.out_ptrs.data());
    for (const std::vector<float>& o : io.out)
      for (float v : o) {
        const double ref = host[at++];
        EXPECT_LE(std::fabs(double(v) - ref), 2 * storage + c.atol + c.rtol * std::fabs(ref))
            << c.name << (program ? " (resident program)" : " (graph form)");
      }
  }
}

TEST_P(HalfActivations, GpuGraphFormAgreesWithTheHost) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the 16-bit bodies run on the host above";
  check_on_gpu(GetParam(), false);
}

// tools/gpu_check.sh runs this only once the resident program form has answered on one fixture.
TEST_P(HalfActivations, GpuResidentProgramAgreesWithTheHost) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the 16-bit bodies run on the host above";
  check_on_gpu(GetParam(), true);
}

std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) { return testing::case_test_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Fixtures, HalfActivations, ::testing::ValuesIn(testing::storage_window_cases()), case_name);

}  // namespace
}  // namespace tickinfer
