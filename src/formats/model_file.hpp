#pragma once
// Entry points of the model importers. The format is sniffed from the content, not the file name:
// a ZIP archive is a Keras 3 `.keras` file, an HDF5 file a legacy Keras `.h5` model. ONNX has no
// magic number: a file named `*.onnx` is read as ONNX (formats/onnx/onnx_file.hpp), and bytes that
// are none of the others but parse as an ONNX ModelProto are too.
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

#include "formats/savedmodel/saved_model.hpp"
#include "model/graph.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "tflite/program.hpp"

namespace tickinfer::formats {

// `path` may also be a SavedModel directory (formats/savedmodel/saved_model.hpp); any other directory is an
// Error "is a directory but not a SavedModel".
Graph load_model_file(const std::string& path);

// Same from memory; `label` stands for the file name in error messages.
Graph load_model_bytes(const void* data, size_t size, const std::string& label);

// Any model file tickinfer reads: a Keras or ONNX file or a SavedModel directory gives a graph; a
// TFLite file (identifier "TFL3" at bytes 4..7) or a tickinfer quantized file (.tkq) gives a tensor
// program, except that a float TFLite program that lifts to a layer graph
// (formats/tflite/tflite_graph_lift.hpp) gives that graph (source_format "tflite"), as `tflite_engine`
// says (TfliteEngine::Interpreter keeps every TFLite file a program).
struct AnyModel {
  Graph graph;                                    // Keras, ONNX, SavedModel, lifted TFLite
  std::shared_ptr<const tfl::Program> program;  // TFLite / .tkq files not lifted (graph empty then)
  std::shared_ptr<const SavedModelInfo> saved_model;  // SavedModel directories: every signature
};
// TfliteEngine::Interpreter keeps every TFLite file a program (`tickinfer quantize` quantizes
// the converter's ops one for one, not a re-lowering of the lifted graph).
AnyModel load_any_model_file(const std::string& path, TfliteEngine tflite_engine = TfliteEngine::Auto);

}  // namespace tickinfer::formats
