#pragma once
// One loaded model version, ready to serve: the model, and one compiled Plan per serving
// thread (a Plan owns mutable scratch, so each thread runs its own; clones share the packed
// weights). Immutable after load except for the plans' scratch, which only the thread owning
// that plan index touches.
//
// load_model_version() is the seam between the repository and the model formats: it maps a
// version folder to a loaded model: a SavedModel directory, or one .keras, .h5, .tflite, .onnx or
// .tkq file.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serving/example_signature.hpp"
#include "serving/server_config.hpp"
#include "serving/tensor_spec.hpp"

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::formats {
struct SavedModelExampleSignature;
}

namespace tickinfer::serving {


// The model a version folder holds: the folder itself when it is a SavedModel, else `model.keras`,
// else its one model file. Throws tickinfer::Error naming the folder when there is none or several.
std::string find_model_file(const std::string& version_dir);

// Loads the model in a version folder (the seam for new formats). Throws tickinfer::Error.
Model load_model_version(const std::string& version_dir);

// One signature as GetModelMetadata publishes it. A SavedModel's come from its MetaGraph (every
// signature, with TensorFlow's tensor names and dtypes); other formats get one serving_default
// named after the model's inputs and outputs, shaped like a Keras export's.
struct SignatureTensor {
  std::string key;          // the alias requests use, e.g. "keras_tensor", "output_0"
  std::string tensor_name;  // e.g. "serving_default_keras_tensor:0"
  int dtype = 1;            // TF DataType number (1 = DT_FLOAT)
  std::vector<int64_t> shape;  // with the batch dimension (-1 = unknown)
  bool unknown_rank = false;
};
struct ServedSignature {
  std::string key;  // "serving_default", "serve", ...
  std::string method_name = "tensorflow/serving/predict";
  std::vector<SignatureTensor> inputs, outputs;
};

struct ServableOptions {
  size_t num_plans = 1;
  std::string saved_model_tags = "serve";  // --saved_model_tags: the MetaGraph a SavedModel serves
  bool per_model_batching = false;  // --enable_per_model_batching_parameters: read batching_params.pbtxt
  bool method_name_check = false;   // --enable_signature_method_name_check (Classify / Regress)
  LoadOptions load;                 // --tflite_engine
  // --device: cpu, or cuda / cuda:N (every plan the CUDA graph form there, batches reserved; the
  // tf.Example signatures' small feature plans stay on the CPU).
  std::string device = "cpu";
  // --cuda_precision: with a GPU device, a float model's storage (CompileOptions::cuda_precision);
  // an integer program keeps its int8.
  std::string cuda_precision = "fp32";
};

class Servable {
 public:
  static constexpr size_t kMaxTensors = 16;

  // Loads and compiles `version_dir` (a version folder, or one model file), making `num_plans`
  // plans. Throws tickinfer::Error.
  static std::shared_ptr<Servable> load(const std::string& version_dir, int64_t version,
                                        const ServableOptions& options);

  int64_t version() const { return version_; }
  const std::string& model_file() const { return model_file_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  size_t num_plans() const { return plans_.size(); }
  // Every signature of the model (GetModelMetadata), and the one Predict runs: requests may name
  // it or leave signature_name empty.
  const std::vector<ServedSignature>& signatures() const { return signatures_; }
  const std::string& served_signature() const { return served_signature_; }
  bool serves_signature(const std::string& key) const { return key.empty() || key == served_signature_; }
  // One input, one output, and every plan row-wise (on a GPU: any window model): several rows
  // run in one Plan::run_rows call (what a batch of requests is merged into).
  bool rows_together() const { return by_rows_; }
  // Signature `key` as published ("" = serving_default), or nullptr.
  const ServedSignature* signature(const std::string& key) const;
  // A SavedModel's signatures that take serialized tf.Examples, compiled for Classify / Regress
  // (example_signature.hpp): `key`'s, or nullptr when it takes none.
  const ExampleSignature* example_signature(const std::string& key) const;
  bool method_name_check() const { return method_name_check_; }
  // The version's own batching_params.pbtxt (per-model batching), or nullptr.
  const BatchingParameters* batching_parameters() const { return batching_.get(); }

  // Runs `batch` rows, one batch-1 plan call each, on plan `plan_index` (which the caller owns
  // exclusively). inputs[i] holds batch * inputs()[i].size floats, row-major; outputs[o] gets
  // batch * outputs()[o].size floats. Never allocates, locks or throws.
  void run(size_t plan_index, size_t batch, const float* const* inputs,
           float* const* outputs) const noexcept;

  // For callers without a fixed plan index (gRPC's thread pool): takes a free plan among
  // [first, num_plans()) with an atomic exchange per slot (no lock), yielding while all are
  // busy; release_plan() gives it back. Never allocates or throws.
  size_t acquire_plan(size_t first) const noexcept;
  void release_plan(size_t index) const noexcept;

 private:
  Servable() = default;
  void add_example_signatures(const std::vector<formats::SavedModelExampleSignature>& lowered, size_t num_plans);
  int64_t version_ = 0;
  std::string model_file_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<ServedSignature> signatures_;
  std::string served_signature_ = "serving_default";
  std::unique_ptr<Model> model_;
  mutable std::vector<Plan> plans_;
  static constexpr int kRowsPerCall = 8;
  // On a GPU a batch is one launch whatever its rows, so the reservation covers a whole batch.
  static constexpr int kGpuRowsPerCall = 512;
  bool by_rows_ = false;  // every plan is row-wise: batches go through Plan::run_rows
  std::unique_ptr<std::atomic<bool>[]> busy_;  // acquire_plan() slots, one per plan
  std::unique_ptr<BatchingParameters> batching_;
  std::vector<std::unique_ptr<ExampleSignature>> example_signatures_;
  bool method_name_check_ = false;
};

}  // namespace tickinfer::serving
