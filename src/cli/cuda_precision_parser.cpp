// `tickinfer cuda-precision`'s options, the same in every build; what runs them is
// cuda_precision_command.cpp, or in a build without the CUDA backend cuda_precision_absent.cpp.
#include "cli/commands.hpp"
#include "cli/plan_options.hpp"

namespace tickinfer::cli {

ArgParser cuda_precision_parser() {
  ArgParser p("cuda-precision",
              "GPU weights and activations in fp16/bf16: each layer's error (measured here) and a --cuda-precision spec within a bound");
  p.positional("MODEL", "a Keras model (.keras, .h5) or a SavedModel directory");
  p.option("input", "IN",
           "input rows, .npy or .csv; one per model input, in the model's order (--mode stream: the ticks of one "
           "sequence)",
           "", true);
  p.option("max-error", "E", "largest max |output - fp32 output| the chosen mix may reach", "1e-4");
  p.option("rows", "N", "input rows used (the first N)", "16");
  declare_plan_options(p);
  declare_load_options(p);
  return p;
}

}  // namespace tickinfer::cli
