// Pruned models through the public API (Model::load -> compile -> Plan::run) against the
// framework's outputs: the tf_keras files with and without tfmot wrappers, the SavedModel, and
// the float sparse TFLite files (lifted to the graph engine with their decoded weights).
// Fixtures: tests/fixtures/pruned (tools/make_pruned_fixtures.py; $TICKINFER_PRUNED_FIXTURES
// overrides, as `make pruned-reference` does). The int8 files are checked bit for bit against
// the TFLite interpreter in formats_pruned_test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "support/expect_close.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

std::string pruned_dir() {
  const char* env = std::getenv("TICKINFER_PRUNED_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pruned";
}

TEST(PrunedReference, FloatModelsMatchTheFramework) {
  std::ifstream f(pruned_dir() + "/manifest.json");
  ASSERT_TRUE(f) << "no pruned fixtures in " << pruned_dir();
  const nlohmann::json m = nlohmann::json::parse(f);
  int checked = 0;
  for (const auto& c : m.at("cases")) {
    if (c.value("int8", false)) continue;
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const std::string dir = pruned_dir() + "/";
    try {
      const Model model = Model::load(dir + c.at("file").get<std::string>());
      Plan plan = compile(model);
      const formats::NpyArray in = formats::read_npy(dir + c.at("inputs").at(0).get<std::string>());
      const formats::NpyArray want = formats::read_npy(dir + c.at("outputs").at(0).get<std::string>());
      const size_t rows = in.data.size() / plan.input_size(0);
      ASSERT_EQ(want.data.size(), rows * plan.output_size(0));
      std::vector<float> out(plan.output_size(0));
      for (size_t r = 0; r < rows; ++r) {
        const float* in_ptr = in.data.data() + r * plan.input_size(0);
        float* out_ptr = out.data();
        plan.run(&in_ptr, &out_ptr);
        testing::expect_close(out.data(), want.data.data() + r * out.size(), out.size(), c.at("rtol").get<double>(),
                              c.at("atol").get<double>(), name + " row " + std::to_string(r));
      }
      ++checked;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(checked, 9);
}

}  // namespace
}  // namespace tickinfer
