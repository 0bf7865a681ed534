#include "engine/cuda_graph_plan.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>
#include <limits>

#include "cuda/device_runner.hpp"
#include "cuda/form_choice.hpp"
#include "engine/cuda_program_lowering.hpp"
#include "engine/step_clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

using StartRunner = ProgramStart;

class CudaGraphPlan final : public PlanBackend {
 public:
  CudaGraphPlan(std::shared_ptr<const cuda::DeviceProgram> program, StartRunner start, RecurrentMode mode,
                std::vector<Shape> in, std::vector<Shape> out, const char* isa, std::string choice = {},
                std::unique_ptr<cuda::ProgramRunner> started = nullptr)
      : program_(std::move(program)), start_(std::move(start)), mode_(mode), in_(std::move(in)), out_(std::move(out)),
        isa_(isa), choice_(std::move(choice)), runner_(std::move(started)) {
    if (runner_) return;  // the form choice started it already
    try {
      runner_ = start_(program_);
    } catch (const std::exception& e) {
      throw Error(std::string("--device cuda: ") + e.what());
    }
  }

  void run(const float* const* inputs, float* const* outputs) noexcept override {
    const bool reset = reset_pending_;
    reset_pending_ = false;
    if (runner_->run(inputs, outputs, reset)) return;
    for (size_t o = 0; o < out_.size(); ++o)  // a failed device gives NaN, never stale outputs
      std::fill(outputs[o], outputs[o] + shape_size(out_[o]), std::numeric_limits<float>::quiet_NaN());
    reset_pending_ = reset;
  }
  // Batched: slices of the reservation, each one graph launch over its rows (every row of a step
  // side by side in the grid); a failed slice gives NaN rows.
  void run_rows(const float* x, int rows, float* y) noexcept override {
    const size_t in = static_cast<size_t>(shape_size(in_[0])), out = static_cast<size_t>(shape_size(out_[0]));
    if (max_rows_ == 0) return run_each_row(*this, x, rows, in, y, out);
    for (int r = 0; r < rows; r += max_rows_) {
      const int n = std::min(max_rows_, rows - r);
      float* yr = y + static_cast<size_t>(r) * out;
      if (!runner_->run_rows(x + static_cast<size_t>(r) * in, n, yr))
        std::fill(yr, yr + static_cast<size_t>(n) * out, std::numeric_limits<float>::quiet_NaN());
    }
  }
  void reset_state() noexcept override { reset_pending_ = true; }
  std::string reserve_rows(int max_rows) override {
    std::string why = runner_->reserve_rows(max_rows);
    if (!why.empty()) {
      max_rows_ = 0;  // a failed reservation may have released the one before: rows one at a time
      return "--device cuda: " + why;
    }
    max_rows_ = max_rows;
    return why;
  }
  int reserved_rows() const noexcept override { return max_rows_; }
  std::unique_ptr<PlanBackend> clone() const override {
    return std::make_unique<CudaGraphPlan>(program_, start_, mode_, in_, out_, isa_, choice_);
  }
  const std::vector<Shape>& input_shapes() const override { return in_; }
  const std::vector<Shape>& output_shapes() const override { return out_; }
  RecurrentMode mode() const override { return mode_; }
  const char* isa() const override { return isa_; }
  size_t arena_bytes() const override { return 0; }  // on the device
  int64_t flops() const override { return 2 * device_program_macs(*program_); }
  int64_t weight_bytes() const override { return int64_t(program_->weights.size() * sizeof(float)); }
  int64_t weight_footprint_bytes() const override { return weight_bytes(); }
  std::vector<Plan::StepProfile> profile_steps() const override { return {{"CUDA graph (whole run)", flops(), 0}}; }
  void run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept override {
    const uint64_t t0 = step_clock();
    run(inputs, outputs);
    ticks[0] = step_clock() - t0;
  }
  std::string describe() const override {
    std::string d = runner_->describe() + "\n" + (choice_.empty() ? std::string() : choice_ + "\n");
    for (size_t i = 0; i < program_->steps.size(); ++i)
      d += "  step " + std::to_string(i) + ": " + program_->labels[i] +
           (cuda::runs_as_one_block(program_->steps[i]) ? " (one block)" : "") + "\n";
    return d;
  }

 private:
  std::shared_ptr<const cuda::DeviceProgram> program_;
  StartRunner start_;
  RecurrentMode mode_;
  std::vector<Shape> in_, out_;
  const char* isa_;
  std::string choice_;  // describe(): what the form choice measured ("" when the form was asked for)
  std::unique_ptr<cuda::ProgramRunner> runner_;
  bool reset_pending_ = true;  // the first run starts from zero state
  int max_rows_ = 0;           // run_rows' reservation (0: one run() per row)
};

struct LoweredProgram {
  std::shared_ptr<const cuda::DeviceProgram> program;
  std::vector<Shape> in, out;
};

LoweredProgram lower_program(const Graph& graph, const CompileOptions& options) {
  const LoweredGraph lowered = lower_for_plan(graph, options);
  auto program = std::make_shared<const cuda::DeviceProgram>(
      device_program_from(lowered, graph.name, parse_cuda_precision(options.cuda_precision)));
  if (std::string e = cuda::program_error(*program); !e.empty())
    throw Error("--device cuda: model '" + graph.name + "': " + e);
  return {std::move(program), lowered.input_shapes, lowered.output_shapes};
}

std::unique_ptr<PlanBackend> compile_program(const Graph& graph, const CompileOptions& options, StartRunner start,
                                             const char* isa) {
  LoweredProgram l = lower_program(graph, options);
  return std::make_unique<CudaGraphPlan>(std::move(l.program), std::move(start), options.mode, std::move(l.in),
                                         std::move(l.out), isa);
}

StartRunner graph_start(int device) {
  // What the first runner times on the card (its launch variants), shared by the plan and its clones.
  return [device, choices = std::make_shared<cuda::GraphChoices>()](std::shared_ptr<const cuda::DeviceProgram> p) {
    return cuda::start_graph_runner(std::move(p), device, choices);
  };
}

StartRunner program_start(int device, int cluster) {
  // Shared by the plan and its clones: 0 until the first start has timed the sizes.
  auto chosen = std::make_shared<int>(cluster);
  return [device, chosen](std::shared_ptr<const cuda::DeviceProgram> p) -> std::unique_ptr<cuda::ProgramRunner> {
    if (*chosen > 0) return cuda::start_resident_program(std::move(p), device, *chosen);
    // One size at a time (started, held to the host's reply to the probe request, timed,
    // stopped), so the timing never holds more than one cluster's multiprocessors, and a size
    // whose kernel answers wrongly is never kept (the sizes run different code: one block takes
    // block barriers, and the items split differently).
    const cuda::ProgramIo want = cuda::host_probe_reply(p);
    double best = -1;
    std::string why;
    for (int c : {16, 8, 4, 2, 1}) {
      try {
        auto runner = cuda::start_resident_program(p, device, c);
        if (std::string e = cuda::probe_error(*runner, *p, want, "host's run"); !e.empty())
          throw std::runtime_error("cluster of " + std::to_string(c) + ": " + e);
        cuda::ProgramIo io(*p, 0.1f);
        const double t = cuda::median_request_us(*runner, io, 200, 0.1);
        if (t >= 0 && (best < 0 || t < best)) best = t, *chosen = c;
      } catch (const std::exception& e) {
        if (why.empty()) why = e.what();
      }
    }
    if (best < 0) throw std::runtime_error("no cluster size answered" + (why.empty() ? std::string() : ": " + why));
    return cuda::start_resident_program(std::move(p), device, *chosen);
  };
}

}  // namespace

std::unique_ptr<PlanBackend> compile_cuda_graph(const Graph& graph, const CompileOptions& options, int device) {
  return compile_program(graph, options, graph_start(device), "cuda-graph");
}

std::unique_ptr<PlanBackend> compile_cuda_program(const Graph& graph, const CompileOptions& options, int device,
                                                  int cluster) {
  return compile_program(graph, options, program_start(device, cluster), "cuda-program");
}

std::unique_ptr<PlanBackend> compile_cuda_choosing(const Graph& graph, const CompileOptions& options,
                                                   std::vector<FormStart> forms) {
  if (forms.empty()) throw Error("--device cuda: no execution form to choose from");
  LoweredProgram l = lower_program(graph, options);
  std::vector<cuda::FormContender> contenders;
  for (const FormStart& f : forms) contenders.push_back({f.form, [&f, p = l.program] { return f.start(p); }});
  cuda::ChosenForm c;
  try {
    c = cuda::choose_form(*l.program, std::move(contenders));
  } catch (const std::exception& e) {
    throw Error(std::string("--device cuda: ") + e.what());
  }
  const FormStart& kept = forms[c.chosen];
  return std::make_unique<CudaGraphPlan>(std::move(l.program), kept.start, options.mode, std::move(l.in),
                                         std::move(l.out), kept.isa, cuda::choice_text(c), std::move(c.runner));
}

std::unique_ptr<PlanBackend> compile_cuda_auto(const Graph& graph, const CompileOptions& options, int device) {
  return compile_cuda_choosing(graph, options,
                               {{"graph", "cuda-graph", graph_start(device)},
                                {"program", "cuda-program", program_start(device, 0)}});
}

std::unique_ptr<PlanBackend> compile_cuda_graph_on_host(const Graph& graph, const CompileOptions& options,
                                                        bool backwards) {
  return compile_program(
      graph, options,
      [backwards](std::shared_ptr<const cuda::DeviceProgram> p) { return cuda::host_program_runner(std::move(p), backwards); },
      "cuda-graph-on-host");
}

}  // namespace tickinfer::engine
