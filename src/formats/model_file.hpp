#pragma once
// Entry points of the model importers. The format is sniffed from the content, not the file name:
// a ZIP archive is a Keras 3 `.keras` file, an HDF5 file a legacy Keras `.h5` model.
//
// Every function throws tickinfer::Error, whose message starts with the file's label (path) and
// names the layer, its class and the option at fault, e.g.
//   "model.keras: layer 'lstm_2' (LSTM): go_backwards=true is not supported".
// They never crash on malformed input. The returned Graph has Node::shape set for Input nodes only;
// call infer_shapes() (model/graph.hpp) to validate and complete it. Safe to call from several
// threads. Parsing runs in a child process (formats/isolated_load.hpp), so a file that crashes
// or hangs libhdf5 becomes an Error here, never a crash of the caller.
#include <cstddef>
#include <memory>
#include <string>

#include "model/graph.hpp"
#include "tflite/program.hpp"

namespace tickinfer::formats {

Graph load_model_file(const std::string& path);

// Same from memory; `label` stands for the file name in error messages.
Graph load_model_bytes(const void* data, size_t size, const std::string& label);

// Any model file tickinfer reads: a Keras file gives a graph; a TFLite file (identifier "TFL3"
// at bytes 4..7) or a tickinfer quantized file (.tkq) gives a tensor program, except that a
// float TFLite program that lifts to a layer graph (formats/tflite_graph_lift.hpp) gives that
// graph (source_format "tflite"), unless $TICKINFER_TFLITE_ENGINE=interpreter.
struct AnyModel {
  Graph graph;                                    // Keras files
  std::shared_ptr<const tfl::Program> program;  // TFLite / .tkq files not lifted (graph empty then)
};
// lift_float_tflite = false keeps every TFLite file a program (`tickinfer quantize` quantizes
// the converter's ops one for one, not a re-lowering of the lifted graph).
AnyModel load_any_model_file(const std::string& path, bool lift_float_tflite = true);

}  // namespace tickinfer::formats
