// Every TFLite fixture model (tools/make_tflite_fixtures.py: the bench models and small coverage
// models, converted by the real TFLiteConverter to float, dynamic-range and full-int8 files) run by
// tickinfer's interpreter against the outputs of TFLite's own interpreter with its reference
// kernels (OpResolverType.BUILTIN_REF), row by row:
//   int8:    bit-identical (the rows are int8 in, int8 out);
//   dynamic: within 1e-4 of the reference, relative to the output's largest magnitude;
//   float:   within 1e-5, the same way.
// Both the plain reference kernels ("scalar") and the fastest kernel set of this CPU are checked.
// The committed fixtures hold 200 rows per model; `make tflite-reference` regenerates them with
// 10,000 rows from the TensorFlow installed now and points TICKINFER_TFLITE_FIXTURES here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

std::string fixtures_root() {
  const char* env = std::getenv("TICKINFER_TFLITE_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite";
}

nlohmann::json manifest() {
  std::ifstream f(fixtures_root() + "/manifest.json");
  if (!f) return {};
  return nlohmann::json::parse(f);
}

std::shared_ptr<const tfl::Program> load(const std::string& path) {
  return ::tickinfer::test::load_shared_tflite_file(path);
}

struct Case {
  std::string model, mode, isa;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << "/" << c.mode << "/" << (c.isa.empty() ? "best" : c.isa); }

std::vector<Case> cases() {
  std::vector<Case> out;
  const nlohmann::json m = manifest();
  if (!m.contains("models")) return out;
  for (const auto& [name, model] : m["models"].items()) {
    for (const auto& [mode, entry] : model["modes"].items()) {
      if (!entry.contains("file")) continue;
      for (const char* isa : {"scalar", ""}) out.push_back({name, mode, isa});
    }
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.model + "_" + info.param.mode + "_" + (info.param.isa.empty() ? "best" : info.param.isa);
}

class TfliteReference : public testing::TestWithParam<Case> {};

TEST_P(TfliteReference, MatchesTheTfliteReferenceInterpreter) {
  const Case& c = GetParam();
  const std::string dir = fixtures_root() + "/" + c.model;
  const nlohmann::json entry = manifest()["models"][c.model]["modes"][c.mode];
  const std::string file = dir + "/" + entry["file"].get<std::string>();

  // The GRU fixture is a WHILE loop over cond/body subgraphs (no fused GRU op): it runs too.
  std::shared_ptr<const tfl::Program> program;
  try {
    program = load(file);
  } catch (const Error& e) {
    FAIL() << e.what();
  }

  tfl::InterpreterOptions options;
  options.isa = c.isa;
  // The PyPI interpreters that produced the fixtures round per op family (see
  // tflite/prepared_op.hpp); TICKINFER_ROUNDING=double or =single checks references from a
  // uniformly rounding TFLite build instead.
  if (const char* r = std::getenv("TICKINFER_ROUNDING"); r && *r) {
    ASSERT_TRUE(std::string(r) == "double" || std::string(r) == "single")
        << "TICKINFER_ROUNDING='" << r << "' is not double or single";
    options.tflite_mixed_rounding = false;
    options.rounding = std::string(r) == "double" ? tfl::Rounding::Double : tfl::Rounding::Single;
  }
  std::unique_ptr<tfl::Interpreter> interp;
  try {
    interp = std::make_unique<tfl::Interpreter>(program, options);
  } catch (const Error& e) {
    FAIL() << e.what();
  }

  std::vector<formats::NpyArray> inputs, expected;
  for (const auto& f : entry["input_files"]) inputs.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  for (const auto& f : entry["expected_ref_files"]) expected.push_back(formats::read_npy(dir + "/" + f.get<std::string>()));
  ASSERT_EQ(inputs.size(), interp->num_inputs());
  ASSERT_EQ(expected.size(), interp->num_outputs());
  const size_t rows = static_cast<size_t>(inputs[0].shape[0]);
  ASSERT_GE(rows, 1u);

  const double rtol = c.mode == "int8" ? 0.0 : (c.mode == "dynamic" ? 1e-4 : 1e-5);
  std::vector<double> scale(expected.size(), 0.0);
  for (size_t o = 0; o < expected.size(); ++o) {
    for (float v : expected[o].data) scale[o] = std::max(scale[o], static_cast<double>(std::fabs(v)));
    scale[o] = std::max(scale[o], 1e-6);
  }

  size_t mismatches = 0;
  double worst = 0.0;
  std::string first_mismatch;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const tfl::Tensor& t = interp->input_tensor(i);
      const size_t n = static_cast<size_t>(tfl::element_count(t.shape));
      ASSERT_EQ(inputs[i].data.size(), rows * n);
      const float* src = inputs[i].data.data() + r * n;
      void* dst = interp->input_data(i);
      if (t.type == tfl::DType::I8) {
        for (size_t k = 0; k < n; ++k) static_cast<int8_t*>(dst)[k] = static_cast<int8_t>(src[k]);
      } else {
        ASSERT_EQ(t.type, tfl::DType::F32);
        std::memcpy(dst, src, n * sizeof(float));
      }
    }
    interp->invoke();
    for (size_t o = 0; o < expected.size(); ++o) {
      const tfl::Tensor& t = interp->output_tensor(o);
      const size_t n = static_cast<size_t>(tfl::element_count(t.shape));
      ASSERT_EQ(expected[o].data.size(), rows * n);
      for (size_t k = 0; k < n; ++k) {
        const double want = expected[o].data[r * n + k];
        const double got = t.type == tfl::DType::I8 ? static_cast<const int8_t*>(interp->output_data(o))[k]
                                                      : static_cast<const float*>(interp->output_data(o))[k];
        const double err = std::fabs(got - want) / (t.type == tfl::DType::I8 ? 1.0 : scale[o]);
        worst = std::max(worst, err);
        if (!(err <= rtol)) {
          if (mismatches++ == 0) {
            first_mismatch = "row " + std::to_string(r) + " output " + std::to_string(o) + "[" + std::to_string(k) +
                             "]: got " + std::to_string(got) + ", TFLite " + std::to_string(want);
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << c.model << " " << c.mode << " (" << interp->isa() << "): " << mismatches
                            << " mismatching values over " << rows << " rows; first: " << first_mismatch
                            << "; worst error " << worst;
  RecordProperty("rows", static_cast<int>(rows));
  RecordProperty("worst_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteReference, testing::ValuesIn(cases()), case_name);

TEST(TfliteReferenceFixtures, AreThere) {
  // Guards against an empty or missing manifest silently running no case.
  EXPECT_GE(cases().size(), 30u) << fixtures_root();
}

}  // namespace
}  // namespace tickinfer
