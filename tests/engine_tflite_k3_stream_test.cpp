// Stream mode over a Keras 3 TFLite conversion: a stateful LSTM with one time step per call
// (fixture tflite_k3/lstm_stream: CALL_ONCE + resource variables around a WHILE that the
// interpreter runs as the fused LSTM) through ProgramPlan, one row per run() with the state
// kept, against the TFLite interpreter's outputs for the same stream; and a non-stateful Keras 3
// LSTM, which has no state to carry, refused in stream mode.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/program_plan.hpp"
#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_file.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace {

using namespace tickinfer;

const std::string kRoot = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite_k3/";

std::shared_ptr<const tfl::Program> load(const std::string& path) {
  return ::tickinfer::test::load_shared_tflite_file(path);
}

TEST(EngineTfliteK3Stream, StatefulLstmStreamsStepByStep) {
  std::ifstream mf(kRoot + "manifest.json");
  ASSERT_TRUE(mf) << kRoot;
  const nlohmann::json cases = nlohmann::json::parse(mf)["models"]["lstm_stream"]["cases"];
  int checked = 0;
  for (const char* name : {"keras_float", "saved_float", "keras_dynamic"}) {
    if (!cases.contains(name) || !cases[name].contains("expected_files")) continue;
    const nlohmann::json c = cases[name];
    const std::string dir = kRoot + "lstm_stream/";
    CompileOptions options;
    options.mode = RecurrentMode::Stream;
    engine::ProgramPlan plan(load(dir + c["file"].get<std::string>()), options);
    ASSERT_EQ(plan.input_shapes().size(), 1u);
    const formats::NpyArray x = formats::read_npy(dir + c["input_files"][0].get<std::string>());
    const formats::NpyArray want = formats::read_npy(dir + c["expected_files"][0].get<std::string>());
    const size_t rows = static_cast<size_t>(x.shape[0]);
    const size_t nin = x.data.size() / rows, nout = want.data.size() / rows;
    std::vector<float> y(nout);
    double scale = 1e-6;
    for (float v : want.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    const double rtol = std::string(name).find("dynamic") != std::string::npos ? 1e-4 : 1e-5;
    for (size_t r = 0; r < rows; ++r) {
      const float* in = x.data.data() + r * nin;
      float* out = y.data();
      plan.run(&in, &out);
      for (size_t k = 0; k < nout; ++k) {
        ASSERT_LE(std::fabs(y[k] - want.data[r * nout + k]) / scale, rtol) << name << " row " << r << " output " << k;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

TEST(EngineTfliteK3Stream, NonStatefulLstmHasNoStateToStream) {
  CompileOptions options;
  options.mode = RecurrentMode::Stream;
  try {
    engine::ProgramPlan plan(load(kRoot + "lstm_last/keras_float.tflite"), options);
    FAIL() << "stream mode accepted a model without state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no state"), std::string::npos) << e.what();
  }
}

}  // namespace
