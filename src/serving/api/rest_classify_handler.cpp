// POST /v1/models/{name}[/versions/{N}|/labels/{L}]:classify and :regress, as TF Serving's
// http_rest_api_handler answers them: the JSON body becomes serialized tf.Examples first
// (example_json.hpp; its errors are 400 whatever the model), then the servable is resolved and
// the signature found and run (example_inference.hpp). Counted in the model's request_count and,
// on success, its request_latency (API "classify" / "regress", entrypoint REST). Not put through
// server-side batching.
#include <string>

#include "serving/api/rest_handlers.hpp"

namespace tickinfer::serving {

namespace {

void handle_examples(RestCall& call, ExampleMethod method) {
  RestScratch& s = call.s;
  const RestOptions& options = call.options;
  call.method = method == ExampleMethod::Classify ? LoggedMethod::Classify : LoggedMethod::Regress;
  if (!s.doc.parse(call.req.body)) {
    call.fail_counted(StatusCode::InvalidArgument, "JSON Parse error: " + s.doc.error());
    return;
  }
  if (!decode_example_request_json(s.doc, options.limits.max_batch, s.examples, s.error)) {
    call.fail_counted(StatusCode::InvalidArgument, s.error);
    return;
  }
  if (!resolve_servable(call)) return;
  const Servable& sv = *call.servable;
  const ExampleSignature* sig = nullptr;
  call.signature = s.examples.signature_name;
  ExampleVerdict v = find_example_signature(sv, s.examples.signature_name, method, sig);
  if (sig && s.examples.signature_name.empty()) call.signature = sig->key();
  if (!v.ok()) {
    call.fail_counted(v.code, v.message);
    return;
  }
  const uint64_t start = monotonic_ns();
  if (start - call.received_ns > options.timeout_ns) {
    call.fail_counted(StatusCode::DeadlineExceeded, "request deadline exceeded before compute");
    return;
  }
  ExampleInput input;
  input.context = s.examples.context;
  for (const std::string& e : s.examples.examples) input.examples.emplace_back(e);
  const ExampleDecodeOptions decode{options.limits.nonfinite == NonFinitePolicy::Reject};
  ExampleRun& run = s.example_run;
  v = run_examples(*sig, input, options.limits.max_batch, decode, call.worker, run);
  if (!v.ok()) {
    call.fail_counted(v.code, v.message);
    return;
  }
  const uint64_t done = monotonic_ns();
  // The decoded features and the outputs, for the request log (scratch capacity kept: grow once).
  s.in_ptr.clear();
  s.out_ptr.clear();
  for (auto& v_in : run.in) s.in_ptr.push_back(v_in.data());
  for (auto& v_out : run.out) s.out_ptr.push_back(v_out.data());
  call.batch = run.batch;
  call.logged_inputs = &sig->logged_inputs();
  call.logged_outputs = &sig->logged_outputs();
  if (method == ExampleMethod::Classify) {
    const float* scores = sig->scores_output() >= 0 ? run.out[static_cast<size_t>(sig->scores_output())].data() : nullptr;
    encode_classify_response_json(run.batch, sig->num_classes(), sig->labels(), scores, call.resp.body);
  } else {
    encode_regress_response_json(run.batch, run.out[static_cast<size_t>(sig->regress_output())].data(), call.resp.body);
  }
  ModelMetrics& mm = *call.model_metrics;
  mm.count(StatusCode::Ok);
  const auto api = static_cast<size_t>(method == ExampleMethod::Classify ? ExampleApi::Classify : ExampleApi::Regress);
  mm.example_latency[api][0].record_us(static_cast<double>(monotonic_ns() - call.received_ns) / 1000.0);
  call.start_ns = start;
  call.done_ns = done;
}

}  // namespace

void handle_classify(RestCall& call) { handle_examples(call, ExampleMethod::Classify); }

void handle_regress(RestCall& call) { handle_examples(call, ExampleMethod::Regress); }

}  // namespace tickinfer::serving
