#include "cli/plan_options.hpp"

#include "engine/device_options.hpp"
#include "tflite/program.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

void declare_plan_options(ArgParser& parser) {
  parser.option("mode", "window|stream",
                "window: each run takes a whole [T, features] window; stream: one tick per run, "
                "recurrent state carried over (the default for a .tkq made by quantize --stream, "
                "which runs in no other mode)",
                "window");
  parser.flag("incremental",
              "window mode: when a window is the previous one moved by one row, convolutions and per-row layers "
              "recompute only the rows that change (docs/incremental.md)");
  parser.option("isa", "scalar|portable|avx2|avx512",
                "force a kernel set (default: the fastest the CPU supports, or $TICKINFER_ISA)");
  parser.option("sparse", "auto|off|on",
                "pruned weights: auto runs a layer's block-sparse form when measured faster here; off: dense; "
                "on: sparse wherever a 1x16 block is zero",
                "auto");
  parser.option("rounding", "tflite|double|single",
                "TFLite and quantized models: how int8 requantization rounds; tflite: as the TFLite interpreters "
                "on PyPI (per op family); double: a default TFLite source build; single: a TFLITE_SINGLE_ROUNDING "
                "build",
                "tflite");
  parser.option("device", "cpu|cuda|cuda:N",
                "where the plan runs: the CPU plans, or that GPU: a resident kernel for an LSTM stack with a "
                "Dense head, the CUDA graph or program form for any other Keras graph (docs/gpu.md)",
                "cpu");
  parser.option("cuda-form", "auto|graph|program",
                "with --device cuda: auto runs an LSTM stack on the resident kernel and any other model in the "
                "graph or program form, whichever this card runs faster (timed at compile); graph: the graph "
                "form for every model (the form that runs batched rows); "
                "program: any model on one never-exiting kernel that polls for requests",
                "auto");
  parser.option("cuda-precision", "SPEC",
                "with --device cuda (graph and program forms): FORMAT, then ,LAYER=FORMAT per layer; FORMAT is the "
                "weight matrices' storage (fp32 (default), fp16 or bf16) or W/A, the matrices' and the layer "
                "outputs' (fp16/fp16); arithmetic stays fp32 (`tickinfer cuda-precision` measures each layer's error)",
                "fp32");
  parser.option("window", "T",
                "window mode, for a model saved with a variable (None) sequence length: the "
                "number of time steps per window");
}

void declare_load_options(ArgParser& parser) {
  parser.option("tflite-engine", "auto|interpreter|graph",
                "a float TFLite file: auto runs it on the graph engine when it lifts to a layer graph, else on the "
                "TFLite interpreter; interpreter: always the interpreter; graph: the graph engine or an error saying "
                "why it does not lift",
                "auto");
}

LoadOptions load_options(const ArgParser& args) {
  LoadOptions options;
  try {
    options.tflite_engine = parse_tflite_engine(args.value("tflite-engine"));
  } catch (const Error& e) {
    throw UsageError(std::string("option '--tflite-engine': ") + e.what());
  }
  return options;
}

bool is_stream_only(const Model& model) { return model.program() != nullptr && model.program()->stream_only; }

void default_mode_for(const Model& model, const ArgParser& args, CompileOptions& options) {
  if (!args.given("mode") && is_stream_only(model)) options.mode = RecurrentMode::Stream;
}

CompileOptions plan_options(const ArgParser& args) {
  CompileOptions options;
  const std::string& mode = args.value("mode");
  if (mode == "window") {
    options.mode = RecurrentMode::Window;
  } else if (mode == "stream") {
    options.mode = RecurrentMode::Stream;
  } else {
    throw UsageError("option '--mode': unknown mode '" + mode + "' (window or stream)");
  }
  options.incremental = args.flag_set("incremental");
  if (options.incremental && options.mode != RecurrentMode::Window) {
    throw UsageError("option '--incremental' is for window mode (stream mode updates per step already)");
  }
  if (args.given("isa")) {
    const std::string& isa = args.value("isa");
    if (isa != "scalar" && isa != "portable" && isa != "avx2" && isa != "avx512") {
      throw UsageError("option '--isa': unknown kernel set '" + isa +
                       "' (scalar, portable, avx2 or avx512)");
    }
    options.isa = isa;
  }
  const std::string& sparse = args.value("sparse");
  if (sparse == "auto") {
    options.sparse = SparseMode::Auto;
  } else if (sparse == "off") {
    options.sparse = SparseMode::Dense;
  } else if (sparse == "on") {
    options.sparse = SparseMode::Sparse;
  } else {
    throw UsageError("option '--sparse': unknown value '" + sparse + "' (auto, off or on)");
  }
  const std::string& rounding = args.value("rounding");
  if (rounding == "tflite") {
    options.rounding = RoundingMode::Tflite;
  } else if (rounding == "double") {
    options.rounding = RoundingMode::Double;
  } else if (rounding == "single") {
    options.rounding = RoundingMode::Single;
  } else {
    throw UsageError("option '--rounding': unknown value '" + rounding + "' (tflite, double or single)");
  }
  options.device = args.value("device");
  try {
    engine::cuda_device_index(options.device);  // the engine's grammar, checked before any load
  } catch (const Error& e) {
    throw UsageError(std::string("option '--device': ") + e.what());
  }
  options.cuda_form = args.value("cuda-form");
  options.cuda_precision = args.value("cuda-precision");
  if (std::string e = engine::cuda_options_error(options); !e.empty())
    throw UsageError("option '--cuda-form' or '--cuda-precision': " + e);
  if (args.given("window")) options.window_length = static_cast<int>(args.integer("window", 1, 1 << 20));
  return options;
}

const char* mode_name(RecurrentMode mode) {
  return mode == RecurrentMode::Stream ? "stream" : "window";
}

}  // namespace tickinfer::cli
