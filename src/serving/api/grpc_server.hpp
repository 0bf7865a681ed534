#pragma once
// TF Serving's gRPC API on the model repository: tensorflow.serving.PredictionService
// (Predict, Classify, Regress, MultiInference, GetModelMetadata) and
// tensorflow.serving.ModelService (GetModelStatus, HandleReloadConfigRequest), from the
// project's own .proto files (src/serving/proto, TF Serving's field numbers), plus the
// standard grpc.health.v1.Health service (services "", "tensorflow.serving.PredictionService",
// "tensorflow.serving.ModelService", "PredictionService", "ModelService": SERVING once every
// model has an AVAILABLE version). The methods are in grpc_services.hpp; this class listens and
// hands them the calls.
//
// Predict accepts inputs as tensor_content or typed *_val fields (DT_FLOAT, DT_DOUBLE, integer
// and bool types are converted to float) and answers float_val, as TF Serving does by default.
// Two implementations of the same services. On an insecure TCP port (the default) tickinfer's
// own HTTP/2 server (grpc_h2_server.hpp): `threads` epoll workers that run each call on the
// thread that read it. With TLS or a unix socket, or when asked (native = false), grpc++'s
// server: calls on its thread pool, at most `threads` at once. Either way each call takes a plan
// from the servable's lock-free pool, slots [first_plan, num_plans). Both serve
// grpc.health.v1.Health Check and Watch.
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "serving/api/predict_json.hpp"
#include "serving/metrics.hpp"
#include "serving/model_repository.hpp"

namespace grpc {
class Server;
}

namespace tickinfer::serving {

struct GrpcOptions {
  std::string address = "0.0.0.0:8500";
  std::string unix_socket;  // also listen on unix:<path> when set
  size_t threads = 2;
  size_t first_plan = 0;  // the servables' plans from here on belong to gRPC
  PredictLimits limits;
  class BatchScheduler* batching = nullptr;  // --enable_batching
  bool tls = false;                          // --ssl_config_file
  std::string tls_key, tls_cert, tls_ca;     // PEM contents
  bool tls_client_verify = false;
  bool native = true;  // tickinfer's HTTP/2 server where it applies (see above)
  // Every Predict answer, errors included, is offered to the log (which samples). Native worker
  // w records into ring first_log_ring + w; grpc++'s threads share ring
  // first_log_ring + max(threads, 1) under a mutex: the log needs log_rings(threads) rings here.
  class RequestLog* request_log = nullptr;
  size_t first_log_ring = 0;
  static size_t log_rings(size_t threads) { return (threads ? threads : 1) + 1; }
  // --grpc_channel_arguments grpc.max_receive_message_length / max_send_message_length (bytes;
  // -1: the implementation's default, INT32_MAX like TF Serving for grpc++, 64 MiB received natively).
  int64_t max_receive_message_bytes = -1, max_send_message_bytes = -1;
};

class GrpcServer {
 public:
  // Binds; throws tickinfer::Error naming the address when it cannot.
  // repo: also reconfigured by ModelService/HandleReloadConfigRequest.
  GrpcServer(ModelRepository& repo, Metrics& metrics, GrpcOptions options);
  ~GrpcServer();
  int port() const { return port_; }
  void set_serving(bool ready);  // health status
  void stop();
  bool native() const { return native_ != nullptr; }

 private:
  struct Services;
  void start_native(const GrpcOptions& options);
  // One call on tickinfer's HTTP/2 server: the method its path names, answered into `reply`.
  void handle_native(Services* sv, const struct GrpcCall& call, size_t worker, struct GrpcReply& reply);
  std::unique_ptr<Services> services_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<class GrpcH2Server> native_;
  std::atomic<bool> serving_{false};
  int port_ = 0;
};

}  // namespace tickinfer::serving
