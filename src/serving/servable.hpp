#pragma once
// One loaded model version, ready to serve: the model, and one compiled Plan per serving
// thread (a Plan owns mutable scratch, so each thread runs its own; clones share the packed
// weights). Immutable after load except for the plans' scratch, which only the thread owning
// that plan index touches.
//
// load_model_version() is the seam between the repository and the model formats: it maps a
// version folder to a loaded model. Today it loads Keras `.keras` and legacy `.h5`; `.tflite`
// and tickinfer's quantized format are refused with a message saying so.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::serving {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;  // without the batch dimension
  size_t size = 1;             // product of shape
};

// The model file a version folder holds: `model.keras`, else the one `*.keras` or `*.h5` file.
// Throws tickinfer::Error naming the folder when there is none, several, or only formats not
// supported yet (`.tflite`, `saved_model.pb`).
std::string find_model_file(const std::string& version_dir);

// Loads the model in a version folder (the seam for new formats). Throws tickinfer::Error.
Model load_model_version(const std::string& version_dir);

class Servable {
 public:
  static constexpr size_t kMaxTensors = 16;

  // Loads and compiles `version_dir`, making `num_plans` plans. Throws tickinfer::Error.
  static std::shared_ptr<Servable> load(const std::string& version_dir, int64_t version,
                                        size_t num_plans);

  int64_t version() const { return version_; }
  const std::string& model_file() const { return model_file_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  size_t num_plans() const { return plans_.size(); }

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
  int64_t version_ = 0;
  std::string model_file_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::unique_ptr<Model> model_;
  mutable std::vector<Plan> plans_;
  static constexpr int kRowsPerCall = 8;
  bool by_rows_ = false;  // every plan is row-wise: batches go through Plan::run_rows
  std::unique_ptr<std::atomic<bool>[]> busy_;  // acquire_plan() slots, one per plan
};

}  // namespace tickinfer::serving
