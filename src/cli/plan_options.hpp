#pragma once
// The --mode, --isa, --sparse, --rounding and --window options shared by inspect, predict and bench, turned into
// CompileOptions. An unknown mode or ISA name is a UsageError; an ISA the CPU lacks is left for
// compile() to refuse (tickinfer::Error).
#include <string>

#include "cli/arg_parser.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

// Declares --mode (default window), --isa (default: best the CPU supports), --sparse (default auto),
// --rounding (default tflite), --window.
void declare_plan_options(ArgParser& parser);
CompileOptions plan_options(const ArgParser& args);
// A file quantized one tick per call (`tickinfer quantize --stream`, tfl::Program::stream_only)
// means its model only in stream mode: where --mode is not given, its plan compiles in stream mode.
// An explicit --mode window is left to compile(), which refuses it by name.
void default_mode_for(const Model& model, const ArgParser& args, CompileOptions& options);
bool is_stream_only(const Model& model);  // a .tkq made by quantize --stream
const char* mode_name(RecurrentMode mode);  // "window" or "stream"

// --tflite-engine auto|interpreter|graph, for every command that loads a model file; a bad
// value is a UsageError naming it.
void declare_load_options(ArgParser& parser);
LoadOptions load_options(const ArgParser& args);

}  // namespace tickinfer::cli
