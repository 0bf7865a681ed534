#include "serving/api/grpc_server.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <climits>

#include "serving/api/grpc_services.hpp"
#include "serving/h2/grpc_h2_server.hpp"
#include "serving/http1/http_server.hpp"  // monotonic_ns
#include "serving/proto_wire.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace tfs = tensorflow::serving;

struct GrpcServer::Services {
  GrpcPredictionService prediction;
  GrpcModelService model;
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

GrpcServer::GrpcServer(ModelRepository& repo, Metrics& metrics, GrpcOptions options)
    : services_(std::make_unique<Services>()) {
  services_->prediction.repo = &repo;
  services_->prediction.metrics = &metrics;
  services_->prediction.options = options;
  services_->model.repo = &repo;
  services_->model.reload = &repo;
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
  // TF Serving's own default is INT32_MAX both ways; --grpc_channel_arguments may lower them.
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes > 0 ? static_cast<int>(options.max_receive_message_bytes) : INT_MAX);
  builder.SetMaxSendMessageSize(options.max_send_message_bytes > 0 ? static_cast<int>(options.max_send_message_bytes) : INT_MAX);
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
  if (options.max_receive_message_bytes > 0) o.limits.max_message_bytes = static_cast<size_t>(options.max_receive_message_bytes);
  const int64_t max_send = options.max_send_message_bytes;
  Services* sv = services_.get();
  native_ = std::make_unique<GrpcH2Server>(o, [this, sv, max_send](const GrpcCall& call, size_t worker, GrpcReply& reply) {
    handle_native(sv, call, worker, reply);
    // grpc.max_send_message_length: an answer larger than that is not sent (as grpc++ refuses it).
    if (max_send > 0 && reply.code == 0 && reply.body.size() > static_cast<size_t>(max_send)) {
      reply.code = static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED);
      reply.error_message = "Sent message larger than max (" + std::to_string(reply.body.size()) + " vs. " +
                            std::to_string(max_send) + ")";
      reply.body.clear();
    }
  });
  port_ = native_->port();
  native_->start();
}

void GrpcServer::handle_native(Services* sv, const GrpcCall& call, size_t worker, GrpcReply& reply) {
  {
    const std::string_view path = call.path;
    // grpc-timeout: a call whose deadline passed before it could run (under batching, say) is not
    // run; one that runs in time finishes (the model takes microseconds).
    if (call.timeout_ns >= 0 && monotonic_ns() - call.received_ns > static_cast<uint64_t>(call.timeout_ns)) {
      reply.code = static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED);
      reply.error_message = "Deadline Exceeded";
      return;
    }
    if (path == "/tensorflow.serving.PredictionService/Predict") {
      run_unary<tfs::PredictRequest, tfs::PredictResponse>(call, reply, [sv, worker](const auto& q, auto& r) {
        return sv->prediction.predict(q, r, worker);
      });
    } else if (path == "/tensorflow.serving.PredictionService/Classify") {
      run_unary<tfs::ClassificationRequest, tfs::ClassificationResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.Classify(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.PredictionService/Regress") {
      run_unary<tfs::RegressionRequest, tfs::RegressionResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.Regress(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.PredictionService/MultiInference") {
      run_unary<tfs::MultiInferenceRequest, tfs::MultiInferenceResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.MultiInference(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.PredictionService/GetModelMetadata") {
      run_unary<tfs::GetModelMetadataRequest, tfs::GetModelMetadataResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->prediction.GetModelMetadata(nullptr, &q, &r);
      });
    } else if (path == "/tensorflow.serving.ModelService/HandleReloadConfigRequest") {
      run_unary<tfs::ReloadConfigRequest, tfs::ReloadConfigResponse>(call, reply, [sv](const auto& q, auto& r) {
        return sv->model.HandleReloadConfigRequest(nullptr, &q, &r);
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
  }
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
