// Every ONNX fixture (tools/make_onnx_fixtures.py: Keras models through tf2onnx, PyTorch models
// through torch.onnx.export), imported and run through every kernel set this CPU supports, must
// reproduce the outputs onnxruntime computed for the same file. Window mode runs each row as its
// own batch-1 call; stream mode feeds a sequence tick by tick and must match onnxruntime on each
// prefix. The directory is $TICKINFER_ONNX_FIXTURES (`make onnx-reference` points it at a suite
// it just regenerated), else the committed tests/fixtures/onnx.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/npy.hpp"
#include "kernels/kernel_set.hpp"
#include "model/graph.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

std::string onnx_dir() {
  const char* env = std::getenv("TICKINFER_ONNX_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/onnx";
}

struct Param {
  FixtureCase c;
  kernels::Isa isa;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.c.name << "/" << kernels::isa_name(p.isa); }

std::vector<Param> all_params(bool stream_only) {
  std::vector<Param> out;
  for (const FixtureCase& c : testing::load_manifest(onnx_dir())) {
    if (stream_only && c.stream_in.empty()) continue;
    for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Portable, kernels::Isa::Avx2, kernels::Isa::Avx512}) {
      out.push_back({c, isa});
    }
  }
  return out;
}


class OnnxReference : public ::testing::TestWithParam<Param> {};

TEST_P(OnnxReference, WindowModeMatchesOnnxRuntime) {
  const Param& p = GetParam();
  if (!kernels::isa_supported(p.isa)) GTEST_SKIP() << kernels::isa_name(p.isa) << " not supported here";
  const Model model = Model::load(p.c.file);
  CompileOptions opt;
  opt.isa = kernels::isa_name(p.isa);
  opt.window_length = p.c.window_length;  // set when the model's time axis is symbolic
  Plan plan = compile(model, opt);
  ASSERT_EQ(plan.num_inputs(), p.c.inputs.size());
  ASSERT_EQ(plan.num_outputs(), p.c.outputs.size());
  std::vector<formats::NpyArray> ins, wants;
  for (const auto& f : p.c.inputs) ins.push_back(formats::read_npy(f));
  for (const auto& f : p.c.outputs) wants.push_back(formats::read_npy(f));
  const int64_t rows = ins[0].shape[0];
  for (size_t i = 0; i < ins.size(); ++i) ASSERT_EQ(ins[i].data.size(), rows * plan.input_size(i)) << "input " << i;
  for (size_t o = 0; o < wants.size(); ++o) ASSERT_EQ(wants[o].data.size(), rows * plan.output_size(o)) << "output " << o;
  std::vector<std::vector<float>> outs(plan.num_outputs());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<const float*> in_ptrs;
    std::vector<float*> out_ptrs;
    for (size_t i = 0; i < ins.size(); ++i) in_ptrs.push_back(ins[i].data.data() + r * plan.input_size(i));
    for (auto& o : outs) {
      o.assign(plan.output_size(out_ptrs.size()), -12345.0f);
      out_ptrs.push_back(o.data());
    }
    plan.run(in_ptrs.data(), out_ptrs.data());
    for (size_t o = 0; o < outs.size(); ++o) {
      std::ostringstream what;
      what << p.c.name << " [" << plan.isa() << "] row " << r << " output " << o;
      testing::expect_close(outs[o].data(), wants[o].data.data() + r * plan.output_size(o), plan.output_size(o), p.c.rtol,
                   p.c.atol, what.str());
    }
  }
}

class OnnxStreamReference : public ::testing::TestWithParam<Param> {};

TEST_P(OnnxStreamReference, MatchesOnnxRuntimeOnEveryPrefix) {
  const Param& p = GetParam();
  if (!kernels::isa_supported(p.isa)) GTEST_SKIP() << kernels::isa_name(p.isa) << " not supported here";
  const Model model = Model::load(p.c.file);
  CompileOptions opt;
  opt.isa = kernels::isa_name(p.isa);
  opt.mode = RecurrentMode::Stream;
  Plan plan = compile(model, opt);
  const formats::NpyArray in = formats::read_npy(p.c.stream_in);    // [N, T, F]
  const formats::NpyArray want = formats::read_npy(p.c.stream_out); // [N, T, out]
  ASSERT_EQ(in.shape.size(), 3u);
  const int64_t N = in.shape[0], T = in.shape[1], F = in.shape[2];
  ASSERT_EQ(static_cast<size_t>(F), plan.input_size(0));
  const size_t out_n = plan.output_size(0);
  ASSERT_EQ(want.data.size(), N * T * out_n);
  std::vector<float> y(out_n);
  for (int64_t s = 0; s < N; ++s) {
    plan.reset_state();
    for (int64_t t = 0; t < T; ++t) {
      plan.run(in.data.data() + (s * T + t) * F, y.data());
      std::ostringstream what;
      what << p.c.name << " [" << plan.isa() << "] stream " << s << " tick " << t;
      testing::expect_close(y.data(), want.data.data() + (s * T + t) * out_n, out_n, p.c.rtol, p.c.atol, what.str());
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string n = info.param.c.name + "_" + kernels::isa_name(info.param.isa);
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxReference, ::testing::ValuesIn(all_params(false)), param_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxStreamReference, ::testing::ValuesIn(all_params(true)), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxReference);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxStreamReference);

nlohmann::json manifest() {
  std::ifstream f(onnx_dir() + "/manifest.json");
  return f ? nlohmann::json::parse(f) : nlohmann::json::object();
}

// Files the exporters write that the importer must refuse, each with an error naming the cause.
TEST(OnnxFixtures, UnsupportedFilesAreRefusedByName) {
  const nlohmann::json m = manifest();
  ASSERT_TRUE(m.contains("unsupported") && !m["unsupported"].empty()) << "no unsupported cases in " << onnx_dir();
  for (const auto& u : m["unsupported"]) {
    const std::string file = onnx_dir() + "/" + u.at("file").get<std::string>();
    try {
      (void)Model::load(file);
      ADD_FAILURE() << file << " loaded";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file, 0), 0u) << msg;
      for (const auto& word : u.at("expect_error_contains")) {
        EXPECT_NE(msg.find(word.get<std::string>()), std::string::npos) << msg << " lacks " << word;
      }
    }
  }
}

// Guards against the suite passing vacuously: both exporters, recurrent layers with stream
// fixtures, and graph metadata carried through.
TEST(OnnxFixtures, ManifestCoversTheExporters) {
  const auto cases = testing::load_manifest(onnx_dir());
  ASSERT_GE(cases.size(), 10u) << "no fixtures under " << onnx_dir();
  int streams = 0;
  bool keras3 = false;
  for (const auto& c : cases) {
    streams += !c.stream_in.empty();
    keras3 = keras3 || c.format == "onnx-keras3";
    const Model model = Model::load(c.file);
    EXPECT_EQ(model.graph().source_format, "onnx") << c.name;
  }
  EXPECT_TRUE(keras3);
  EXPECT_GE(streams, 2);
}

}  // namespace
}  // namespace tickinfer
