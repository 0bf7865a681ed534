#include "serving/servable.hpp"

#include <cstdio>
#include <filesystem>
#include <thread>

#include "engine/device_options.hpp"
#include "formats/savedmodel/saved_model.hpp"
#include "serving/example_signature.hpp"

namespace fs = std::filesystem;

namespace tickinfer::serving {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<TensorSpec> specs(const std::vector<TensorInfo>& infos) {
  std::vector<TensorSpec> out;
  for (const auto& t : infos) {
    TensorSpec s;
    s.name = t.name;
    for (int d : t.shape) {
      s.shape.push_back(d);
      s.size *= static_cast<size_t>(d);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// A Keras export's names: inputs serving_default_<name>:0, outputs StatefulPartitionedCall:<i>.
ServedSignature default_signature(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs) {
  ServedSignature sig;
  sig.key = "serving_default";
  auto tensor = [](const TensorSpec& t, std::string name) {
    SignatureTensor st;
    st.key = t.name;
    st.tensor_name = std::move(name);
    st.shape.push_back(-1);
    st.shape.insert(st.shape.end(), t.shape.begin(), t.shape.end());
    return st;
  };
  for (const auto& t : inputs) sig.inputs.push_back(tensor(t, "serving_default_" + t.name + ":0"));
  for (size_t i = 0; i < outputs.size(); ++i) {
    sig.outputs.push_back(tensor(outputs[i], "StatefulPartitionedCall:" + std::to_string(i)));
  }
  return sig;
}

std::vector<ServedSignature> saved_model_signatures(const formats::SavedModelInfo& info) {
  std::vector<ServedSignature> out;
  auto convert = [](const std::vector<formats::SavedModelTensorInfo>& from) {
    std::vector<SignatureTensor> to;
    for (const auto& t : from) to.push_back({t.key, t.tensor_name, t.dtype, t.shape, t.unknown_rank});
    return to;
  };
  for (const auto& s : info.signatures) {
    out.push_back({s.key, s.method_name.empty() ? "tensorflow/serving/predict" : s.method_name,
                   convert(s.inputs), convert(s.outputs)});
  }
  return out;
}

}  // namespace

std::string find_model_file(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("version folder '" + dir + "' is not a directory");
  if (fs::is_regular_file(fs::path(dir) / "model.keras", ec)) return (fs::path(dir) / "model.keras").string();
  std::vector<std::string> found;
  bool saved_model = false;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (ends_with(name, ".keras") || ends_with(name, ".h5") || ends_with(name, ".tflite") ||
        ends_with(name, ".tkq") || ends_with(name, ".onnx")) {
      found.push_back(e.path().string());
    }
    if (name == "saved_model.pb" || name == "saved_model.pbtxt") saved_model = true;
  }
  if (ec) throw Error("cannot list version folder '" + dir + "': " + ec.message());
  // A SavedModel is the folder itself (saved_model.pb + variables/), as TF Serving loads it.
  if (saved_model && found.empty()) return dir;
  if (found.size() == 1 && !saved_model) return found[0];
  if (!found.empty()) {
    throw Error("version folder '" + dir + "' holds several models (" + (saved_model ? "a SavedModel and " : "") +
                std::to_string(found.size()) +
                " of .keras/.h5/.tflite/.tkq/.onnx) and no model.keras; keep exactly one");
  }
  throw Error("version folder '" + dir +
              "' holds no model (a SavedModel's saved_model.pb, model.keras, *.h5, *.tflite, *.onnx or *.tkq)");
}

Model load_model_version(const std::string& version_dir) {
  return Model::load(find_model_file(version_dir));
}

std::shared_ptr<Servable> Servable::load(const std::string& version_dir, int64_t version,
                                         const ServableOptions& options) {
  std::shared_ptr<Servable> s(new Servable());
  s->version_ = version;
  // A model file is served as it is (tickinfer replay); a folder holds one.
  std::error_code file_ec;
  s->model_file_ = fs::is_regular_file(version_dir, file_ec) ? version_dir : find_model_file(version_dir);
  // --enable_per_model_batching_parameters: the version's own batching, read (and checked, so a
  // half-written file fails the load) before the model.
  if (options.per_model_batching) {
    const std::string bp = version_dir + "/batching_params.pbtxt";
    std::error_code ec;
    if (std::filesystem::exists(bp, ec)) s->batching_ = std::make_unique<BatchingParameters>(read_batching_parameters(bp));
  }
  std::shared_ptr<const formats::SavedModelInfo> saved;
  std::vector<formats::SavedModelExampleSignature> examples;
  s->method_name_check_ = options.method_name_check;
  if (formats::is_saved_model_dir(s->model_file_)) {
    formats::SavedModelOptions so;
    so.tag = options.saved_model_tags;
    so.example_signatures = true;
    formats::SavedModel sm = formats::load_saved_model(s->model_file_, so);
    examples = std::move(sm.example_signatures);
    saved = std::make_shared<const formats::SavedModelInfo>(std::move(sm.info));
    s->model_ = std::make_unique<Model>(Model::from_graph(std::move(sm.graph)));
  } else {
    s->model_ = std::make_unique<Model>(Model::load(s->model_file_, options.load));
  }
  s->inputs_ = specs(s->model_->inputs());
  s->outputs_ = specs(s->model_->outputs());
  if (saved) {
    s->signatures_ = saved_model_signatures(*saved);
    s->served_signature_ = saved->signature_key;
  } else {
    s->signatures_ = {default_signature(s->inputs_, s->outputs_)};
  }
  s->add_example_signatures(examples, options.num_plans);
  const size_t num_plans = options.num_plans;
  if (s->inputs_.size() > kMaxTensors || s->outputs_.size() > kMaxTensors) {
    throw Error("model '" + s->model_file_ + "' has more than 16 inputs or outputs");
  }
  CompileOptions compile_options;
  compile_options.device = options.device;
  const bool on_gpu = engine::cuda_device_index(options.device) >= 0;
  if (on_gpu) compile_options.cuda_form = "graph";  // the form that runs batches (and many plans)
  if (on_gpu && !s->model_->program()) compile_options.cuda_precision = options.cuda_precision;
  Plan first = compile(*s->model_, compile_options);
  const size_t plans = num_plans == 0 ? 1 : num_plans;
  s->plans_.reserve(plans);
  for (size_t i = 1; i < plans; ++i) s->plans_.push_back(first.clone());
  s->plans_.push_back(std::move(first));
  // A feed-forward model serves a batch (several instances, or a batched request) through
  // Plan::run_rows, kRowsPerCall rows per call (on a GPU kGpuRowsPerCall, and any window model
  // with one input and output): the same numbers as run() per row.
  s->by_rows_ = true;
  for (Plan& p : s->plans_) s->by_rows_ = s->by_rows_ && p.try_reserve_rows(on_gpu ? kGpuRowsPerCall : kRowsPerCall);
  s->busy_.reset(new std::atomic<bool>[plans]);
  for (size_t i = 0; i < plans; ++i) s->busy_[i].store(false, std::memory_order_relaxed);
  // The plan's flattened shapes are what run() uses; the model's TensorInfo names the tensors.
  for (size_t i = 0; i < s->inputs_.size(); ++i) {
    if (s->plans_[0].input_size(i) != s->inputs_[i].size) {
      throw Error("model '" + s->model_file_ + "': input '" + s->inputs_[i].name +
                  "' has an unknown dimension; only fixed shapes can be served");
    }
  }
  return s;
}

void Servable::add_example_signatures(const std::vector<formats::SavedModelExampleSignature>& lowered, size_t num_plans) {
  for (const auto& ex : lowered) {
    const ServedSignature* published = signature(ex.key);
    if (!published) continue;
    example_signatures_.push_back(ExampleSignature::build(ex, *published, num_plans));
    // Classify / Regress answer with these reasons; the log says at load why a signature is not served.
    const ExampleSignature& e = *example_signatures_.back();
    const ExampleVerdict& c = e.verdict(ExampleMethod::Classify);
    if (c.code == StatusCode::Unimplemented && e.verdict(ExampleMethod::Regress).code == StatusCode::Unimplemented) {
      std::fprintf(stderr, "tickinfer serve: %s: %s (Classify / Regress on it answer UNIMPLEMENTED; Predict is served)\n",
                   model_file_.c_str(), c.message.c_str());
    }
    if (!e.classes_unserved().empty()) {
      std::fprintf(stderr, "tickinfer serve: %s: signature '%s': output 'classes' is not served (Classify answers empty labels): %s\n",
                   model_file_.c_str(), e.key().c_str(), e.classes_unserved().c_str());
    }
  }
}

const ServedSignature* Servable::signature(const std::string& key) const {
  const std::string& want = key.empty() ? std::string("serving_default") : key;
  for (const auto& sig : signatures_) {
    if (sig.key == want) return &sig;
  }
  return nullptr;
}

const ExampleSignature* Servable::example_signature(const std::string& key) const {
  const std::string& want = key.empty() ? std::string("serving_default") : key;
  for (const auto& e : example_signatures_) {
    if (e->key() == want) return e.get();
  }
  return nullptr;
}

size_t Servable::acquire_plan(size_t first) const noexcept {
  if (first >= plans_.size()) first = plans_.size() - 1;
  for (;;) {
    for (size_t i = first; i < plans_.size(); ++i) {
      if (!busy_[i].load(std::memory_order_relaxed) && !busy_[i].exchange(true, std::memory_order_acquire)) {
        return i;
      }
    }
    std::this_thread::yield();
  }
}

void Servable::release_plan(size_t index) const noexcept { busy_[index].store(false, std::memory_order_release); }

void Servable::run(size_t plan_index, size_t batch, const float* const* inputs,
                   float* const* outputs) const noexcept {
  Plan& plan = plans_[plan_index];
  const size_t ni = inputs_.size(), no = outputs_.size();
  const float* in[kMaxTensors];
  float* out[kMaxTensors];
  if (by_rows_ && batch > 1) {  // one input, one output (try_reserve_rows checked)
    plan.run_rows(inputs[0], static_cast<int>(batch), outputs[0]);
    return;
  }
  for (size_t r = 0; r < batch; ++r) {
    for (size_t i = 0; i < ni; ++i) in[i] = inputs[i] + r * inputs_[i].size;
    for (size_t o = 0; o < no; ++o) out[o] = outputs[o] + r * outputs_[o].size;
    plan.run(in, out);
  }
}

}  // namespace tickinfer::serving
