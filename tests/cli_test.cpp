// The `tickinfer` executable end to end, run as a subprocess on the bundled bench models:
// predict output against Keras' own outputs (from the fixture script), bench --json keys,
// inspect's table, and exit codes/messages for errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cuda/devices.hpp"
#include "formats/csv.hpp"
#include "formats/npy.hpp"
#include "support/tflite_file.hpp"
#include "support/source_paths.hpp"

namespace {

using tickinfer::formats::NpyArray;

const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";
const std::string kModels = std::string(::tickinfer::test::source_dir()) + "/bench/models";

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tickinfer_cli_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::ifstream manifest_file(kModels + "/manifest.json");
    ASSERT_TRUE(manifest_file) << "missing " << kModels << "/manifest.json";
    manifest_ = nlohmann::json::parse(manifest_file);
  }
  void TearDown() override { std::system(("rm -rf " + quote(dir_)).c_str()); }

  Result run(const std::string& args) const {
    const std::string out = dir_ + "/stdout.txt", err = dir_ + "/stderr.txt";
    const std::string cmd = quote(kBinary) + " " + args + " >" + quote(out) + " 2>" + quote(err);
    const int status = std::system(cmd.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  const nlohmann::json& model_case(const std::string& name) const {
    for (const auto& c : manifest_.at("cases")) {
      if (c.at("name") == name) return c;
    }
    ADD_FAILURE() << "no case " << name << " in the manifest";
    static const nlohmann::json empty;
    return empty;
  }
  std::string model_path(const std::string& name) const {
    return kModels + "/" + model_case(name).at("file").get<std::string>();
  }
  std::string fixture(const std::string& relative) const { return kModels + "/" + relative; }
  std::string temp(const std::string& file) const { return dir_ + "/" + file; }

  std::string dir_;
  nlohmann::json manifest_;
};

// |got - want| <= atol + rtol * |want| elementwise, the manifest's criterion.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol, double atol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), atol + rtol * std::fabs(want[i]))
        << "index " << i << ": got " << got[i] << ", Keras " << want[i];
  }
}

TEST_F(CliTest, PredictToNpyMatchesKeras) {
  const auto& c = model_case("mlp_small");
  const std::string out = temp("out.npy");
  const auto r = run("predict " + quote(model_path("mlp_small")) + " --input " +
                     quote(fixture(c["inputs"][0])) + " --output " + quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const NpyArray got = tickinfer::formats::read_npy(out);
  const NpyArray want = tickinfer::formats::read_npy(fixture(c["outputs"][0]));
  EXPECT_EQ(got.shape, want.shape);
  expect_close(got.data, want.data, c["rtol"], c["atol"]);
}

TEST_F(CliTest, PredictCsvInAndOutMatchesKeras) {
  const auto& c = model_case("mlp_small");
  const NpyArray in = tickinfer::formats::read_npy(fixture(c["inputs"][0]));
  ASSERT_EQ(in.shape.size(), 2u);
  // A CSV with a header row, as a spreadsheet or pandas would write it.
  std::vector<std::string> header;
  for (int64_t j = 0; j < in.shape[1]; ++j) {
    std::string name = "feature_";
    name += std::to_string(j);
    header.push_back(std::move(name));
  }
  tickinfer::formats::write_csv(temp("in.csv"), static_cast<size_t>(in.shape[0]),
                                static_cast<size_t>(in.shape[1]), in.data, header);
  const auto r = run("predict " + quote(model_path("mlp_small")) + " --input " + quote(temp("in.csv")) +
                     " --output " + quote(temp("out.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = tickinfer::formats::read_csv(temp("out.csv"));
  const NpyArray want = tickinfer::formats::read_npy(fixture(c["outputs"][0]));
  EXPECT_EQ(static_cast<int64_t>(got.rows), want.shape[0]);
  expect_close(got.values, want.data, c["rtol"], c["atol"]);
}

TEST_F(CliTest, PredictStreamModeMatchesKerasOnEveryPrefix) {
  const auto& c = model_case("lstm_tiny");
  ASSERT_TRUE(c.at("stream").is_object());
  // stream_in is [B, T, features]: B sequences, state reset at each; Keras' output per tick.
  const auto r = run("predict " + quote(model_path("lstm_tiny")) + " --mode stream --input " +
                     quote(fixture(c["stream"]["inputs"])) + " --output " + quote(temp("stream.npy")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const NpyArray got = tickinfer::formats::read_npy(temp("stream.npy"));
  const NpyArray want = tickinfer::formats::read_npy(fixture(c["stream"]["outputs"]));
  EXPECT_EQ(got.shape, want.shape);
  expect_close(got.data, want.data, c["rtol"], c["stream"]["atol"]);
}

TEST_F(CliTest, BenchJsonHasEveryKeyInOrder) {
  const auto r = run("bench " + quote(model_path("mlp_small")) +
                     " --json --floor --seconds 0.2 --warmup-seconds 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one JSON object on stdout
  for (const char* key : {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns", "runs", "model",
                          "mode", "isa", "cpu", "timer_overhead_ns", "flops", "weight_bytes",
                          "compute_floor_ns"}) {
    EXPECT_TRUE(j.contains(key)) << key << " missing in " << r.out;
  }
  EXPECT_GT(j["runs"].get<int64_t>(), 0);
  EXPECT_GT(j["p50_ns"].get<int64_t>(), 0);
  EXPECT_LE(j["p50_ns"].get<int64_t>(), j["p90_ns"].get<int64_t>());
  EXPECT_LE(j["p90_ns"].get<int64_t>(), j["p99_ns"].get<int64_t>());
  EXPECT_LE(j["p99_ns"].get<int64_t>(), j["p999_ns"].get<int64_t>());
  EXPECT_LE(j["p999_ns"].get<int64_t>(), j["max_ns"].get<int64_t>());
  EXPECT_EQ(j["mode"], "window");
  EXPECT_EQ(j["flops"], 23104);  // mlp_small: 2 * (10*128 + 128*64 + 64*32 + 32*1)
}

// --slide slides every window input by one row per run and holds an input that is no window (a
// decoder's start token beside the snapshot window) fixed; a model without a window is refused.
TEST_F(CliTest, BenchSlideHoldsInputsThatAreNoWindow) {
  const std::string two_inputs =
      std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/deeplob_seq2seq_tiny_k3/model.keras";
  for (const char* inc : {"", " --incremental"}) {
    const auto r = run("bench " + quote(two_inputs) + " --slide --json --seconds 0.1 --warmup-seconds 0.02" + inc);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(nlohmann::json::parse(r.out)["runs"].get<int64_t>(), 0);
  }
  const auto r = run("bench " + quote(model_path("mlp_small")) + " --slide --seconds 0.1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no input is a window"), std::string::npos) << r.err;
}

TEST_F(CliTest, InspectPrintsTheLayerTableAndPlan) {
  const auto r = run("inspect " + quote(model_path("mlp_small")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"layer", "class", "params", "FLOPs", "weight bytes", "dense_1", "Dense", "total",
                           "11777", "plan", "arena"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << "'" << text << "' missing in:\n" << r.out;
  }
  const auto j = run("inspect --json " + quote(model_path("mlp_small")));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed["totals"]["params"], 11777);
  EXPECT_EQ(parsed["inputs"][0]["shape"], nlohmann::json::array({10}));
  EXPECT_TRUE(parsed["plan"].contains("isa"));
}

TEST_F(CliTest, InspectSaysWhichEngineRunsATfliteFile) {
  const std::string tfl = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/";
  const auto lifted = run("inspect " + quote(tfl + "tcn/float.tflite"));
  ASSERT_EQ(lifted.exit_code, 0) << lifted.err;
  EXPECT_NE(lifted.out.find("engine   graph compiler, lifted from the TFLite program"), std::string::npos) << lifted.out;
  EXPECT_NE(lifted.out.find("PAD #0 + RESHAPE #1 + CONV_2D #2"), std::string::npos) << lifted.out;
  const auto refused = run("inspect --json " + quote(tfl + "lnorm/float.tflite"));
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  const auto j = nlohmann::json::parse(refused.out);
  EXPECT_EQ(j["engine"], "interpreter");
  EXPECT_NE(j["engine_note"].get<std::string>().find("SQUARED_DIFFERENCE"), std::string::npos) << j["engine_note"];
  // The escape hatch (inherited by the command): the same file on the interpreter.
  const auto hatch = run("inspect --json --tflite-engine interpreter " + quote(tfl + "tcn/float.tflite"));
  ASSERT_EQ(hatch.exit_code, 0) << hatch.err;
  EXPECT_EQ(nlohmann::json::parse(hatch.out)["engine"], "interpreter");
  EXPECT_EQ(nlohmann::json::parse(hatch.out)["engine_note"], "--tflite-engine interpreter");
  const auto bad = run("inspect --tflite-engine fastest " + quote(tfl + "tcn/float.tflite"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;  // a usage error, naming the value
  EXPECT_NE(bad.err.find("'fastest'"), std::string::npos) << bad.err;
}

TEST_F(CliTest, MissingFileIsAnErrorNamingIt) {
  const auto r = run("predict " + quote(temp("nope.keras")) + " --input x.npy --output y.npy");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tickinfer: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nope.keras"), std::string::npos) << r.err;

  const auto r2 = run("predict " + quote(model_path("mlp_small")) + " --input " + quote(temp("missing.npy")) +
                      " --output " + quote(temp("o.npy")));
  EXPECT_EQ(r2.exit_code, 1);
  EXPECT_NE(r2.err.find("missing.npy"), std::string::npos) << r2.err;
}

TEST_F(CliTest, WrongInputShapeNamesExpectedAndGot) {
  tickinfer::formats::write_npy(temp("bad.npy"), {4, 7}, std::vector<float>(28, 0.5f));
  const auto r = run("predict " + quote(model_path("mlp_small")) + " --input " + quote(temp("bad.npy")) +
                     " --output " + quote(temp("o.npy")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("expected shape [N, 10]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("got [4, 7]"), std::string::npos) << r.err;
}

TEST_F(CliTest, NonFiniteRowIsRefusedUnlessAllowed) {
  const auto& c = model_case("mlp_small");
  NpyArray in = tickinfer::formats::read_npy(fixture(c["inputs"][0]));
  in.data[3 * 10 + 2] = std::nanf("");
  tickinfer::formats::write_npy(temp("nan.npy"), in.shape, in.data);
  const std::string args = "predict " + quote(model_path("mlp_small")) + " --input " + quote(temp("nan.npy")) +
                           " --output " + quote(temp("o.npy"));
  const auto r = run(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("row 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-nonfinite"), std::string::npos) << r.err;

  const auto allowed = run(args + " --allow-nonfinite");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  const NpyArray out = tickinfer::formats::read_npy(temp("o.npy"));
  const NpyArray want = tickinfer::formats::read_npy(fixture(c["outputs"][0]));
  ASSERT_EQ(out.data.size(), want.data.size());
  EXPECT_FLOAT_EQ(out.data[0], want.data[0]);  // other rows are unaffected
}

TEST_F(CliTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  const auto r = run("bench " + quote(model_path("mlp_small")) + " --no-such-option");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
  EXPECT_EQ(run("bench " + quote(model_path("mlp_small")) + " --mode sideways").exit_code, 2);
  EXPECT_EQ(run("bench " + quote(model_path("mlp_small")) + " --seconds abc").exit_code, 2);
  EXPECT_EQ(run("predict").exit_code, 2);
}

// --device cuda where it cannot run: refused by name, after the same option checks in every build
// (a typo in --cuda-precision is a usage error with or without the backend).
TEST_F(CliTest, DeviceCudaIsRefusedByNameWhereItCannotRun) {
  if (tickinfer::cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is visible: --device cuda runs here";
  const std::string model = quote(model_path("mlp_small")), x = quote(fixture("mlp_small/in0.npy"));
  const std::string out = " --output " + quote(temp("cuda_out.npy"));
  const auto r = run("predict " + model + " --input " + x + out + " --device cuda");
  ASSERT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device cuda"), std::string::npos) << r.err;
#if !TICKINFER_CUDA_BACKEND
  EXPECT_NE(r.err.find("no CUDA backend"), std::string::npos) << r.err;
  const auto report = run("cuda-precision " + model + " --input " + x);
  EXPECT_NE(report.exit_code, 0);
  EXPECT_NE(report.err.find("no CUDA backend"), std::string::npos) << report.err;
#endif
  const auto bad = run("predict " + model + " --input " + x + out + " --device cuda --cuda-precision fp8");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("fp8"), std::string::npos) << bad.err;
}

#if TICKINFER_CUDA_BACKEND  // the report runs the backend's step bodies on the host
// `tickinfer cuda-precision` on any machine: the per-layer table, the spec line a plan command
// takes back (checked by compiling it), and its usage errors.
TEST_F(CliTest, CudaPrecisionPrintsTheTableAndASpecThePlanOptionsTake) {
  const std::string model = quote(model_path("mlp_small")), x = quote(fixture("mlp_small/in0.npy"));
  const auto r = run("cuda-precision " + model + " --input " + x + " --max-error 1e-3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"fp16", "bf16", "out fp16", "out bf16", "dense_1", "chosen within 0.001", "output tensors"})
    EXPECT_NE(r.out.find(text), std::string::npos) << "'" << text << "' missing in:\n" << r.out;
  const size_t at = r.out.find("--cuda-precision ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string spec = r.out.substr(at + 17, r.out.find('\n', at) - at - 17);
  EXPECT_EQ(run("inspect " + model + " --cuda-precision " + quote(spec)).exit_code, 0) << spec;
  EXPECT_EQ(run("cuda-precision " + model).exit_code, 2);  // no --input
  const auto bad = run("inspect " + model + " --cuda-precision fp8");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("fp8"), std::string::npos) << bad.err;
}
#endif

TEST_F(CliTest, VersionAndHelpSucceed) {
  const auto v = run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("tickinfer ", 0), 0u) << v.out;
  const auto h = run("help");
  EXPECT_EQ(h.exit_code, 0);
  for (const char* cmd : {"inspect", "predict", "bench"}) EXPECT_NE(h.out.find(cmd), std::string::npos);
  const auto hb = run("help bench");
  EXPECT_EQ(hb.exit_code, 0);
  EXPECT_NE(hb.out.find("--peak-gflops"), std::string::npos) << hb.out;
}

}  // namespace

namespace {

TEST_F(CliTest, PredictExpectAgreesWithKerasAndCatchesADifference) {
  const auto& c = model_case("mlp_small");
  const std::string base = "predict " + quote(model_path("mlp_small")) + " --input " +
                           quote(fixture(c["inputs"][0])) + " --output " + quote(temp("o.npy"));
  const auto ok = run(base + " --expect " + quote(fixture(c["outputs"][0])));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("agrees with"), std::string::npos) << ok.out;

  // A reference nudged by 1e-3 in one value must be caught and named.
  NpyArray off = tickinfer::formats::read_npy(fixture(c["outputs"][0]));
  off.data[3] += 1e-3f;
  tickinfer::formats::write_npy(temp("off.npy"), off.shape, off.data);
  const auto bad = run(base + " --expect " + quote(temp("off.npy")));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("flat index 3"), std::string::npos) << bad.err;

  // A reference of the wrong size is an error, not a comparison.
  const auto wrong = run(base + " --expect " + quote(fixture(c["inputs"][0])));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("--expect"), std::string::npos) << wrong.err;
}


// --rounding picks how a TFLite model's int8 requantization rounds. The Zen 4 repro
// (tests/fixtures/pruned_repro) runs its two sparse-stored FULLY_CONNECTEDs on TFLite's sparse
// kernel, which rounds twice, and its last, dense one in double precision: the default (as the
// PyPI interpreters) gives TFLite's rows; rounding everything twice misses one output by a step
// (the last layer's), once misses two (the sparse layers'); a value that is none of the three is
// refused by name.
TEST_F(CliTest, RoundingOptionChoosesTheTfliteBuildsArithmetic) {
  const std::string dir = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pruned_repro/sparse-int8-fc";
  const tickinfer::tfl::Program p = tickinfer::test::load_tflite_file(dir + "/mlp_block16_int8.tflite");
  const auto& in_q = p.tensors[static_cast<size_t>(p.inputs[0])].quant;
  const auto& out_q = p.tensors[static_cast<size_t>(p.outputs[0])].quant;
  // The int8 rows as the floats that quantize back to them, and TFLite's int8 outputs dequantized.
  NpyArray codes = tickinfer::formats::read_npy(dir + "/mlp_block16_int8_inputs.npy");
  std::vector<float> x(codes.data.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = (codes.data[i] - static_cast<float>(in_q.zero_point[0])) * in_q.scale[0];
  const std::string in = temp("in.npy");
  tickinfer::formats::write_npy(in, codes.shape, x);
  const NpyArray want = tickinfer::formats::read_npy(dir + "/expected_mlp_block16_int8.npy");
  auto steps_off = [&](const std::string& rounding) {
    const std::string out = temp("out_" + rounding + ".npy");
    const auto r = run("predict " + quote(dir + "/mlp_block16_int8.tflite") + " --input " + quote(in) + " --output " +
                       quote(out) + " --rounding " + rounding);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const NpyArray got = tickinfer::formats::read_npy(out);
    int off = 0;
    for (size_t i = 0; i < want.data.size() && i < got.data.size(); ++i) {
      const float tflite = (want.data[i] - static_cast<float>(out_q.zero_point[0])) * out_q.scale[0];
      off += std::fabs(got.data[i] - tflite) > 0.5f * out_q.scale[0];
    }
    return off;
  };
  EXPECT_EQ(steps_off("tflite"), 0);
  EXPECT_EQ(steps_off("double"), 1);
  EXPECT_EQ(steps_off("single"), 2);
  const auto bad = run("predict " + quote(dir + "/mlp_block16_int8.tflite") + " --input " + quote(in) + " --output " +
                       quote(temp("bad.npy")) + " --rounding half");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("'half'"), std::string::npos) << bad.err;
}

}  // namespace
