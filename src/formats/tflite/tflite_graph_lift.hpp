#pragma once
// Lifts a float tfl::Program (a TFLite file, formats/tflite/tflite_file.hpp) to the engine's layer
// Graph (model/graph.hpp), so that it runs on the graph compiler's packed kernels (and in stream
// mode, for recurrent models) instead of the tensor-program interpreter, whose float kernels
// reproduce TFLite's reference arithmetic one op at a time.
//
// A program lifts only when every op maps onto graph nodes that compute the same function (to
// float rounding: the graph kernels use their own sigmoid/tanh and FMA order, within 1e-5 of
// TFLite's reference kernels relative to the output scale). Anything else is refused with the
// op and the reason, and the caller keeps the program on the interpreter: a lift never gives a
// different answer. int8 and dynamic-range programs are always refused (they stay bit-exact on
// the interpreter). docs/formats/tflite.md lists the recognised forms.
//
// Names: graph inputs are the program's input tensor names and Graph::output_names its output
// tensor names, so a lifted model answers to the same names as on the interpreter. Each node's
// origin lists the TFLite ops it came from ("RESHAPE #0 + CONV_2D #1").
#include <optional>
#include <string>

#include "model/graph.hpp"
#include "tflite/program.hpp"

namespace tickinfer::formats {

struct TfliteLift {
  std::optional<Graph> graph;  // set when the program lifts; shapes filled and validated
  std::string refusal;         // otherwise: "op 3 (WHILE 'name'): why", for `inspect` and tests
};

// Never throws for a program that tfl::validate accepts; refusals are returned, not thrown.
TfliteLift lift_tflite_program(const tfl::Program& program);

// Which engine runs a float TFLite file (Model::load's LoadOptions, the CLI's --tflite-engine):
//   Auto: the graph engine when the program lifts, else the interpreter;
//   Interpreter: always the interpreter (the escape hatch);
//   Graph: the graph engine or a load error naming why the program does not lift.
enum class TfliteEngine { Auto, Interpreter, Graph };
// "auto", "interpreter" or "graph"; any other value is an Error naming it.
TfliteEngine parse_tflite_engine(const std::string& name);
const char* tflite_engine_name(TfliteEngine engine);

}  // namespace tickinfer::formats
