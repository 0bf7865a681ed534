#include "serving/api/example_inference.hpp"

#include <algorithm>

namespace tickinfer::serving {

namespace {

constexpr const char* kClassifyMethod = "tensorflow/serving/classify";
constexpr const char* kRegressMethod = "tensorflow/serving/regress";

ExampleVerdict invalid(std::string message) { return {StatusCode::InvalidArgument, std::move(message)}; }

// A signature that passed TF Serving's checks of its SignatureDef but that tickinfer did not
// lower as an example signature: its one input is not a DT_STRING of serialized tf.Examples.
ExampleVerdict not_examples(const ServedSignature& sig) {
  return invalid("signature '" + sig.key + "' input '" + (sig.inputs.empty() ? std::string() : sig.inputs[0].key) +
                 "' is not a DT_STRING tensor of serialized tf.Examples, which Classify, Regress and MultiInference feed it");
}

}  // namespace

ExampleVerdict find_example_signature(const Servable& sv, const std::string& signature_name, ExampleMethod method,
                                      const ExampleSignature*& out) {
  out = nullptr;
  const std::string name = signature_name.empty() ? "serving_default" : signature_name;
  const ServedSignature* sig = sv.signature(name);
  if (!sig) return invalid("No signature was found with the name: " + name);
  std::string problem = example_signature_problem(*sig, method, sv.method_name_check());
  if (!problem.empty()) return invalid(std::move(problem));
  const ExampleSignature* ex = sv.example_signature(name);
  if (!ex) return not_examples(*sig);
  if (!ex->verdict(method).ok()) return ex->verdict(method);
  out = ex;
  return {};
}

ExampleVerdict run_examples(const ExampleSignature& sig, const ExampleInput& input, size_t max_examples,
                            const ExampleDecodeOptions& options, size_t first_plan, ExampleRun& run) {
  const size_t batch = input.examples.size();
  if (batch == 0) return invalid("Input is empty.");
  if (batch > max_examples) {
    return invalid("batch of " + std::to_string(batch) + " examples exceeds this server's limit of " +
                   std::to_string(max_examples) + " (--max_batch_size)");
  }
  const auto& features = sig.features();
  if (run.in.size() < features.size()) run.in.resize(features.size());  // grow only
  if (run.out.size() < sig.num_outputs()) run.out.resize(sig.num_outputs());
  for (size_t i = 0; i < features.size(); ++i) run.in[i].resize(batch * features[i].size);
  for (size_t o = 0; o < sig.num_outputs(); ++o) run.out[o].resize(batch * sig.output_size(o));
  float* row[Servable::kMaxTensors];
  std::string error;
  for (size_t r = 0; r < batch; ++r) {
    for (size_t i = 0; i < features.size(); ++i) row[i] = run.in[i].data() + r * features[i].size;
    if (!decode_example(input.context, input.examples[r], features, options, run.decode, row, error)) {
      return invalid(batch > 1 ? "example " + std::to_string(r) + ": " + error : error);
    }
  }
  const float* in[Servable::kMaxTensors];
  float* out[Servable::kMaxTensors];
  for (size_t i = 0; i < features.size(); ++i) in[i] = run.in[i].data();
  for (size_t o = 0; o < sig.num_outputs(); ++o) out[o] = run.out[o].data();
  const size_t plan = sig.acquire_plan(first_plan);
  sig.run(plan, batch, in, out);
  sig.release_plan(plan);
  run.batch = batch;
  return {};
}

ExampleVerdict resolve_inference_tasks(const Servable& sv, const std::vector<InferenceTaskSpec>& tasks,
                                       std::vector<ResolvedTask>& out) {
  out.clear();
  std::string model, input_tensor;
  for (const InferenceTaskSpec& t : tasks) {
    if (t.model_name.empty()) return invalid("Found ModelSpec with an empty model name.");
    if (model.empty()) model = t.model_name;
    if (t.model_name != model) return invalid("All ModelSpecs in a MultiInferenceRequest must access the same model name.");
    const std::string name = t.signature_name.empty() ? "serving_default" : t.signature_name;
    if (std::any_of(out.begin(), out.end(), [&](const ResolvedTask& r) { return r.signature_key == name; })) {
      return invalid("Duplicate evaluation of signature: " + name);
    }
    const ServedSignature* sig = sv.signature(name);
    if (!sig) return invalid("Requested signature not found in model graph: " + name);
    ResolvedTask r;
    r.signature_key = name;
    if (t.method_name == kClassifyMethod) {
      r.method = ExampleMethod::Classify;
    } else if (t.method_name == kRegressMethod) {
      r.method = ExampleMethod::Regress;
    } else {
      return {StatusCode::Unimplemented, "Unsupported signature method_name: " + t.method_name};
    }
    std::string problem = example_signature_problem(*sig, r.method, sv.method_name_check());
    if (!problem.empty()) return invalid(std::move(problem));
    const SignatureTensor& in = sig->inputs[0];  // exactly one, named "inputs" (checked above)
    if (input_tensor.empty()) input_tensor = in.tensor_name;
    if (in.tensor_name != input_tensor) return invalid("Input tensor must be the same for all Signatures.");
    r.signature = sv.example_signature(name);
    if (!r.signature) return not_examples(*sig);
    if (!r.signature->verdict(r.method).ok()) return r.signature->verdict(r.method);
    out.push_back(std::move(r));
  }
  return {};
}

}  // namespace tickinfer::serving
