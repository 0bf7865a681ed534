// PredictionService's Classify, Regress and MultiInference (grpc_services.hpp): TF Serving's
// answers over the model repository's example signatures (example_inference.hpp). Each call is
// counted in the model's request_count and, when it succeeds, its request_latency (API Classify /
// Regress / MultiInference); they are not put through server-side batching.
#include <algorithm>

#include "serving/api/grpc_services.hpp"
#include "serving/http1/http_server.hpp"  // monotonic_ns
#include "serving/request_log.hpp"

namespace tickinfer::serving {

namespace tfs = tensorflow::serving;

namespace {

grpc::Status to_grpc(const ExampleVerdict& v) {
  if (v.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(v.code)), v.message);
}

// The examples of an Input, as views of the request's bytes (none when its kind is unset).
ExampleInput input_of(const tfs::Input& in) {
  ExampleInput out;
  if (in.has_example_list()) {
    for (const std::string& e : in.example_list().examples()) out.examples.emplace_back(e);
  } else if (in.has_example_list_with_context()) {
    const auto& l = in.example_list_with_context();
    out.context = l.context();
    for (const std::string& e : l.examples()) out.examples.emplace_back(e);
  }
  return out;
}

// TF Serving's MakeModelSpec: the request's name, the servable's version, the signature name
// ("" becomes serving_default).
void set_model_spec(tfs::ModelSpec& spec, const std::string& name, int64_t version, const std::string& signature) {
  spec.Clear();
  spec.set_name(name);
  spec.mutable_version()->set_value(version);
  spec.set_signature_name(signature.empty() ? "serving_default" : signature);
}

void fill_classifications(const ExampleSignature& sig, const ExampleRun& run, tfs::ClassificationResult& result) {
  const float* scores = sig.scores_output() >= 0 ? run.out[static_cast<size_t>(sig.scores_output())].data() : nullptr;
  const size_t n = sig.num_classes();
  for (size_t r = 0; r < run.batch; ++r) {
    tfs::Classifications* c = result.add_classifications();
    for (size_t k = 0; k < n; ++k) {
      tfs::Class* cl = c->add_classes();
      if (!sig.labels().empty()) cl->set_label(sig.labels()[k]);
      if (scores) cl->set_score(scores[r * n + k]);
    }
  }
}

void fill_regressions(const ExampleSignature& sig, const ExampleRun& run, tfs::RegressionResult& result) {
  const float* values = run.out[static_cast<size_t>(sig.regress_output())].data();
  for (size_t r = 0; r < run.batch; ++r) result.add_regressions()->set_value(values[r]);
}

// One call, counted: `body` answers it given the model snapshot, its metrics and the receive
// time, and returns its status.
template <class Body>
grpc::Status counted(const ModelRepository& repo, Metrics& metrics, const std::string& model_name, ExampleApi api, Body&& body) {
  const uint64_t received = monotonic_ns();
  const auto snap = repo.snapshot();
  const ModelSnapshot* model = snap->find(model_name);
  ModelMetrics& mm = model && model->metrics ? *model->metrics : metrics.unknown_model();
  const grpc::Status st = body(model, mm, received);
  mm.count(static_cast<StatusCode>(static_cast<int>(st.error_code())));
  if (st.ok()) {
    mm.example_latency[static_cast<size_t>(api)][1].record_us(static_cast<double>(monotonic_ns() - received) / 1000.0);
  }
  return st;
}

}  // namespace

grpc::Status GrpcPredictionService::Classify(grpc::ServerContext*, const tfs::ClassificationRequest* req,
                                             tfs::ClassificationResponse* resp) {
  return counted(*repo, *metrics, req->model_spec().name(), ExampleApi::Classify,
                 [&](const ModelSnapshot* model, const ModelMetrics& mm, uint64_t received) {
                   ExampleTrace trace;
                   grpc::Status st = resolve_model_spec(model, req->model_spec(), trace.servable);
                   if (st.ok()) st = run_signature(req->model_spec(), req->input(), *trace.servable, ExampleMethod::Classify, trace);
                   if (st.ok()) {
                     set_model_spec(*resp->mutable_model_spec(), req->model_spec().name(), trace.servable->version(),
                                    req->model_spec().signature_name());
                     fill_classifications(*trace.signature, *trace.run, *resp->mutable_result());
                   }
                   log_examples(mm, LoggedMethod::Classify, trace, st, req->model_spec().signature_name(), received);
                   return st;
                 });
}

grpc::Status GrpcPredictionService::Regress(grpc::ServerContext*, const tfs::RegressionRequest* req,
                                            tfs::RegressionResponse* resp) {
  return counted(*repo, *metrics, req->model_spec().name(), ExampleApi::Regress,
                 [&](const ModelSnapshot* model, const ModelMetrics& mm, uint64_t received) {
                   ExampleTrace trace;
                   grpc::Status st = resolve_model_spec(model, req->model_spec(), trace.servable);
                   if (st.ok()) st = run_signature(req->model_spec(), req->input(), *trace.servable, ExampleMethod::Regress, trace);
                   if (st.ok()) {
                     set_model_spec(*resp->mutable_model_spec(), req->model_spec().name(), trace.servable->version(),
                                    req->model_spec().signature_name());
                     fill_regressions(*trace.signature, *trace.run, *resp->mutable_result());
                   }
                   log_examples(mm, LoggedMethod::Regress, trace, st, req->model_spec().signature_name(), received);
                   return st;
                 });
}

grpc::Status GrpcPredictionService::MultiInference(grpc::ServerContext*, const tfs::MultiInferenceRequest* req,
                                                   tfs::MultiInferenceResponse* resp) {
  // The servable is the one the first task names (TF Serving's GetModelSpecFromRequest).
  const tfs::ModelSpec& spec = req->tasks_size() > 0 ? req->tasks(0).model_spec() : tfs::ModelSpec::default_instance();
  return counted(*repo, *metrics, spec.name(), ExampleApi::MultiInference,
                 [&](const ModelSnapshot* model, const ModelMetrics& mm, uint64_t received) {
                   std::shared_ptr<const Servable> sv;
                   grpc::Status st = resolve_model_spec(model, spec, sv);
                   if (!st.ok()) {
                     ExampleTrace trace;
                     log_examples(mm, LoggedMethod::Classify, trace, st, spec.signature_name(), received);
                     return st;
                   }
                   return multi_inference(*req, *resp, sv, mm, received);
                 });
}

void GrpcPredictionService::log_examples(const ModelMetrics& mm, LoggedMethod method, const ExampleTrace& t,
                                         const grpc::Status& st, const std::string& signature,
                                         uint64_t received) noexcept {
  RequestLog* const request_log = options.request_log;
  if (!request_log) return;
  const size_t ring = options.first_log_ring + std::max<size_t>(options.threads, 1);  // the shared ring
  std::lock_guard<std::mutex> lock(log_mutex_);
  if (!request_log->sample(ring)) return;
  RequestLogEntry e;
  e.api = LoggedApi::Grpc;
  e.method = method;
  e.model = mm.name;
  e.version = t.servable ? t.servable->version() : -1;
  e.status = static_cast<StatusCode>(static_cast<int>(st.error_code()));
  e.message = st.error_message();
  e.signature = signature.empty() && t.signature ? std::string_view(t.signature->key()) : std::string_view(signature);
  e.queue_ns = t.start_ns ? t.start_ns - received : 0;
  e.compute_ns = t.done_ns ? t.done_ns - t.start_ns : 0;
  e.total_ns = monotonic_ns() - received;
  const float* in[Servable::kMaxTensors];
  float* out[Servable::kMaxTensors];
  if (t.run && t.signature) {
    e.batch = static_cast<uint32_t>(t.run->batch);
    for (size_t i = 0; i < t.run->in.size() && i < Servable::kMaxTensors; ++i) in[i] = t.run->in[i].data();
    for (size_t o = 0; o < t.run->out.size() && o < Servable::kMaxTensors; ++o) {
      out[o] = const_cast<float*>(t.run->out[o].data());
    }
    e.input_specs = &t.signature->logged_inputs();
    e.inputs = in;
    e.output_specs = &t.signature->logged_outputs();
    e.outputs = out;
  }
  request_log->record(ring, e);
}

grpc::Status GrpcPredictionService::run_signature(const tfs::ModelSpec& spec, const tfs::Input& input,
                                                  const Servable& sv, ExampleMethod method, ExampleTrace& trace) {
  const ExampleSignature* sig = nullptr;
  ExampleVerdict v = find_example_signature(sv, spec.signature_name(), method, sig);
  if (!v.ok()) return to_grpc(v);
  trace.signature = sig;
  thread_local ExampleRun run;
  const ExampleDecodeOptions decode{options.limits.nonfinite == NonFinitePolicy::Reject};
  trace.start_ns = monotonic_ns();
  v = run_examples(*sig, input_of(input), options.limits.max_batch, decode, options.first_plan, run);
  if (!v.ok()) return to_grpc(v);
  trace.done_ns = monotonic_ns();
  trace.run = &run;
  return grpc::Status::OK;
}

grpc::Status GrpcPredictionService::multi_inference(const tfs::MultiInferenceRequest& req, tfs::MultiInferenceResponse& resp,
                                                    const std::shared_ptr<const Servable>& servable,
                                                    const ModelMetrics& mm, uint64_t received) {
  const Servable& sv = *servable;
  std::vector<InferenceTaskSpec> specs;
  for (const tfs::InferenceTask& t : req.tasks()) {
    specs.push_back({t.model_spec().name(), t.model_spec().signature_name(), t.method_name()});
  }
  std::vector<ResolvedTask> tasks;
  ExampleVerdict v = resolve_inference_tasks(sv, specs, tasks);
  ExampleTrace trace;
  trace.servable = servable;
  if (!v.ok()) {
    const grpc::Status st = to_grpc(v);
    log_examples(mm, LoggedMethod::Classify, trace, st, specs.empty() ? std::string() : specs[0].signature_name, received);
    return st;
  }
  const ExampleInput input = input_of(req.input());
  const ExampleDecodeOptions decode{options.limits.nonfinite == NonFinitePolicy::Reject};
  thread_local ExampleRun run;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ResolvedTask& t = tasks[i];
    const LoggedMethod method = t.method == ExampleMethod::Classify ? LoggedMethod::Classify : LoggedMethod::Regress;
    trace.signature = t.signature;
    trace.run = nullptr;
    trace.start_ns = monotonic_ns();
    v = run_examples(*t.signature, input, options.limits.max_batch, decode, options.first_plan, run);
    if (!v.ok()) {
      trace.start_ns = 0;
      const grpc::Status st = to_grpc(v);
      log_examples(mm, method, trace, st, t.signature_key, received);
      return st;
    }
    trace.done_ns = monotonic_ns();
    trace.run = &run;
    log_examples(mm, method, trace, grpc::Status::OK, t.signature_key, received);
    tfs::InferenceResult* r = resp.add_results();
    set_model_spec(*r->mutable_model_spec(), specs[i].model_name, sv.version(), t.signature_key);
    if (t.method == ExampleMethod::Classify) {
      fill_classifications(*t.signature, run, *r->mutable_classification_result());
    } else {
      fill_regressions(*t.signature, run, *r->mutable_regression_result());
    }
  }
  return grpc::Status::OK;
}

}  // namespace tickinfer::serving
