// `tickinfer quantize` as a subprocess: the per-layer table and the file it writes, which
// `tickinfer predict` then runs; the answers are checked against Keras' own outputs for the same
// inputs (bench/models/mlp_small/out0.npy from tools/make_fixtures.py). Usage mistakes exit 2,
// bad data exits 1 with a message naming the file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "formats/npy.hpp"
#include "formats/tkq/tkq_file.hpp"
#include "tflite/interpreter.hpp"
#include "support/source_paths.hpp"

namespace {

const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";
const std::string kModels = std::string(::tickinfer::test::source_dir()) + "/bench/models";

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class QuantizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tickinfer_quantize_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result run(const std::string& args) const {
    const std::string out = dir_ + "/stdout.txt", err = dir_ + "/stderr.txt";
    const int status = std::system((kBinary + " " + args + " >" + out + " 2>" + err).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  std::string temp(const std::string& f) const { return dir_ + "/" + f; }
  std::string dir_;
};

TEST_F(QuantizeCli, Int8TableFileAndPredictions) {
  const std::string model = kModels + "/mlp_small/model.keras", data = kModels + "/mlp_small/in0.npy";
  const Result r = run("quantize " + model + " --calibration " + data + " -o " + temp("m.tkq") + " --mode int8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* layer : {"dense ", "dense_1 ", "dense_2 ", "dense_3 "}) {
    EXPECT_NE(r.out.find(std::string(layer)), std::string::npos) << layer << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("int8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max rel err"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + temp("m.tkq")), std::string::npos) << r.out;

  const Result p = run("predict " + temp("m.tkq") + " --input " + data + " --output " + temp("y.npy"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto got = tickinfer::formats::read_npy(temp("y.npy"));
  const auto want = tickinfer::formats::read_npy(kModels + "/mlp_small/out0.npy");
  ASSERT_EQ(got.data.size(), want.data.size());
  // predict runs exactly the program in the file...
  tickinfer::tfl::Interpreter interp(std::make_shared<const tickinfer::tfl::Program>(
      tickinfer::formats::load_tkq_file(temp("m.tkq"))));
  const auto in = tickinfer::formats::read_npy(data);
  const size_t rows = static_cast<size_t>(in.shape[0]), n = in.data.size() / rows;
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(interp.input_data(0), in.data.data() + r * n, n * sizeof(float));
    interp.invoke();
    EXPECT_EQ(got.data[r], *static_cast<const float*>(interp.output_data(0))) << "row " << r;
  }
  // ...and that program is Keras' model in int8: calibrated on these 8 rows only, its
  // pre-sigmoid int8 step is coarse (the table prints the worst error, 0.044 when written).
  for (size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 0.06) << i;
}

TEST_F(QuantizeCli, AutoModePrintsItsDecisions) {
  const std::string model = kModels + "/mlp_small/model.keras", data = kModels + "/mlp_small/in0.npy";
  const Result r = run("quantize " + model + " --calibration " + data + " -o " + temp("m.tkq") +
                       " --mode auto --max-error 0.000001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("auto: layer '"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(temp("m.tkq")));
  // The measured pass: the written file against the source model's fp32 plan, same run.
  EXPECT_NE(r.out.find("auto: on tickinfer's plans (same run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the source model in fp32"), std::string::npos) << r.out;
}

// A loose bound leaves every Dense quantized; the measured pass then times each against fp32.
TEST_F(QuantizeCli, AutoModeTimesEachQuantizedLayerAgainstFp32) {
  const std::string model = kModels + "/mlp_small/model.keras", data = kModels + "/mlp_small/in0.npy";
  const Result r = run("quantize " + model + " --calibration " + data + " -o " + temp("m.tkq") +
                       " --mode auto --max-error 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* layer : {"'dense' ", "'dense_1' ", "'dense_2' "}) {
    const size_t at = r.out.find(std::string("auto: layer ") + layer);
    ASSERT_NE(at, std::string::npos) << layer << "\n" << r.out;
    EXPECT_NE(r.out.find("vs fp32, the whole model timed in one run", at), std::string::npos) << r.out;
  }
}

TEST_F(QuantizeCli, Bf16ModeKeepsKerasOutputsToBf16Precision) {
  // bf16 weights (8 significant bits), fp32 activations and sums: every Dense becomes bf16 and
  // the outputs stay within bf16's relative rounding (2^-8 per weight, accumulated) of Keras'.
  const std::string model = kModels + "/mlp_small/model.keras", data = kModels + "/mlp_small/in0.npy";
  const Result r = run("quantize " + model + " --calibration " + data + " -o " + temp("b.tkq") + " --mode bf16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bf16"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("int8 "), std::string::npos) << r.out;
  const Result p = run("predict " + temp("b.tkq") + " --input " + data + " --output " + temp("y.npy"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto got = tickinfer::formats::read_npy(temp("y.npy"));
  const auto want = tickinfer::formats::read_npy(kModels + "/mlp_small/out0.npy");
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 0.01) << i;
  // Half the bytes of the fp32 weights (plus the program record).
  EXPECT_LT(std::filesystem::file_size(temp("b.tkq")), std::filesystem::file_size(model) * 6 / 10);
}

// A GRU model end to end: int8 mode makes the GRU int8-dynamic and says why; bf16 mode asked for
// no int8, so it prints no such note; each mode's GRU arithmetic is said (own in int8 and bf16,
// the converter's in dynamic, or what --gru-arithmetic asks) and is what `inspect` shows the file
// holds; predict runs every file within its bound of Keras.
TEST_F(QuantizeCli, GruModelInEveryModeAndArithmetic) {
  const std::string model = kModels + "/gru_window/model.keras", data = kModels + "/gru_window/in0.npy";
  const auto want = tickinfer::formats::read_npy(kModels + "/gru_window/out0.npy");
  const struct {
    std::string mode, flag;
    bool own;
  } cases[] = {{"int8", "", true}, {"bf16", "", true}, {"dynamic", "", false}, {"dynamic", "own", true}, {"int8", "exact", false}};
  for (const auto& c : cases) {
    const std::string mode = c.mode, name = c.mode + c.flag;
    const Result r = run("quantize " + model + " --calibration " + data + " -o " + temp(name + ".tkq") + " --mode " + mode +
                         (c.flag.empty() ? "" : " --gru-arithmetic " + c.flag));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(mode == "bf16" ? "gru                      bf16" : "gru                      int8-dynamic"),
              std::string::npos) << r.out;
    const bool noted = r.out.find("note: layer 'gru' is not int8: GRU has no full-integer form") != std::string::npos;
    EXPECT_EQ(noted, mode == "int8") << r.out;
    EXPECT_NE(r.out.find(c.own ? "note: GRU 'gru' runs in tickinfer's own arithmetic"
                               : "note: GRU 'gru' runs in the TFLite converter's arithmetic"),
              std::string::npos) << r.out;
    const Result i = run("inspect " + temp(name + ".tkq"));
    ASSERT_EQ(i.exit_code, 0) << i.err;
    EXPECT_EQ(i.out.find("SEQUENCE_GRU own arithmetic") != std::string::npos, c.own) << i.out;
    const Result p = run("predict " + temp(name + ".tkq") + " --input " + data + " --output " + temp(name + ".npy"));
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto got = tickinfer::formats::read_npy(temp(name + ".npy"));
    ASSERT_EQ(got.data.size(), want.data.size());
    for (size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 0.02) << mode << " " << i;
  }
}

// --stream: the GRU model lowered one step per call, calibrated on ticks in order, its file [1, 10]
// in, running in `bench --mode stream`; a model with no sequence input, a TFLite file and
// --reset-state are refused by name. The file says it is stream only (inspect), compiles in stream
// mode where --mode is not given, and refuses --mode window by name. (Tick-by-tick outputs against
// Keras: quant_gru_own_arithmetic_test, quant_stream_file_test.)
TEST_F(QuantizeCli, StreamLowersOneStepPerCall) {
  const auto windows = tickinfer::formats::read_npy(kModels + "/gru_window/in0.npy");  // [8, 32, 10]
  ASSERT_EQ(windows.shape.size(), 3u);
  tickinfer::formats::write_npy(temp("ticks.npy"), {windows.shape[0] * windows.shape[1], windows.shape[2]}, windows.data);
  const std::string model = kModels + "/gru_window/model.keras";
  Result r = run("quantize " + model + " --stream --calibration " + temp("ticks.npy") + " -o " + temp("s.tkq"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibration: 256 samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: GRU 'gru' runs in tickinfer's own arithmetic"), std::string::npos) << r.out;
  r = run("inspect " + temp("s.tkq"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("inputs   input_layer [1, 10]"), std::string::npos) << r.out;
  // The file says it was made for stream mode, and compiles in it where --mode is not given.
  EXPECT_NE(r.out.find("calls    one tick each, the state carried (quantized with --stream): stream mode only"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mode stream"), std::string::npos) << r.out;
  // The windows themselves, [8, 32, 10], are the same 256 ticks.
  r = run("quantize " + model + " --stream --calibration " + kModels + "/gru_window/in0.npy -o " + temp("w.tkq"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibration: 256 samples"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(temp("w.tkq")), slurp(temp("s.tkq")));
  r = run("bench " + temp("s.tkq") + " --mode stream --seconds 0.2 --warmup-seconds 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("p50"), std::string::npos) << r.out;
  r = run("bench " + temp("s.tkq") + " --seconds 0.2 --warmup-seconds 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plan     mode stream"), std::string::npos) << r.out;
  // Window mode asked for by name: every call would start from a zero state.
  r = run("bench " + temp("s.tkq") + " --mode window --seconds 0.2 --warmup-seconds 0.05");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("quantized one tick per call for stream mode (`tickinfer quantize --stream`)"), std::string::npos)
      << r.err;

  r = run("quantize " + model + " --stream --calibration " + kModels + "/lstm_tiny/in0.npy -o " + temp("x.tkq"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--stream takes ticks [N, 10] or windows [N, T, 10]; this array's last axis is 128"),
            std::string::npos) << r.err;
  r = run("quantize " + model + " --stream --reset-state --calibration " + temp("ticks.npy") + " -o " + temp("x.tkq"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--reset-state would zero it every tick"), std::string::npos) << r.err;
  r = run("quantize " + kModels + "/mlp_small/model.keras --stream --calibration " + kModels + "/mlp_small/in0.npy -o " +
          temp("x.tkq"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stream mode needs a sequence input"), std::string::npos) << r.err;
  const std::string tflite = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/gru_wide/float.tflite";
  r = run("quantize " + tflite + " --stream --calibration " + temp("ticks.npy") + " -o " + temp("x.tkq"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a .tflite or .tkq file's time length is fixed"), std::string::npos) << r.err;
}

TEST_F(QuantizeCli, UsageAndDataErrors) {
  const std::string model = kModels + "/mlp_small/model.keras";
  Result r = run("quantize " + model + " -o " + temp("m.tkq"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--calibration"), std::string::npos) << r.err;
  r = run("quantize " + model + " --calibration " + kModels + "/mlp_small/in0.npy -o " + temp("m.tkq") + " --mode int4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--mode"), std::string::npos) << r.err;
  r = run("quantize " + model + " --calibration " + kModels + "/mlp_small/in0.npy -o " + temp("m.tkq") +
          " --gru-arithmetic fast");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gru-arithmetic must be exact or own, got 'fast'"), std::string::npos) << r.err;
  // lstm_tiny's input as mlp_small calibration: the wrong shape, named with the file.
  const std::string wrong = kModels + "/lstm_tiny/in0.npy";
  r = run("quantize " + model + " --calibration " + wrong + " -o " + temp("m.tkq"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(wrong), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("samples must be shaped [N, 10]"), std::string::npos) << r.err;
}

}  // namespace
