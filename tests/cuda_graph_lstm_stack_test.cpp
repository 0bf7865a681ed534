// The CUDA backend's host side, on any machine: the graph an importer built becomes the LSTM
// stack the resident kernel runs, and the double-precision reference over that stack reproduces
// Keras's own outputs (bench/models' *.npy, written by tools/make_fixtures.py with Keras). So
// the weights the GPU receives are Keras's weights in Keras's layout. Graphs the backend does not
// run are refused by name, and --device cuda without a GPU (or without CUDA) is a clear Error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "cuda/devices.hpp"
#include "cuda/graph_lstm_stack.hpp"
#include "formats/npy.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

// The source tree as built, or $TICKINFER_SOURCE_DIR where the binary runs from another checkout
// (tools/gpu_check.sh on a GPU machine).
const std::string kModels =
    std::string(::tickinfer::test::source_dir()) +
    "/bench/models/";

// Runs the reference over X ([rows][steps][I]); one output per row (window) or per step (stream).
void expect_reference_matches_keras(const std::string& name, const std::string& x, const std::string& y, bool stream,
                                    double atol) {
  const Model model = Model::load(kModels + name + "/model.keras");
  const cuda::StackFromGraph s = cuda::lstm_stack_from_graph(model.graph());
  ASSERT_EQ(s.error, "") << name;
  const formats::NpyArray X = formats::read_npy(kModels + name + "/" + x);
  const formats::NpyArray Y = formats::read_npy(kModels + name + "/" + y);
  const int rows = int(X.shape[0]), steps = int(X.shape[1]), width = int(X.shape[2]);
  ASSERT_EQ(width, s.stack.input_width());
  if (!stream) {
    EXPECT_EQ(s.window, steps) << name;
  }
  const int out = s.stack.output_width();
  std::vector<float> got(out);
  cuda::LstmStackState state;
  size_t k = 0, checked = 0;
  for (int r = 0; r < rows; ++r) {
    cuda::reset_state(s.stack, state);
    for (int t = 0; t < (stream ? steps : 1); ++t, ++k) {
      const float* xs = X.data.data() + (size_t(r) * steps + (stream ? t : 0)) * width;
      cuda::reference_steps(s.stack, state, xs, stream ? 1 : steps, got.data());
      for (int o = 0; o < out; ++o, ++checked) {
        const double want = Y.data[k * out + o];
        EXPECT_LE(std::fabs(got[o] - want), atol + 1e-5 * std::fabs(want)) << name << " reply " << k << " output " << o;
      }
    }
  }
  EXPECT_EQ(checked, Y.data.size()) << name;
}

TEST(CudaGraphLstmStack, LstmTinyStreamMatchesKeras) {
  expect_reference_matches_keras("lstm_tiny", "stream_in.npy", "stream_out.npy", true, 1.41e-6);
}

TEST(CudaGraphLstmStack, LstmTinyWindowMatchesKeras) {
  expect_reference_matches_keras("lstm_tiny", "in0.npy", "out0.npy", false, 1.2e-6);
}

TEST(CudaGraphLstmStack, LstmWindowMatchesKerasInBothModes) {
  expect_reference_matches_keras("lstm_window", "in0.npy", "out0.npy", false, 6.88e-7);
  expect_reference_matches_keras("lstm_window", "stream_in.npy", "stream_out.npy", true, 8.01e-7);
}

TEST(CudaGraphLstmStack, RefusesWhatTheKernelDoesNotRunByName) {
  auto error_of = [](const char* name) {
    return cuda::lstm_stack_from_graph(Model::load(kModels + name + "/model.keras").graph()).error;
  };
  EXPECT_NE(error_of("gru_window").find("(GRU) is not run by the resident kernel"), std::string::npos)
      << error_of("gru_window");
  EXPECT_NE(error_of("tcn").find("(Conv1D) is not run by the resident kernel"), std::string::npos) << error_of("tcn");
  EXPECT_NE(error_of("mlp_small").find("not a sequence"), std::string::npos) << error_of("mlp_small");
  // lstm_window without its Dense layer: the kernels reply through the head, so none would come.
  Graph headless = Model::load(kModels + "lstm_window/model.keras").graph();
  while (headless.nodes.back().kind != OpKind::LSTM) headless.nodes.pop_back();
  headless.outputs = {int(headless.nodes.size()) - 1};
  EXPECT_NE(cuda::lstm_stack_from_graph(headless).error.find("ends in its last LSTM layer"), std::string::npos)
      << cuda::lstm_stack_from_graph(headless).error;
  // lstm_window with its output moved to the LSTM layer, the Dense after it left in the graph:
  // the kernel would reply with the Dense layer's outputs, not the model's.
  Graph early = Model::load(kModels + "lstm_window/model.keras").graph();
  for (int i = int(early.nodes.size()) - 1; i >= 0; --i)
    if (early.nodes[i].kind == OpKind::LSTM) {
      early.outputs = {i};
      break;
    }
  EXPECT_NE(cuda::lstm_stack_from_graph(early).error.find("output is not the last layer"), std::string::npos)
      << cuda::lstm_stack_from_graph(early).error;
}

TEST(CudaGraphLstmStack, DeviceOptionIsCheckedAndNeverFallsBackSilently) {
  const Model model = Model::load(kModels + "lstm_window/model.keras");
  CompileOptions bad;
  bad.device = "gpu";
  try {
    compile(model, bad);
    FAIL() << "device 'gpu' was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected cpu, cuda or cuda:N"), std::string::npos) << e.what();
  }
  CompileOptions far;
  far.device = "cuda:" + std::to_string(cuda::device_count());  // one past the last device
  try {
    compile(model, far);
    FAIL() << "a device that does not exist was accepted";
  } catch (const Error& e) {
    const std::string why = e.what();
    if (!cuda::built_with_cuda())
      EXPECT_NE(why.find("has no CUDA backend"), std::string::npos) << why;
    else if (cuda::device_count() == 0)
      EXPECT_NE(why.find("no CUDA device is visible"), std::string::npos) << why;
    else
      EXPECT_NE(why.find("CUDA device(s)"), std::string::npos) << why;
  }
  // The CPU plans' own options are refused on a GPU by name, never ignored.
  CompileOptions isa;
  isa.device = "cuda";
  isa.isa = "avx2";
  CompileOptions sparse;
  sparse.device = "cuda";
  sparse.sparse = SparseMode::Sparse;
  for (const auto& [o, what] : {std::pair{isa, "isa 'avx2'"}, std::pair{sparse, "block-sparse"}}) {
    try {
      compile(model, o);
      FAIL() << what << " was accepted on the GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  CompileOptions cpu;
  cpu.device = "cpu";
  EXPECT_STRNE(compile(model, cpu).isa(), "cuda-resident");
}

}  // namespace
}  // namespace tickinfer
