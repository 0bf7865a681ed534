// Every fixture model, run through every kernel set this CPU supports, must reproduce the
// outputs real TensorFlow/Keras computed for it (tools/make_fixtures.py). Window mode runs each
// row as its own batch-1 call; stream mode feeds a sequence tick by tick and must match Keras on
// each prefix window.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <utility>

#include "formats/npy.hpp"
#include "kernels/kernel_set.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

struct Param {
  FixtureCase c;
  kernels::Isa isa;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.c.name << "/" << kernels::isa_name(p.isa); }

std::vector<Param> all_params() {
  std::vector<Param> out;
  const std::string dirs[] = {testing::fixtures_dir(),
                              std::string(::tickinfer::test::source_dir()) + "/bench/models",
                              std::string(::tickinfer::test::source_dir()) + "/bench/book_models",
                              std::string(::tickinfer::test::source_dir()) + "/bench/book_models_multi_horizon"};
  for (const std::string& d : dirs) {
    for (const FixtureCase& c : testing::load_manifest(d)) {
      for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Portable, kernels::Isa::Avx2,
                                kernels::Isa::Avx512}) {
        out.push_back({c, isa});
      }
    }
  }
  return out;
}

std::vector<Param> stream_params() {
  std::vector<Param> out;
  for (const Param& p : all_params()) {
    if (!p.c.stream_in.empty()) out.push_back(p);
  }
  return out;
}


class KerasReference : public ::testing::TestWithParam<Param> {};

TEST_P(KerasReference, WindowModeMatchesKeras) {
  const Param& p = GetParam();
  if (!kernels::isa_supported(p.isa)) GTEST_SKIP() << kernels::isa_name(p.isa) << " not supported here";
  const Model model = Model::load(p.c.file);
  CompileOptions opt;
  opt.isa = kernels::isa_name(p.isa);
  opt.window_length = p.c.window_length;
  Plan plan = compile(model, opt);
  ASSERT_EQ(plan.num_inputs(), p.c.inputs.size());
  ASSERT_EQ(plan.num_outputs(), p.c.outputs.size());

  std::vector<formats::NpyArray> ins, wants;
  for (const auto& f : p.c.inputs) ins.push_back(formats::read_npy(f));
  for (const auto& f : p.c.outputs) wants.push_back(formats::read_npy(f));
  const int64_t rows = ins[0].shape[0];
  for (size_t i = 0; i < ins.size(); ++i) {
    ASSERT_EQ(ins[i].data.size(), rows * plan.input_size(i)) << "input " << i << " shape";
  }
  for (size_t o = 0; o < wants.size(); ++o) {
    ASSERT_EQ(wants[o].data.size(), rows * plan.output_size(o)) << "output " << o << " shape";
  }
  std::vector<std::vector<float>> outs(plan.num_outputs());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<const float*> in_ptrs;
    std::vector<float*> out_ptrs;
    for (size_t i = 0; i < ins.size(); ++i) in_ptrs.push_back(ins[i].data.data() + r * plan.input_size(i));
    for (size_t o = 0; o < outs.size(); ++o) {
      outs[o].assign(plan.output_size(o), -12345.0f);
      out_ptrs.push_back(outs[o].data());
    }
    plan.run(in_ptrs.data(), out_ptrs.data());
    for (size_t o = 0; o < outs.size(); ++o) {
      std::ostringstream what;
      what << p.c.name << " [" << plan.isa() << "] row " << r << " output " << o;
      testing::expect_close(outs[o].data(), wants[o].data.data() + r * plan.output_size(o), plan.output_size(o),
                   p.c.rtol, p.c.atol, what.str());
    }
  }
}

class KerasStreamReference : public ::testing::TestWithParam<Param> {};

TEST_P(KerasStreamReference, MatchesKerasOnEveryPrefix) {
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
  if (info.param.c.dir.find("bench") != std::string::npos) n = "bench_" + n;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KerasReference, ::testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, KerasStreamReference, ::testing::ValuesIn(stream_params()),
                         param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KerasReference);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KerasStreamReference);

TEST(VariableLength, WindowModeNeedsAWindowLength) {
  for (const auto& c : testing::load_manifest(testing::fixtures_dir())) {
    if (c.window_length == 0) continue;
    const Model model = Model::load(c.file);
    try {
      compile(model);  // no window length: the None time axis cannot be resolved
      ADD_FAILURE() << c.name << " compiled without a window length";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unknown dimension"), std::string::npos) << e.what();
    }
    CompileOptions stream;
    stream.mode = RecurrentMode::Stream;  // needs none
    EXPECT_EQ(compile(model, stream).input_shape(0), Shape{4}) << c.name;
    return;
  }
  FAIL() << "no variable-length fixture";
}

// Attention streams only where its state is bounded: causal self-attention with a sliding
// window (attention_stream_k3, checked against Keras above). Attention over the whole window,
// or a window cut on both sides, cannot answer a tick before the rows after it arrive.
TEST(AttentionStream, AttentionThatReadsRowsStillToComeIsRefusedInStreamMode) {
  CompileOptions stream;
  stream.mode = RecurrentMode::Stream;
  for (const char* name : {"attention_window_k3", "attention_long_k3"}) {
    const Model model = Model::load(testing::fixtures_dir() + "/" + name + "/model.keras");
    try {
      compile(model, stream);
      ADD_FAILURE() << name << " compiled in stream mode";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("(MultiHeadAttention) attends over the window"), std::string::npos) << e.what();
    }
  }
}

// A layer that reads the window backwards (go_backwards, Bidirectional's backward half, an ONNX
// LSTM with direction "bidirectional", a ReverseSequence, a SavedModel's ReverseV2) starts from
// the window's last tick, which stream mode has not seen yet: refused by the layer's name.
TEST(BackwardsRecurrent, RefusedInStreamModeByTheLayersName) {
  CompileOptions stream;
  stream.mode = RecurrentMode::Stream;
  const std::pair<const char*, const char*> cases[] = {{"go_backwards_k3/model.keras", "(LSTM)"},
                                                       {"bidirectional_k2/model.h5", "(Bidirectional)"},
                                                       {"onnx/bidirectional_seq_k2/model.onnx", "(LSTM)"},
                                                       {"onnx/go_backwards_k3/model.onnx", "(ReverseSequence)"},
                                                       // does not infer at one step (a fixed-length Reshape)
                                                       {"onnx/rnn_directions/model.onnx", "(LSTM)"},
                                                       {"savedmodel/bidirectional_k3/k3_export", "(ReverseV2)"}};
  for (const auto& [file, cls] : cases) {
    // The Keras files from the suite under test (live ones in `make live-reference`); the other
    // formats' from the committed fixtures, which that suite does not regenerate.
    const bool keras = std::string(file).find('/') == std::string(file).rfind('/');
    const std::string dir = keras ? testing::fixtures_dir() : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
    const Model model = Model::load(dir + "/" + file);
    try {
      compile(model, stream);
      ADD_FAILURE() << file << " compiled in stream mode";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(cls) + " goes backwards in time"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("window mode"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tickinfer

namespace tickinfer {
namespace {
// Guards against the suite passing vacuously: the fixtures must exist and cover both formats.
TEST(KerasFixtures, ManifestListsModelsInBothFormats) {
  const auto cases = testing::load_manifest(testing::fixtures_dir());
  ASSERT_GE(cases.size(), 20u) << "no fixtures under " << testing::fixtures_dir();
  bool k2 = false, k3 = false;
  for (const auto& c : cases) {
    k2 = k2 || c.format == "keras2";
    k3 = k3 || c.format == "keras3";
  }
  EXPECT_TRUE(k2 && k3);
  EXPECT_GE(testing::load_manifest(std::string(::tickinfer::test::source_dir()) + "/bench/models").size(), 6u);
  EXPECT_GE(testing::load_manifest(std::string(::tickinfer::test::source_dir()) + "/bench/book_models").size(), 1u);
  EXPECT_EQ(testing::load_manifest(std::string(::tickinfer::test::source_dir()) + "/bench/book_models_multi_horizon").size(),
            2u);
}
}  // namespace
}  // namespace tickinfer
