#include "serving/grpc_server.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <climits>
#include <cmath>
#include <cstring>

#include "serving/batch_scheduler.hpp"
#include "serving/grpc_h2_server.hpp"
#include "serving/proto_wire.hpp"
#include "serving/http_server.hpp"  // monotonic_ns
#include "tensorflow_serving/apis/model_service.grpc.pb.h"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace tfs = tensorflow::serving;

namespace {

grpc::Status status(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

// Finds the model the spec names; NOT_FOUND otherwise.
grpc::Status find_model(const RepositorySnapshot& snap, const tfs::ModelSpec& spec, const ModelSnapshot*& model) {
  model = snap.find(spec.name());
  if (!model) return status(grpc::StatusCode::NOT_FOUND, "Could not find any versions of model " + spec.name());
  return grpc::Status::OK;
}

// The servable a ModelSpec names (version, label or latest), as TF Serving resolves it.
grpc::Status resolve(const RepositorySnapshot& snap, const tfs::ModelSpec& spec,
                     std::shared_ptr<const Servable>& out) {
  const ModelSnapshot* model = snap.find(spec.name());
  std::string what = "Latest(" + spec.name() + ")";
  if (model) {
    switch (spec.version_choice_case()) {
      case tfs::ModelSpec::kVersion:
        out = model->find_version(spec.version().value());
        what = "Specific(" + spec.name() + ", " + std::to_string(spec.version().value()) + ")";
        break;
      case tfs::ModelSpec::kVersionLabel: {
        const auto it = model->labels.find(spec.version_label());
        if (it == model->labels.end()) {
          return status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Unrecognized servable version label: " + spec.version_label());
        }
        out = model->find_version(it->second);
        what = "Specific(" + spec.name() + ", " + std::to_string(it->second) + ")";
        break;
      }
      default:
        if (!model->available.empty()) out = model->available.back();
    }
    if (out) return grpc::Status::OK;
  }
  return status(grpc::StatusCode::NOT_FOUND, "Servable not found for request: " + what);
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[-1";
  for (int64_t d : s) t += "," + std::to_string(d);
  return t + "]";
}

// Converts one input TensorProto to `batch` rows of floats for `spec`. Accepts tensor_content
// or the typed *_val list of its dtype (one value fills the whole shape).
grpc::Status to_floats(const tensorflow::TensorProto& t, const TensorSpec& spec, const PredictLimits& limits,
                       std::vector<float>& out, int64_t& batch) {
  const auto& dims = t.tensor_shape().dim();
  const std::string name = "input '" + spec.name + "'";
  bool shape_ok = !t.tensor_shape().unknown_rank() && static_cast<size_t>(dims.size()) == spec.shape.size() + 1;
  for (size_t i = 0; shape_ok && i < spec.shape.size(); ++i) shape_ok = dims[static_cast<int>(i + 1)].size() == spec.shape[i];
  if (!shape_ok || dims[0].size() < 1) {
    std::string got = "[";
    for (int i = 0; i < dims.size(); ++i) got += (i ? "," : "") + std::to_string(dims[i].size());
    return status(grpc::StatusCode::INVALID_ARGUMENT,
                  name + " must have shape " + shape_text(spec.shape) + "; got " + got + "]");
  }
  batch = dims[0].size();
  if (static_cast<uint64_t>(batch) > limits.max_batch) {
    return status(grpc::StatusCode::INVALID_ARGUMENT, "batch of " + std::to_string(batch) +
                                                          " exceeds this server's limit of " +
                                                          std::to_string(limits.max_batch));
  }
  const size_t n = static_cast<size_t>(batch) * spec.size;
  out.resize(n);
  const int dtype = t.dtype();
  auto wrong_count = [&](size_t have) {
    return status(grpc::StatusCode::INVALID_ARGUMENT, name + " holds " + std::to_string(have) +
                                                          " values; its shape needs " + std::to_string(n));
  };
  if (!t.tensor_content().empty()) {
    size_t width = 0;
    switch (dtype) {
      case tensorflow::DT_FLOAT: case tensorflow::DT_INT32: width = 4; break;
      case tensorflow::DT_DOUBLE: case tensorflow::DT_INT64: width = 8; break;
      case tensorflow::DT_INT16: case tensorflow::DT_UINT16: width = 2; break;
      case tensorflow::DT_INT8: case tensorflow::DT_UINT8: case tensorflow::DT_BOOL: width = 1; break;
      default:
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + ": dtype " + tensorflow::DataType_Name(static_cast<tensorflow::DataType>(dtype)) +
                          " cannot be converted to DT_FLOAT");
    }
    const std::string& c = t.tensor_content();
    if (c.size() != n * width) return wrong_count(c.size() / width);
    const char* p = c.data();
    for (size_t i = 0; i < n; ++i, p += width) {
      switch (dtype) {
        case tensorflow::DT_FLOAT: std::memcpy(&out[i], p, 4); break;
        case tensorflow::DT_INT32: { int32_t v; std::memcpy(&v, p, 4); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_DOUBLE: { double v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_INT64: { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_INT16: { int16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
        case tensorflow::DT_UINT16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
        case tensorflow::DT_INT8: out[i] = static_cast<int8_t>(*p); break;
        case tensorflow::DT_UINT8: out[i] = static_cast<uint8_t>(*p); break;
        default: out[i] = *p ? 1.0f : 0.0f;
      }
    }
  } else {
    auto fill = [&](const auto& vals) -> grpc::Status {
      const size_t have = static_cast<size_t>(vals.size());
      if (have == 1) {
        std::fill(out.begin(), out.end(), static_cast<float>(vals.Get(0)));
      } else if (have == n) {
        for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(vals.Get(static_cast<int>(i)));
      } else {
        return wrong_count(have);
      }
      return grpc::Status::OK;
    };
    grpc::Status s;
    switch (dtype) {
      case tensorflow::DT_FLOAT: s = fill(t.float_val()); break;
      case tensorflow::DT_DOUBLE: s = fill(t.double_val()); break;
      case tensorflow::DT_INT32: case tensorflow::DT_INT16: case tensorflow::DT_INT8:
      case tensorflow::DT_UINT8: case tensorflow::DT_UINT16: s = fill(t.int_val()); break;
      case tensorflow::DT_INT64: s = fill(t.int64_val()); break;
      case tensorflow::DT_BOOL: s = fill(t.bool_val()); break;
      default:
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + ": dtype " + tensorflow::DataType_Name(static_cast<tensorflow::DataType>(dtype)) +
                          " cannot be converted to DT_FLOAT");
    }
    if (!s.ok()) return s;
  }
  if (limits.nonfinite == NonFinitePolicy::Reject) {
    for (float v : out) {
      if (!std::isfinite(v)) {
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + " holds NaN or Infinity; this server refuses non-finite inputs (--nonfinite_inputs=reject)");
      }
    }
  }
  return grpc::Status::OK;
}

void fill_tensor_info(tensorflow::TensorInfo& info, const TensorSpec& t, const std::string& tensor_name) {
  info.set_name(tensor_name);
  info.set_dtype(tensorflow::DT_FLOAT);
  auto* shape = info.mutable_tensor_shape();
  shape->add_dim()->set_size(-1);
  for (int64_t d : t.shape) shape->add_dim()->set_size(d);
}

StatusCode our_code(grpc::StatusCode c) { return static_cast<StatusCode>(static_cast<int>(c)); }

}  // namespace

struct GrpcServer::Services {
  struct Prediction final : tfs::PredictionService::Service {
    const ModelRepository* repo;
    Metrics* metrics;
    GrpcOptions options;

    grpc::Status Predict(grpc::ServerContext*, const tfs::PredictRequest* req, tfs::PredictResponse* resp) override {
      const uint64_t received = monotonic_ns();
      const auto snap = repo->snapshot();
      const ModelSnapshot* model = snap->find(req->model_spec().name());
      ModelMetrics& mm = model && model->metrics ? *model->metrics : metrics->unknown_model();
      grpc::Status st = run(*snap, *req, *resp, mm, received);
      mm.count(our_code(st.error_code()));
      return st;
    }

    grpc::Status run(const RepositorySnapshot& snap, const tfs::PredictRequest& req, tfs::PredictResponse& resp,
                     ModelMetrics& mm, uint64_t received) {
      std::shared_ptr<const Servable> sv;
      grpc::Status st = resolve(snap, req.model_spec(), sv);
      if (!st.ok()) return st;
      const std::string& sig = req.model_spec().signature_name();
      if (!sig.empty() && sig != "serving_default") {
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
      const float* ip[Servable::kMaxTensors];
      float* op[Servable::kMaxTensors];
      for (size_t i = 0; i < specs.size(); ++i) ip[i] = in[i].data();
      for (size_t o = 0; o < outs.size(); ++o) {
        out[o].resize(static_cast<size_t>(batch) * outs[o].size);
        op[o] = out[o].data();
      }
      const uint64_t start = monotonic_ns();
      uint64_t queue_ns = start - received, compute_ns = 0;
      if (options.batching) {
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

    grpc::Status GetModelMetadata(grpc::ServerContext*, const tfs::GetModelMetadataRequest* req,
                                  tfs::GetModelMetadataResponse* resp) override {
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
      grpc::Status st = resolve(*snap, req->model_spec(), sv);
      if (!st.ok()) return st;
      auto* spec = resp->mutable_model_spec();
      spec->set_name(req->model_spec().name());
      spec->mutable_version()->set_value(sv->version());
      tfs::SignatureDefMap map;
      tensorflow::SignatureDef& def = (*map.mutable_signature_def())["serving_default"];
      def.set_method_name("tensorflow/serving/predict");
      for (const auto& t : sv->inputs()) fill_tensor_info((*def.mutable_inputs())[t.name], t, "serving_default_" + t.name + ":0");
      for (size_t i = 0; i < sv->outputs().size(); ++i) {
        const auto& t = sv->outputs()[i];
        fill_tensor_info((*def.mutable_outputs())[t.name], t, "StatefulPartitionedCall:" + std::to_string(i));
      }
      (*resp->mutable_metadata())["signature_def"].PackFrom(map);
      return grpc::Status::OK;
    }
  };

  struct Model final : tfs::ModelService::Service {
    const ModelRepository* repo;
    grpc::Status GetModelStatus(grpc::ServerContext*, const tfs::GetModelStatusRequest* req,
                                tfs::GetModelStatusResponse* resp) override {
      const auto snap = repo->snapshot();
      const ModelSnapshot* model = nullptr;
      grpc::Status st = find_model(*snap, req->model_spec(), model);
      if (!st.ok()) return st;
      int64_t want = -1;
      if (req->model_spec().version_choice_case() == tfs::ModelSpec::kVersion) {
        want = req->model_spec().version().value();
      } else if (req->model_spec().version_choice_case() == tfs::ModelSpec::kVersionLabel) {
        const auto it = model->labels.find(req->model_spec().version_label());
        if (it == model->labels.end()) {
          return status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Unrecognized servable version label: " + req->model_spec().version_label());
        }
        want = it->second;
      }
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
  };

  Prediction prediction;
  Model model;
};

namespace {

// grpc.health.v1.HealthCheckResponse is one enum, field 1 (SERVING = 1, NOT_SERVING = 2,
// SERVICE_UNKNOWN = 3): encoded here by hand; the request is read by proto_wire.cpp.
bool health_service_known(const std::string& s) {
  return s.empty() || s == "tensorflow.serving.PredictionService" || s == "tensorflow.serving.ModelService" ||
         s == "PredictionService" || s == "ModelService";
}

// Parses the request, runs the method, serializes the answer (or the status) into the reply.
template <class Req, class Resp, class Method>
void run_unary(const GrpcCall& call, GrpcReply& reply, Method&& method) {
  thread_local Req req;
  thread_local Resp resp;
  req.Clear();
  resp.Clear();
  if (!req.ParseFromArray(call.message.data(), static_cast<int>(call.message.size()))) {
    reply.code = static_cast<int>(grpc::StatusCode::INTERNAL);
    reply.error_message = "could not parse the request message";
    return;
  }
  const grpc::Status st = method(req, resp);
  if (!st.ok()) {
    reply.code = static_cast<int>(st.error_code());
    reply.error_message = st.error_message();
    return;
  }
  resp.SerializeToString(&reply.body);
}

}  // namespace

GrpcServer::GrpcServer(const ModelRepository& repo, Metrics& metrics, GrpcOptions options)
    : services_(std::make_unique<Services>()) {
  services_->prediction.repo = &repo;
  services_->prediction.metrics = &metrics;
  services_->prediction.options = options;
  services_->model.repo = &repo;
  if (options.native && !options.tls && options.unix_socket.empty()) {
    start_native(options);
    return;
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (options.tls) {
    grpc::SslServerCredentialsOptions ssl(options.tls_client_verify
                                              ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    ssl.pem_root_certs = options.tls_ca;
    ssl.pem_key_cert_pairs.push_back({options.tls_key, options.tls_cert});
    creds = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(options.address, creds, &port_);
  if (!options.unix_socket.empty()) {
    builder.AddListeningPort("unix:" + options.unix_socket, grpc::InsecureServerCredentials());
  }
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  // One completion queue with a small, fixed set of polling threads that also run the calls:
  // a call is handled on the thread that polled it (no hand-off), at most `threads` at once.
  const int pollers = static_cast<int>(std::max<size_t>(options.threads, 1));
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, pollers);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, pollers + 1);
  builder.RegisterService(&services_->prediction);
  builder.RegisterService(&services_->model);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) throw Error("cannot listen for gRPC on " + options.address);
  set_serving(false);
}

void GrpcServer::start_native(const GrpcOptions& options) {
  const auto colon = options.address.rfind(':');
  if (colon == std::string::npos) throw Error("gRPC address '" + options.address + "' has no port");
  std::string host = options.address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  int port = 0;
  try {
    port = std::stoi(options.address.substr(colon + 1));
  } catch (const std::exception&) {
    throw Error("gRPC address '" + options.address + "' has no numeric port");
  }
  GrpcH2Server::Options o;
  o.bind_address = host;
  o.port = port;
  o.threads = std::max<size_t>(options.threads, 1);
  Services* sv = services_.get();
  native_ = std::make_unique<GrpcH2Server>(o, [this, sv](const GrpcCall& call, size_t, GrpcReply& reply) {
    const std::string_view path = call.path;
    // grpc-timeout: a call whose deadline passed before it could run (under batching, say) is not
    // run; one that runs in time finishes (the model takes microseconds).
    if (call.timeout_ns >= 0 && monotonic_ns() - call.received_ns > static_cast<uint64_t>(call.timeout_ns)) {
      reply.code = static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED);
      reply.error_message = "Deadline Exceeded";
      return;
    }
    if (path == "/tensorflow.serving.PredictionService/Predict") {
      run_unary<tfs::PredictRequest, tfs::PredictResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.Predict(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.PredictionService/GetModelMetadata") {
      run_unary<tfs::GetModelMetadataRequest, tfs::GetModelMetadataResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.GetModelMetadata(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.ModelService/GetModelStatus") {
      run_unary<tfs::GetModelStatusRequest, tfs::GetModelStatusResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->model.GetModelStatus(nullptr, &q, &r);
      });
    } else if (path == "/grpc.health.v1.Health/Check" || path == "/grpc.health.v1.Health/Watch") {
      // Check answers once; Watch keeps the stream open and sends the status again whenever it
      // changes (set_serving refreshes the open streams). An unknown service is NOT_FOUND for
      // Check and SERVICE_UNKNOWN (3) for Watch, as the health protocol says.
      const bool watch = path.back() == 'h';
      std::string service;
      bool parsed = true;
      try {
        service = decode_health_check_request(call.message, "HealthCheckRequest");
      } catch (const Error&) {
        parsed = false;
      }
      if (!parsed) {
        reply.code = static_cast<int>(grpc::StatusCode::INTERNAL);
        reply.error_message = "could not parse the request message";
      } else if (!health_service_known(service)) {
        if (watch) {
          reply.body.assign({'\x08', '\x03'});
          reply.keep_open = true;
        } else {
          reply.code = static_cast<int>(grpc::StatusCode::NOT_FOUND);
          reply.error_message = "unknown service " + service;
        }
      } else {
        reply.body.assign({'\x08', serving_.load() ? '\x01' : '\x02'});
        reply.keep_open = watch;
      }
    } else {
      reply.code = static_cast<int>(grpc::StatusCode::UNIMPLEMENTED);
      reply.error_message = "Method not found: " + std::string(path);
    }
  });
  port_ = native_->port();
  native_->start();
}

GrpcServer::~GrpcServer() { stop(); }

void GrpcServer::set_serving(bool ready) {
  serving_.store(ready);
  if (native_) native_->refresh_streams();
  if (!server_) return;
  auto* health = server_->GetHealthCheckService();
  if (!health) return;
  for (const char* name : {"", "tensorflow.serving.PredictionService", "tensorflow.serving.ModelService",
                           "PredictionService", "ModelService"}) {
    health->SetServingStatus(name, ready);
  }
}

void GrpcServer::stop() {
  if (native_) {
    native_->stop();
    native_.reset();
  }
  if (server_) {
    server_->Shutdown();
    server_->Wait();
    server_.reset();
  }
}

}  // namespace tickinfer::serving
