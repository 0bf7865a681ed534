// Every SavedModel fixture (tools/make_savedmodel_fixtures.py: Keras 3 `model.export`,
// `tf.saved_model.save`, tf_keras `model.save`) loaded through the SavedModel importer must
// reproduce the outputs Keras computed, in window mode and, for recurrent models, in stream mode
// (tick by tick, matching Keras on every prefix). The fixture directory is
// $TICKINFER_SAVEDMODEL_FIXTURES, else the committed tests/fixtures/savedmodel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "formats/npy.hpp"
#include "formats/savedmodel/saved_model.hpp"
#include "kernels/kernel_set.hpp"
#include "support/expect_close.hpp"
#include "support/fixture_manifest.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

using testing::FixtureCase;

std::string savedmodel_fixtures_dir() {
  const char* env = std::getenv("TICKINFER_SAVEDMODEL_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/savedmodel";
}

struct Param {
  FixtureCase c;
  kernels::Isa isa;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.c.name << "/" << kernels::isa_name(p.isa); }

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const FixtureCase& c : testing::load_manifest(savedmodel_fixtures_dir())) {
    for (kernels::Isa isa : {kernels::Isa::Scalar, kernels::Isa::Avx2, kernels::Isa::Avx512}) out.push_back({c, isa});
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


class SavedModelReference : public ::testing::TestWithParam<Param> {};

TEST_P(SavedModelReference, WindowModeMatchesKeras) {
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
      testing::expect_close(outs[o].data(), wants[o].data.data() + r * plan.output_size(o), plan.output_size(o), p.c.rtol, p.c.atol, what.str());
    }
  }
}

class SavedModelStreamReference : public ::testing::TestWithParam<Param> {};

TEST_P(SavedModelStreamReference, MatchesKerasOnEveryPrefix) {
  const Param& p = GetParam();
  if (!kernels::isa_supported(p.isa)) GTEST_SKIP() << kernels::isa_name(p.isa) << " not supported here";
  const Model model = Model::load(p.c.file);
  CompileOptions opt;
  opt.isa = kernels::isa_name(p.isa);
  opt.mode = RecurrentMode::Stream;
  Plan plan = compile(model, opt);
  const formats::NpyArray in = formats::read_npy(p.c.stream_in);
  const formats::NpyArray want = formats::read_npy(p.c.stream_out);
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

INSTANTIATE_TEST_SUITE_P(Fixtures, SavedModelReference, ::testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(Fixtures, SavedModelStreamReference, ::testing::ValuesIn(stream_params()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SavedModelReference);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SavedModelStreamReference);

// Guards against passing vacuously, and checks what the loader reports next to the Graph.
TEST(SavedModelFixtures, ManifestCoversEveryExportForm) {
  const auto cases = testing::load_manifest(savedmodel_fixtures_dir());
  ASSERT_GE(cases.size(), 3u) << "no fixtures under " << savedmodel_fixtures_dir();
  bool stream = false;
  for (const auto& c : cases) {
    stream = stream || !c.stream_in.empty();
    const formats::SavedModel sm = formats::load_saved_model(c.file);
    EXPECT_EQ(sm.graph.source_format, "savedmodel");
    EXPECT_EQ(sm.info.signature_key, "serving_default");
    ASSERT_FALSE(sm.info.signatures.empty());
    EXPECT_EQ(sm.graph.output_names.size(), sm.graph.outputs.size());
    for (const Node& n : sm.graph.nodes) {
      if (n.kind != OpKind::Input) {
        EXPECT_FALSE(n.origin.empty()) << c.name << ": node " << n.name << " has no origin";
      }
    }
  }
  EXPECT_TRUE(stream) << "no recurrent fixture with a stream check";
}

}  // namespace
}  // namespace tickinfer

namespace tickinfer {
namespace {
// Models the importer must refuse (manifest "unsupported"): the error names the layer's op and
// the reason, never a silently different model.
TEST(SavedModelUnsupported, RefusedWithANamedError) {
  std::ifstream f(savedmodel_fixtures_dir() + "/manifest.json");
  if (!f) GTEST_SKIP() << "no manifest";
  const nlohmann::json m = nlohmann::json::parse(f);
  if (!m.contains("unsupported")) GTEST_SKIP() << "no unsupported cases in this suite";
  for (const auto& u : m["unsupported"]) {
    const std::string dir = savedmodel_fixtures_dir() + "/" + u.at("file").get<std::string>();
    try {
      Model::load(dir);
      ADD_FAILURE() << u.at("name") << " loaded";
    } catch (const Error& e) {
      for (const auto& want : u.at("expect_error_contains")) {
        EXPECT_NE(std::string(e.what()).find(want.get<std::string>()), std::string::npos) << e.what();
      }
    }
  }
}
}  // namespace
}  // namespace tickinfer
