#pragma once
// TensorFlow SavedModel directories (`saved_model.pb` + `variables/`), read without TensorFlow:
// the MetaGraph with the requested tag, its signatures, the function the chosen signature calls
// (followed through the function library) and the variables it captures (checkpoint keys from the
// object graph, values from the tensor bundle). The function is lowered to the engine's Graph
// (formats/savedmodel/tf_lowering.hpp); docs/formats/savedmodel.md lists what is recognised.
#include <cstdint>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "formats/savedmodel/tf_tensor.hpp"
#include "model/graph.hpp"

namespace tickinfer::formats {

struct SavedModelTensorInfo {
  std::string key;          // the signature's name for it, e.g. "keras_tensor", "output_0"
  std::string tensor_name;  // e.g. "serving_default_keras_tensor:0"
  int dtype = 0;            // TF DataType number (1 = float32)
  std::vector<int64_t> shape;  // -1 unknown (dim 0 is the batch); empty with unknown_rank
  bool unknown_rank = false;
  bool sparse = false;      // a COO sparse tensor (name empty): not supported for the lowered signature
};

struct SavedModelSignature {
  std::string key;          // "serving_default", "serve", ...
  std::string method_name;  // "tensorflow/serving/predict"
  std::vector<SavedModelTensorInfo> inputs, outputs;  // sorted by key
};

struct SavedModelInfo {
  std::string directory;
  std::vector<std::string> tags;          // of the MetaGraph read
  std::string signature_key;              // the signature the Graph computes
  std::vector<SavedModelSignature> signatures;  // every signature but __saved_model_init_op
  std::string tensorflow_version;
};

struct SavedModelOptions {
  std::string tag = "serve";  // comma-separated tag set (--saved_model_tags); must equal the MetaGraph's
  std::string signature = "serving_default";  // "" = serving_default, else the only signature
  // Also lower every other signature that takes serialized tf.Examples (one DT_STRING input):
  // SavedModel::example_signatures. One that cannot be lowered records why; the load goes on.
  bool example_signatures = false;
};

// A dense feature of an example signature's ParseExampleV2 (tf.io.FixedLenFeature, float32).
struct SavedModelDenseFeature {
  std::string key;
  std::vector<int64_t> shape;  // without the batch dimension
  bool has_default = false;
  std::vector<float> default_value;  // element_count(shape) values when has_default
};

// A string output that lowered to a constant (class labels tiled over the batch): its TF shape
// with batch dimension 1, and its values row-major.
struct SavedModelConstantOutput {
  std::string key;
  std::vector<int64_t> shape;
  std::vector<std::string> values;
};

// A signature that takes serialized tf.Examples (classify / regress), lowered.
struct SavedModelExampleSignature {
  std::string key;
  std::string error;  // why it could not be lowered; "" when graph is valid
  Graph graph;        // inputs: the dense features, in `features` order; outputs: the numeric outputs
  std::vector<SavedModelDenseFeature> features;
  std::vector<SavedModelConstantOutput> constant_outputs;
  // String outputs left out of the Graph because they are not constants (labels computed per
  // example): key and why.
  std::vector<std::pair<std::string, std::string>> refused_outputs;
};

struct SavedModel {
  Graph graph;  // Input nodes are named after the signature's input keys, in call order;
                // Graph::output_names holds the output keys
  SavedModelInfo info;
  std::vector<SavedModelExampleSignature> example_signatures;  // with SavedModelOptions::example_signatures
};

// True if `path` is a directory holding saved_model.pb or saved_model.pbtxt.
bool is_saved_model_dir(const std::string& path);

// The error for a directory that is not a SavedModel: "<dir>: is a directory but not a SavedModel
// (no saved_model.pb)", naming version folders that hold one (a TF Serving base path).
std::string not_a_saved_model_message(const std::string& dir);

// Loads a SavedModel directory. Throws tickinfer::Error naming the file and what is wrong: a
// directory without saved_model.pb, a truncated or malformed protobuf, no MetaGraph with the tag,
// an unknown signature or tensor, a missing or corrupt variables shard, an op the lowering does
// not recognise (op, node and function named).
SavedModel load_saved_model(const std::string& dir, const SavedModelOptions& options = {});

// The value of a captured variable: its checkpoint key and the shape / dtype the object graph
// declares. load_saved_model reads the tensor bundle; fuzzing substitutes zeros.
using VariableReader = std::function<TfTensor(const std::string& checkpoint_key, int dtype, const std::vector<int64_t>& shape)>;

// The same from saved_model.pb bytes, the serialized TrackableObjectGraph (the bundle's
// _CHECKPOINTABLE_OBJECT_GRAPH entry; may be empty) and a variable reader.
SavedModel import_saved_model(const std::string& pb_bytes, const std::string& object_graph_bytes, const VariableReader& read_variable,
                              const std::string& label, const SavedModelOptions& options = {});

}  // namespace tickinfer::formats
