#include "engine/step_clock.hpp"
#include "engine/cuda_plan.hpp"

#include <limits>

#include "cuda/devices.hpp"
#include "cuda/graph_lstm_stack.hpp"
#include "cuda/resident_lstm.hpp"
#include "cuda/resident_tuning.hpp"
#include "engine/cuda_graph_plan.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "engine/program_plan.hpp"
#include "cuda/integer_runner.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

// A reply later than this means the kernel is lost (a run of lstm_tiny takes microseconds):
// run() then writes NaN, never a stale or partial result.
constexpr int64_t kReplyDeadlineNs = 1'000'000'000;

int64_t stack_flops(const cuda::LstmStack& s, int steps) {
  int64_t f = 0;
  for (const cuda::LstmLayerWeights& L : s.lstm) f += int64_t(steps) * 2 * 4 * L.units * (L.input + L.units);
  for (const cuda::DenseLayerWeights& D : s.head) f += 2 * int64_t(D.input) * D.output;
  return f;
}

int64_t stack_weight_bytes(const cuda::LstmStack& s) {
  int64_t n = 0;
  for (const cuda::LstmLayerWeights& L : s.lstm) n += int64_t(L.kernel.size() + L.recurrent.size() + L.bias.size());
  for (const cuda::DenseLayerWeights& D : s.head) n += int64_t(D.kernel.size() + D.bias.size());
  return n * int64_t(sizeof(float));
}

class CudaResidentPlan final : public PlanBackend {
 public:
  CudaResidentPlan(std::shared_ptr<const cuda::LstmStack> stack, cuda::ResidentOptions options, RecurrentMode mode,
                   std::vector<Shape> in, std::vector<Shape> out)
      : stack_(std::move(stack)), options_(std::move(options)), mode_(mode), in_(std::move(in)), out_(std::move(out)) {
    try {
      // The first plan times every shape the model fits on this card and keeps the fastest;
      // its clones start that shape directly.
      if (options_.form == "auto") {
        cuda::TunedResident tuned = cuda::start_tuned(*stack_, options_);
        kernel_ = std::move(tuned.kernel);
        options_ = tuned.chosen;
      } else {
        kernel_ = cuda::ResidentLstm::start(*stack_, options_);
      }
    } catch (const std::exception& e) {
      throw Error(std::string("--device cuda: ") + e.what());
    }
  }

  void run(const float* const* inputs, float* const* outputs) noexcept override {
    const bool reset = mode_ == RecurrentMode::Window || reset_pending_;
    reset_pending_ = false;
    if (!kernel_->run(inputs[0], reset, outputs[0], kReplyDeadlineNs))
      for (int o = 0; o < kernel_->output_width(); ++o) outputs[0][o] = std::numeric_limits<float>::quiet_NaN();
  }
  void run_rows(const float* x, int rows, float* y) noexcept override {
    run_each_row(*this, x, rows, size_t(options_.steps) * kernel_->input_width(), y, size_t(kernel_->output_width()));
  }
  void reset_state() noexcept override { reset_pending_ = true; }
  std::string reserve_rows(int) override {
    return "the CUDA resident kernel runs one row per request; the CUDA graph form runs batches "
           "(CompileOptions::cuda_form = \"graph\", --cuda-form graph)";
  }
  int reserved_rows() const noexcept override { return 0; }
  std::unique_ptr<PlanBackend> clone() const override {
    return std::make_unique<CudaResidentPlan>(stack_, options_, mode_, in_, out_);
  }
  const std::vector<Shape>& input_shapes() const override { return in_; }
  const std::vector<Shape>& output_shapes() const override { return out_; }
  RecurrentMode mode() const override { return mode_; }
  const char* isa() const override { return "cuda-resident"; }
  size_t arena_bytes() const override { return 0; }
  int64_t flops() const override { return stack_flops(*stack_, options_.steps); }
  int64_t weight_bytes() const override { return 0; }  // on chip: nothing is read from memory per run
  int64_t weight_footprint_bytes() const override { return stack_weight_bytes(*stack_); }
  // The resident kernel is one step here: the card's own time is not split per layer.
  std::vector<Plan::StepProfile> profile_steps() const override { return {{"resident kernel (whole request)", flops(), 0}}; }
  void run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept override {
    const uint64_t t0 = step_clock();
    run(inputs, outputs);
    ticks[0] = step_clock() - t0;
  }
  std::string describe() const override {
    const cuda::ResidentLayout& L = kernel_->layout();
    return "resident kernel on " + L.device_name + ": " + L.form + " form, cluster of " + std::to_string(L.cluster) +
           " blocks x " + std::to_string(L.threads) + " threads" +
           (L.lanes ? ", " + std::to_string(L.lanes) + " weights per thread per layer" : std::string()) + ", " +
           std::to_string(L.steps) + " step(s) per request, " + std::to_string(L.shared_bytes_per_block) +
           " bytes of shared memory per block\n";
  }

 private:
  std::shared_ptr<const cuda::LstmStack> stack_;
  cuda::ResidentOptions options_;
  RecurrentMode mode_;
  std::vector<Shape> in_, out_;
  std::unique_ptr<cuda::ResidentLstm> kernel_;
  bool reset_pending_ = true;
};

// Whether a --cuda-precision spec asks for fp32 everywhere ("", "fp32", "fp32/fp32,lstm=fp32"):
// what the forms without 16-bit storage (the resident LSTM kernel, int8 programs) accept.
bool asks_only_fp32(const std::string& spec) {
  if (spec.empty()) return true;
  const StorageFormats f = parse_cuda_precision(spec);
  if (!(f.all == LayerStorage{})) return false;
  for (const auto& [layer, storage] : f.by_layer)
    if (!(storage == LayerStorage{})) return false;
  return true;
}

void require_device(int device) {
  if (!cuda::built_with_cuda())
    throw Error("--device cuda: this build of tickinfer has no CUDA backend (configured without nvcc)");
  const int devices = cuda::device_count();
  if (device >= devices)
    throw Error("--device cuda:" + std::to_string(device) + ": " +
                (devices ? "this machine has " + std::to_string(devices) + " CUDA device(s)"
                         : std::string("no CUDA device is visible (no GPU or no driver)")));
}

void require_integer_options(const CompileOptions& options) {
  if (options.mode == RecurrentMode::Stream)
    throw Error("--device cuda: stream mode keeps state between calls; the CUDA integer program runs window models "
                "(an LSTM's state from zero each run)");
  // "graph" is what it runs as (serve --device cuda asks every model for the form that batches).
  if (options.cuda_form != "auto" && options.cuda_form != "graph" && !options.cuda_form.empty())
    throw Error("--cuda-form " + options.cuda_form + ": an int8 program runs as one CUDA graph of its integer ops");
  if (!asks_only_fp32(options.cuda_precision))
    throw Error("--cuda-precision " + options.cuda_precision + ": an int8 program keeps its own int8 weights");
}

}  // namespace

std::unique_ptr<PlanBackend> compile_cuda_integer(std::shared_ptr<const tfl::Program> program,
                                                  const CompileOptions& options, int device) {
  require_device(device);
  require_integer_options(options);
  return std::make_unique<ProgramPlan>(std::move(program), options,
                                       [device, choices = std::make_shared<cuda::GraphChoices>()](
                                           std::shared_ptr<const cuda::IntegerProgram> p) {
                                         return cuda::start_integer_graph(std::move(p), device, choices);
                                       });
}

std::unique_ptr<PlanBackend> compile_cuda_integer_on_host(std::shared_ptr<const tfl::Program> program,
                                                          const CompileOptions& options, bool backwards,
                                                          bool tiled_fc) {
  require_integer_options(options);
  return std::make_unique<ProgramPlan>(std::move(program), options,
                                       [backwards, tiled_fc](std::shared_ptr<const cuda::IntegerProgram> p) {
                                         return cuda::host_integer_runner(std::move(p), backwards, tiled_fc);
                                       });
}

std::unique_ptr<PlanBackend> compile_cuda(const Graph& graph, const CompileOptions& options, int device) {
  require_device(device);
  // An LSTM stack with a Dense head runs on the resident kernel; every other graph as the CUDA
  // graph form (one kernel per lowered op) or the resident program form, whichever this card
  // runs faster (engine/cuda_graph_plan.hpp).
  if (std::string e = cuda_options_error(options); !e.empty()) throw Error(e);
  if (options.cuda_form == "graph") return compile_cuda_graph(graph, options, device);
  if (options.cuda_form == "program") return compile_cuda_program(graph, options, device, 0);
  cuda::StackFromGraph s = cuda::lstm_stack_from_graph(graph);
  if (!s.error.empty()) return compile_cuda_auto(graph, options, device);
  if (!asks_only_fp32(options.cuda_precision))
    throw Error("--cuda-precision " + options.cuda_precision + ": the resident LSTM kernel keeps fp32 weights on chip; "
                "the graph and program forms store fp16/bf16 weights (--cuda-form graph or program)");
  cuda::ResidentOptions opt;
  opt.device = device;
  const bool stream = options.mode == RecurrentMode::Stream;
  const int window = s.window > 0 ? s.window : options.window_length;
  if (!stream && window <= 0)
    throw Error("--device cuda: model '" + graph.name + "' has no fixed sequence length; give a window length");
  opt.steps = stream ? 1 : window;
  const int features = s.stack.input_width();
  std::vector<Shape> in{stream ? Shape{features} : Shape{window, features}};
  std::vector<Shape> out{Shape{s.stack.output_width()}};
  return std::make_unique<CudaResidentPlan>(std::make_shared<const cuda::LstmStack>(std::move(s.stack)), opt,
                                            options.mode, std::move(in), std::move(out));
}

}  // namespace tickinfer::engine
