// Embedding tickinfer in a trading application: load and compile once at start-up, then call
// run() on the hot path with buffers the application owns. Built and run by the test suite.
//
//   embed_mlp MODEL.keras
#include <tickinfer/tickinfer.hpp>

#include <array>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  try {
    // Start-up: may allocate and throw (tickinfer::Error names the file, layer and option).
    const tickinfer::Model model = tickinfer::Model::load(argv[1]);
    tickinfer::Plan plan = tickinfer::compile(model);  // fastest kernels this CPU supports
    if (plan.num_inputs() != 1 || plan.num_outputs() != 1) {
      std::fprintf(stderr, "this example expects one input and one output\n");
      return 1;
    }
    std::vector<float> features(plan.input_size(0));
    std::vector<float> score(plan.output_size(0));

    // Hot path: one call per tick, no allocation, no lock, no syscall, no exception.
    for (int tick = 0; tick < 3; ++tick) {
      for (size_t i = 0; i < features.size(); ++i) features[i] = 0.1f * float(tick) - 0.05f * float(i);
      plan.run(features.data(), score.data());
      std::printf("tick %d: score %.6f (kernels %s)\n", tick, score[0], plan.isa());
    }

    // A second thread would take its own plan sharing the packed weights.
    tickinfer::Plan other_thread_plan = plan.clone();
    other_thread_plan.run(features.data(), score.data());
    std::printf("clone: score %.6f\n", score[0]);
    return 0;
  } catch (const tickinfer::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
