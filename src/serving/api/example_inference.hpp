#pragma once
// What Classify, Regress and MultiInference share between REST and gRPC: finding the signature
// a request names with TF Serving's checks and messages, and running serialized tf.Examples
// through it (decode into the dense features, run the signature's plans).
//
// Functions return an ExampleVerdict (OK, or the code and message to answer); nothing throws
// except std::bad_alloc.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "serving/example_decoder.hpp"
#include "serving/example_signature.hpp"
#include "serving/servable.hpp"

namespace tickinfer::serving {

// The examples of one request, as views of the bytes that arrived: `context` ("" = none) is
// merged under every example.
struct ExampleInput {
  std::string_view context;
  std::vector<std::string_view> examples;
};

// Per thread, reused: capacity grows to the largest request seen.
struct ExampleRun {
  ExampleScratch decode;
  std::vector<std::vector<float>> in, out;  // per feature / per output: batch * size floats
  size_t batch = 0;
};

// The signature `signature_name` ("" = serving_default) of `sv` for `method`, as TF Serving's
// GetClassificationSignatureDef / GetRegressionSignatureDef find it: "No signature was found with
// the name: ...", the method-name check (when the servable was loaded with it), the shape of the
// SignatureDef (PreProcess*), then whether tickinfer can run it.
ExampleVerdict find_example_signature(const Servable& sv, const std::string& signature_name, ExampleMethod method,
                                      const ExampleSignature*& out);

// Decodes `input` (at most `max_examples`, "Input is empty." when none) and runs `sig` on a plan
// taken from `first_plan` on; run.out[o] then holds run.batch * sig.output_size(o) floats.
ExampleVerdict run_examples(const ExampleSignature& sig, const ExampleInput& input, size_t max_examples,
                            const ExampleDecodeOptions& options, size_t first_plan, ExampleRun& run);

// One task of a MultiInferenceRequest, by signature name and method name.
struct InferenceTaskSpec {
  std::string model_name, signature_name, method_name;
};
struct ResolvedTask {
  const ExampleSignature* signature = nullptr;
  ExampleMethod method = ExampleMethod::Classify;
  std::string signature_key;  // "" resolved to serving_default
};
// TF Serving's MultiInference rules (multi_inference.cc): every task names the same, non-empty
// model; signatures are distinct and exist; method_name is classify (INVALID_ARGUMENT) or regress,
// else UNIMPLEMENTED; every signature reads the same input tensor.
ExampleVerdict resolve_inference_tasks(const Servable& sv, const std::vector<InferenceTaskSpec>& tasks,
                                       std::vector<ResolvedTask>& out);

}  // namespace tickinfer::serving
