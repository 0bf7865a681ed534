#pragma once
// A SavedModel signature that takes serialized tf.Examples (classify / regress), compiled to run:
// the dense features its ParseExampleV2 decodes (serving/example_decoder.hpp), the lowered model
// and one Plan per serving thread, like the Servable's predict plans but separate from them (the
// Predict path is untouched). Which outputs Classify and Regress read, and TF Serving's verdicts
// on the signature's shape, are worked out once at load.
//
// Immutable after load except for the plans' scratch, which only the thread holding a plan
// touches (acquire_plan / release_plan, lock-free, as Servable's).
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "serving/example_decoder.hpp"
#include "serving/metrics.hpp"  // StatusCode
#include "serving/tensor_spec.hpp"

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::formats {
struct SavedModelExampleSignature;
}

namespace tickinfer::serving {

struct ServedSignature;

enum class ExampleMethod { Classify, Regress };

// Whether Classify / Regress can run a signature here: OK, or the answer to give.
struct ExampleVerdict {
  StatusCode code = StatusCode::Ok;
  std::string message;
  bool ok() const { return code == StatusCode::Ok; }
};

class ExampleSignature {
 public:
  // Compiles a lowered example signature into `num_plans` plans. Never throws for a signature
  // tickinfer cannot run: unserved() says why (and the load of the model goes on).
  static std::unique_ptr<ExampleSignature> build(const formats::SavedModelExampleSignature& lowered,
                                                 const ServedSignature& published, size_t num_plans);

  const std::string& key() const { return key_; }
  // Whether Classify / Regress can run this signature: UNIMPLEMENTED when tickinfer could not
  // lower it, INVALID_ARGUMENT (TF Serving's post-processing message) when its outputs do not
  // have the shapes that method needs.
  const ExampleVerdict& verdict(ExampleMethod m) const { return m == ExampleMethod::Classify ? classify_ : regress_verdict_; }
  // A classes output that is not served (not constant labels): Classify answers "" labels.
  const std::string& classes_unserved() const { return classes_unserved_; }

  const std::vector<DenseFeatureSpec>& features() const { return features_; }
  size_t num_outputs() const { return output_sizes_.size(); }
  size_t output_size(size_t o) const { return output_sizes_[o]; }
  // Classify: the scores output (-1: none) and the constant labels (empty: none), num_classes().
  int scores_output() const { return scores_; }
  const std::vector<std::string>& labels() const { return labels_; }
  size_t num_classes() const { return num_classes_; }
  // Regress: the `outputs` output (-1: none), one float per example.
  int regress_output() const { return regress_; }
  // The decoded features and the outputs as the request log records them (names and floats per row).
  const std::vector<TensorSpec>& logged_inputs() const { return logged_inputs_; }
  const std::vector<TensorSpec>& logged_outputs() const { return logged_outputs_; }

  size_t num_plans() const { return plans_.size(); }
  // Runs `batch` rows on plan `plan` (held by the caller): in[i] holds batch * features()[i].size
  // floats, out[o] gets batch * output_size(o). Never allocates, locks or throws.
  void run(size_t plan, size_t batch, const float* const* in, float* const* out) const noexcept;
  size_t acquire_plan(size_t first) const noexcept;
  void release_plan(size_t index) const noexcept;

 private:
  ExampleSignature() = default;
  void find_outputs(const formats::SavedModelExampleSignature& lowered);

  std::string key_;
  ExampleVerdict classify_, regress_verdict_;
  std::string classes_unserved_;
  std::vector<DenseFeatureSpec> features_;
  std::vector<size_t> output_sizes_;
  int scores_ = -1, regress_ = -1;
  std::vector<std::string> labels_;
  std::vector<TensorSpec> logged_inputs_, logged_outputs_;
  size_t num_classes_ = 0;
  std::unique_ptr<Model> model_;
  mutable std::vector<Plan> plans_;
  std::unique_ptr<std::atomic<bool>[]> busy_;
};

// TF Serving's check of a SignatureDef before Classify / Regress / MultiInference use it
// (classifier.cc / regressor.cc PreProcess*, and the method name when
// --enable_signature_method_name_check is on): an InvalidArgument message, or "".
std::string example_signature_problem(const ServedSignature& sig, ExampleMethod method, bool check_method_name);

}  // namespace tickinfer::serving
