// The gRPC services' methods (grpc_services.hpp): TF Serving's Predict, GetModelMetadata and
// GetModelStatus answers over the model repository.
#include "serving/api/grpc_services.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "serving/api/grpc_tensors.hpp"
#include "serving/api/resolve.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/http1/http_server.hpp"  // monotonic_ns
#include "serving/request_log.hpp"

namespace tickinfer::serving {

namespace tfs = tensorflow::serving;

namespace {

grpc::Status status(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

ServableRequest servable_request(const tfs::ModelSpec& spec) {
  ServableRequest r;
  switch (spec.version_choice_case()) {
    case tfs::ModelSpec::kVersion:
      r.choice = VersionChoice::Version;
      r.version = spec.version().value();
      break;
    case tfs::ModelSpec::kVersionLabel:
      r.choice = VersionChoice::Label;
      r.label = spec.version_label();
      break;
    default:
      break;
  }
  return r;
}

grpc::Status unknown_label(const tfs::ModelSpec& spec) {
  return status(grpc::StatusCode::INVALID_ARGUMENT, "Unrecognized servable version label: " + spec.version_label());
}

// The servable a ModelSpec names (version, label or latest), with TF Serving's gRPC answers.
grpc::Status resolve_servable(const ModelSnapshot* model, const tfs::ModelSpec& spec,
                              std::shared_ptr<const Servable>& out) {
  ResolvedServable found = resolve(model, servable_request(spec));
  if (found.outcome == ResolveOutcome::Found) {
    out = std::move(found.servable);
    return grpc::Status::OK;
  }
  if (found.outcome == ResolveOutcome::UnknownLabel) return unknown_label(spec);
  const bool specific = found.model && spec.version_choice_case() != tfs::ModelSpec::VERSION_CHOICE_NOT_SET;
  const std::string what = specific ? "Specific(" + spec.name() + ", " + std::to_string(found.version) + ")"
                                    : "Latest(" + spec.name() + ")";
  return status(grpc::StatusCode::NOT_FOUND, "Servable not found for request: " + what);
}

StatusCode our_code(grpc::StatusCode c) { return static_cast<StatusCode>(static_cast<int>(c)); }

}  // namespace

grpc::Status resolve_model_spec(const ModelSnapshot* model, const tfs::ModelSpec& spec, std::shared_ptr<const Servable>& out) {
  return resolve_servable(model, spec, out);
}

grpc::Status GrpcPredictionService::Predict(grpc::ServerContext*, const tfs::PredictRequest* req,
                                            tfs::PredictResponse* resp) {
  return predict(*req, *resp, kSharedLogRing);
}

grpc::Status GrpcPredictionService::predict(const tfs::PredictRequest& req, tfs::PredictResponse& resp,
                                            size_t log_ring) {
  const uint64_t received = monotonic_ns();
  const auto snap = repo->snapshot();
  const ModelSnapshot* model = snap->find(req.model_spec().name());
  ModelMetrics& mm = model && model->metrics ? *model->metrics : metrics->unknown_model();
  PredictTrace trace;
  grpc::Status st = run(model, req, resp, mm, received, trace);
  mm.count(our_code(st.error_code()));
  log(log_ring, mm, trace, st, received, req);
  return st;
}

void GrpcPredictionService::log(size_t log_ring, const ModelMetrics& mm, const PredictTrace& t, const grpc::Status& st,
                                uint64_t received, const tfs::PredictRequest& req) noexcept {
  RequestLog* const request_log = options.request_log;
  if (!request_log) return;
  const bool shared = log_ring == kSharedLogRing;
  const size_t ring = options.first_log_ring + (shared ? std::max<size_t>(options.threads, 1) : log_ring);
  std::unique_lock<std::mutex> lock(log_mutex_, std::defer_lock);
  if (shared) lock.lock();
  if (!request_log->sample(ring)) return;
  RequestLogEntry e;
  e.api = LoggedApi::Grpc;
  e.model = mm.name;
  e.version = t.servable ? t.servable->version() : -1;
  e.status = our_code(st.error_code());
  e.message = st.error_message();
  const std::string& sig = req.model_spec().signature_name();
  e.signature = sig.empty() && t.servable ? std::string_view(t.servable->served_signature()) : std::string_view(sig);
  e.queue_ns = t.start_ns ? t.start_ns - received : 0;
  e.compute_ns = t.done_ns ? t.done_ns - t.start_ns : 0;
  e.total_ns = monotonic_ns() - received;
  e.batch = static_cast<uint32_t>(t.batch);
  if (t.decoded) {
    e.input_specs = &t.servable->inputs();
    e.inputs = t.in;
  }
  if (t.computed) {
    e.output_specs = &t.servable->outputs();
    e.outputs = t.out;
  }
  request_log->record(ring, e);
}

grpc::Status GrpcPredictionService::run(const ModelSnapshot* model, const tfs::PredictRequest& req,
                                        tfs::PredictResponse& resp, ModelMetrics& mm, uint64_t received,
                                        PredictTrace& trace) {
  std::shared_ptr<const Servable>& sv = trace.servable;
  grpc::Status st = resolve_servable(model, req.model_spec(), sv);
  if (!st.ok()) return st;
  const std::string& sig = req.model_spec().signature_name();
  if (!sv->serves_signature(sig)) {
    return status(grpc::StatusCode::INVALID_ARGUMENT,
                  "Serving signature name: \"" + sig + "\" not found in signature def");
  }
  const auto& specs = sv->inputs();
  for (const auto& [key, value] : req.inputs()) {
    bool known = false;
    for (const auto& s : specs) known = known || s.name == key;
    if (!known) return status(grpc::StatusCode::INVALID_ARGUMENT, "input tensor alias not found in signature: " + key);
  }
  thread_local std::vector<std::vector<float>> in, out;
  if (in.size() < specs.size()) in.resize(specs.size());
  int64_t batch = -1;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto it = req.inputs().find(specs[i].name);
    if (it == req.inputs().end()) {
      return status(grpc::StatusCode::INVALID_ARGUMENT, "Missing named input '" + specs[i].name + "'");
    }
    int64_t b = 0;
    st = to_floats(it->second, specs[i], options.limits, in[i], b);
    if (!st.ok()) return st;
    if (batch >= 0 && b != batch) {
      return status(grpc::StatusCode::INVALID_ARGUMENT, "inputs have different batch sizes");
    }
    batch = b;
  }
  const auto& outs = sv->outputs();
  for (const auto& f : req.output_filter()) {
    bool known = false;
    for (const auto& o : outs) known = known || o.name == f;
    if (!known) return status(grpc::StatusCode::INVALID_ARGUMENT, "output tensor alias not found in signature: " + f);
  }
  if (out.size() < outs.size()) out.resize(outs.size());
  const float** ip = trace.in;
  float** op = trace.out;
  for (size_t i = 0; i < specs.size(); ++i) ip[i] = in[i].data();
  for (size_t o = 0; o < outs.size(); ++o) {
    out[o].resize(static_cast<size_t>(batch) * outs[o].size);
    op[o] = out[o].data();
  }
  trace.batch = static_cast<size_t>(batch);
  trace.decoded = true;
  const uint64_t start = monotonic_ns();
  uint64_t queue_ns = start - received, compute_ns = 0;
  if (options.batching && options.batching->batches(*sv)) {
    const auto br = options.batching->run(sv, static_cast<size_t>(batch), ip, op);
    if (br.code == StatusCode::Unavailable) {
      return status(grpc::StatusCode::UNAVAILABLE, "The batch scheduling queue to which this task was submitted is full");
    }
    if (br.code != StatusCode::Ok) {
      return status(grpc::StatusCode::INVALID_ARGUMENT, "Task size is larger than maximum batch size");
    }
    queue_ns += br.queue_ns;
    compute_ns = br.compute_ns;
  } else {
    const size_t plan = sv->acquire_plan(options.first_plan);
    sv->run(plan, static_cast<size_t>(batch), ip, op);
    sv->release_plan(plan);
    compute_ns = monotonic_ns() - start;
  }
  trace.start_ns = start;
  trace.done_ns = monotonic_ns();  // as REST logs it: the compute window, batch queue included
  trace.computed = true;
  auto* spec = resp.mutable_model_spec();
  spec->set_name(req.model_spec().name());
  spec->mutable_version()->set_value(sv->version());
  spec->set_signature_name("serving_default");
  for (size_t o = 0; o < outs.size(); ++o) {
    if (req.output_filter_size() > 0) {
      bool wanted = false;
      for (const auto& f : req.output_filter()) wanted = wanted || f == outs[o].name;
      if (!wanted) continue;
    }
    tensorflow::TensorProto& t = (*resp.mutable_outputs())[outs[o].name];
    t.set_dtype(tensorflow::DT_FLOAT);
    auto* shape = t.mutable_tensor_shape();
    shape->add_dim()->set_size(batch);
    for (int64_t d : outs[o].shape) shape->add_dim()->set_size(d);
    auto* vals = t.mutable_float_val();
    vals->Resize(static_cast<int>(out[o].size()), 0.0f);
    std::memcpy(vals->mutable_data(), out[o].data(), out[o].size() * sizeof(float));
  }
  const uint64_t end = monotonic_ns();
  mm.latency[1].record_us(static_cast<double>(end - received) / 1000.0);
  mm.queue[1].record_us(static_cast<double>(queue_ns) / 1000.0);
  mm.compute[1].record_us(static_cast<double>(compute_ns) / 1000.0);
  return grpc::Status::OK;
}

grpc::Status GrpcPredictionService::GetModelMetadata(grpc::ServerContext*, const tfs::GetModelMetadataRequest* req,
                                                     tfs::GetModelMetadataResponse* resp) {
  if (req->metadata_field_size() == 0) {
    return status(grpc::StatusCode::INVALID_ARGUMENT,
                  "GetModelMetadataRequest must specify at least one metadata_field");
  }
  for (const auto& f : req->metadata_field()) {
    if (f != "signature_def") {
      return status(grpc::StatusCode::INVALID_ARGUMENT, "Metadata field " + f + " is not supported");
    }
  }
  const auto snap = repo->snapshot();
  std::shared_ptr<const Servable> sv;
  grpc::Status st = resolve_servable(snap->find(req->model_spec().name()), req->model_spec(), sv);
  if (!st.ok()) return st;
  auto* spec = resp->mutable_model_spec();
  spec->set_name(req->model_spec().name());
  spec->mutable_version()->set_value(sv->version());
  tfs::SignatureDefMap map;
  for (const ServedSignature& sig : sv->signatures()) {
    tensorflow::SignatureDef& def = (*map.mutable_signature_def())[sig.key];
    def.set_method_name(sig.method_name);
    for (const auto& t : sig.inputs) fill_tensor_info((*def.mutable_inputs())[t.key], t);
    for (const auto& t : sig.outputs) fill_tensor_info((*def.mutable_outputs())[t.key], t);
  }
  (*resp->mutable_metadata())["signature_def"].PackFrom(map);
  return grpc::Status::OK;
}

grpc::Status GrpcModelService::GetModelStatus(grpc::ServerContext*, const tfs::GetModelStatusRequest* req,
                                              tfs::GetModelStatusResponse* resp) {
  const auto snap = repo->snapshot();
  const ResolvedServable found = resolve(snap->find(req->model_spec().name()), servable_request(req->model_spec()));
  if (found.outcome == ResolveOutcome::UnknownModel) {
    return status(grpc::StatusCode::NOT_FOUND, "Could not find any versions of model " + req->model_spec().name());
  }
  if (found.outcome == ResolveOutcome::UnknownLabel) return unknown_label(req->model_spec());
  const ModelSnapshot* model = found.model;
  const int64_t want = found.version;  // -1 (or a negative version asked for): every version
  for (auto it = model->statuses.rbegin(); it != model->statuses.rend(); ++it) {
    if (want >= 0 && it->version != want) continue;
    auto* v = resp->add_model_version_status();
    v->set_version(it->version);
    v->set_state(static_cast<tfs::ModelVersionStatus::State>(static_cast<int>(it->state)));
    v->mutable_status()->set_error_code(static_cast<tensorflow::error::Code>(static_cast<int>(it->error_code)));
    v->mutable_status()->set_error_message(it->error_message);
  }
  if (resp->model_version_status_size() == 0) {
    return status(grpc::StatusCode::NOT_FOUND,
                  want >= 0 ? "Could not find version " + std::to_string(want) + " of model " + model->name
                            : "Could not find any versions of model " + model->name);
  }
  return grpc::Status::OK;
}

}  // namespace tickinfer::serving
