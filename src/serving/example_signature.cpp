#include "serving/example_signature.hpp"

#include <algorithm>
#include <thread>

#include "formats/savedmodel/saved_model.hpp"
#include "serving/servable.hpp"

namespace tickinfer::serving {

namespace {

constexpr const char* kClassifyMethod = "tensorflow/serving/classify";
constexpr const char* kRegressMethod = "tensorflow/serving/regress";

std::string shape_text(const std::vector<int>& shape) {
  std::string s = "[-1";
  for (int d : shape) {
    s += ',';
    s += std::to_string(d);
  }
  return s + "]";
}

const SignatureTensor* find_tensor(const std::vector<SignatureTensor>& list, const std::string& key) {
  for (const auto& t : list) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

// TF Serving prints the SignatureDef (DebugString) after some of its messages; a summary here.
std::string describe(const ServedSignature& sig) {
  std::string s = "signature '" + sig.key + "' (inputs:";
  for (const auto& t : sig.inputs) s += " " + t.key;
  s += "; outputs:";
  for (const auto& t : sig.outputs) s += " " + t.key;
  return s + "; method_name: " + sig.method_name + ")";
}

ExampleVerdict invalid(std::string message) { return {StatusCode::InvalidArgument, std::move(message)}; }

}  // namespace

std::string example_signature_problem(const ServedSignature& sig, ExampleMethod method, bool check_method_name) {
  const bool classify = method == ExampleMethod::Classify;
  const char* want = classify ? kClassifyMethod : kRegressMethod;
  if (check_method_name && sig.method_name != want) {
    return std::string("Expected ") + (classify ? "classification" : "regression") + " signature method_name to be " + want +
           ". Was: " + sig.method_name;
  }
  if (sig.inputs.size() != 1) return "Expected one input Tensor.";
  if (classify && sig.outputs.size() != 1 && sig.outputs.size() != 2) {
    return "Expected one or two output Tensors, found " + std::to_string(sig.outputs.size());
  }
  if (!classify && sig.outputs.size() != 1) return "Expected one output Tensor.";
  if (!find_tensor(sig.inputs, "inputs")) {
    return std::string("No ") + (classify ? "classification" : "regression") + " inputs found in SignatureDef: " + describe(sig);
  }
  if (classify && !find_tensor(sig.outputs, "classes") && !find_tensor(sig.outputs, "scores")) {
    return "Expected classification signature outputs to contain at least one of \"classes\" or \"scores\". Signature was: " +
           describe(sig);
  }
  if (!classify && !find_tensor(sig.outputs, "outputs")) return "No regression outputs found in SignatureDef: " + describe(sig);
  return "";
}

void ExampleSignature::find_outputs(const formats::SavedModelExampleSignature& lowered) {
  const std::vector<TensorInfo> outs = model_->outputs();
  const auto& names = lowered.graph.output_names;
  for (size_t o = 0; o < outs.size(); ++o) {
    size_t n = 1;
    for (int d : outs[o].shape) n *= static_cast<size_t>(d);
    output_sizes_.push_back(n);
    logged_outputs_.push_back({o < names.size() ? names[o] : outs[o].name, {}, n});
    for (int d : outs[o].shape) logged_outputs_.back().shape.push_back(d);
  }
  for (const DenseFeatureSpec& f : features_) logged_inputs_.push_back({f.key, f.shape, f.size});
  auto index_of = [&](const std::string& key) {
    for (size_t o = 0; o < names.size() && o < outs.size(); ++o) {
      if (names[o] == key) return static_cast<int>(o);
    }
    return -1;
  };
  // Classify (classifier.cc PostProcessClassificationResult): scores [batch, classes] float,
  // classes [batch, classes] string, the same number of classes.
  scores_ = index_of("scores");
  if (scores_ >= 0) {
    const auto& shape = outs[static_cast<size_t>(scores_)].shape;
    if (shape.size() != 1) classify_ = invalid("Expected Tensor shape: [batch_size num_classes] but got " + shape_text(shape));
    num_classes_ = output_sizes_[static_cast<size_t>(scores_)];
  }
  for (const auto& c : lowered.constant_outputs) {
    if (c.key != "classes") continue;
    if (c.shape.size() != 2 || c.shape[0] != 1) {
      std::vector<int> s(c.shape.begin() + (c.shape.empty() ? 0 : 1), c.shape.end());
      classify_ = invalid("Expected Tensor shape: [batch_size num_classes] but got " + shape_text(s));
      continue;
    }
    const size_t n = static_cast<size_t>(c.shape[1]);
    if (scores_ >= 0 && n != num_classes_) {
      classify_ = invalid("Tensors class and score should match in dim_size(1). Got " + std::to_string(n) + " vs. " +
                          std::to_string(num_classes_));
      continue;
    }
    labels_ = c.values;
    num_classes_ = n;
  }
  for (const auto& [key, why] : lowered.refused_outputs) {
    if (key == "classes") classes_unserved_ = why;
  }
  if (classify_.ok() && scores_ < 0 && labels_.empty()) {
    classify_ = {StatusCode::Unimplemented, "tickinfer serve cannot run signature '" + key_ + "' for Classify: " +
                                                (classes_unserved_.empty() ? "it has no scores or classes output" : classes_unserved_)};
  }
  // Regress (regressor.cc PostProcessRegressionResult): outputs [batch] or [batch, 1] float.
  regress_ = index_of("outputs");
  if (regress_ >= 0 && output_sizes_[static_cast<size_t>(regress_)] != 1) {
    regress_verdict_ = invalid("Expected output Tensor shape to be either [batch_size] or [batch_size, 1] but got " +
                               shape_text(outs[static_cast<size_t>(regress_)].shape));
  } else if (regress_ < 0) {
    regress_verdict_ = {StatusCode::Unimplemented, "tickinfer serve cannot run signature '" + key_ + "' for Regress: no numeric 'outputs' output"};
  }
}

std::unique_ptr<ExampleSignature> ExampleSignature::build(const formats::SavedModelExampleSignature& lowered,
                                                          const ServedSignature& published, size_t num_plans) {
  std::unique_ptr<ExampleSignature> s(new ExampleSignature());
  s->key_ = published.key;
  auto refuse = [&](const std::string& why) {
    const ExampleVerdict v{StatusCode::Unimplemented, "tickinfer serve cannot run signature '" + s->key_ + "': " + why};
    s->classify_ = v;
    s->regress_verdict_ = v;
    return std::move(s);
  };
  if (!lowered.error.empty()) return refuse(lowered.error);
  for (const auto& f : lowered.features) {
    DenseFeatureSpec d;
    d.key = f.key;
    d.shape = f.shape;
    d.size = 1;
    for (int64_t x : f.shape) d.size *= static_cast<size_t>(x);
    d.has_default = f.has_default;
    d.default_value = f.default_value;
    s->features_.push_back(std::move(d));
  }
  try {
    s->model_ = std::make_unique<Model>(Model::from_graph(lowered.graph));
    if (s->features_.size() > Servable::kMaxTensors || s->model_->outputs().size() > Servable::kMaxTensors) {
      return refuse("more than 16 features or outputs");
    }
    Plan first = compile(*s->model_);
    for (size_t i = 0; i < s->features_.size(); ++i) {
      if (first.input_size(i) != s->features_[i].size) return refuse("feature '" + s->features_[i].key + "' does not match the model's input");
    }
    const size_t plans = std::max<size_t>(num_plans, 1);
    s->plans_.reserve(plans);
    for (size_t i = 1; i < plans; ++i) s->plans_.push_back(first.clone());
    s->plans_.push_back(std::move(first));
  } catch (const std::exception& e) {
    s->plans_.clear();
    return refuse(e.what());
  }
  s->busy_.reset(new std::atomic<bool>[s->plans_.size()]);
  for (size_t i = 0; i < s->plans_.size(); ++i) s->busy_[i].store(false, std::memory_order_relaxed);
  s->find_outputs(lowered);
  return s;
}

void ExampleSignature::run(size_t plan_index, size_t batch, const float* const* in, float* const* out) const noexcept {
  Plan& plan = plans_[plan_index];
  const float* ip[Servable::kMaxTensors];
  float* op[Servable::kMaxTensors];
  for (size_t r = 0; r < batch; ++r) {
    for (size_t i = 0; i < features_.size(); ++i) ip[i] = in[i] + r * features_[i].size;
    for (size_t o = 0; o < output_sizes_.size(); ++o) op[o] = out[o] + r * output_sizes_[o];
    plan.run(ip, op);
  }
}

size_t ExampleSignature::acquire_plan(size_t first) const noexcept {
  if (first >= plans_.size()) first = plans_.size() - 1;
  for (;;) {
    for (size_t i = first; i < plans_.size(); ++i) {
      if (!busy_[i].load(std::memory_order_relaxed) && !busy_[i].exchange(true, std::memory_order_acquire)) return i;
    }
    std::this_thread::yield();
  }
}

void ExampleSignature::release_plan(size_t index) const noexcept { busy_[index].store(false, std::memory_order_release); }

}  // namespace tickinfer::serving
