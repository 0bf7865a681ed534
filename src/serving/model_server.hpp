#pragma once
// The whole server: repository (+ polling thread), metrics, REST API on the HTTP server.
// Construction loads the configured models (the first poll runs before the port opens its
// workers, so the first request already finds warm versions); start() starts the HTTP workers
// and the poller; stop() stops both.
#include <cstdio>
#include <memory>
#include <string>

#include "serving/api/grpc_server.hpp"
#include "serving/api/rest_api.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/http1/http_server.hpp"
#include "serving/metrics.hpp"
#include "serving/model_repository.hpp"
#include "serving/server_flags.hpp"

namespace tickinfer::serving {

class ModelServer {
 public:
  // Throws tickinfer::Error for unusable config files, ports or addresses. `log` receives
  // startup lines (notices, what is served); nullptr = quiet.
  explicit ModelServer(const ServerFlags& flags, std::FILE* log = nullptr);
  ~ModelServer();

  void start();
  void stop();
  int rest_port() const { return http_ ? http_->port() : 0; }  // 0: REST off
  int grpc_port() const { return grpc_ ? grpc_->port() : 0; }  // 0: gRPC off
  ModelRepository& repository() { return *repo_; }
  Metrics& metrics() { return *metrics_; }

 private:
  ServerFlags flags_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<RequestLog> request_log_;
  std::unique_ptr<BatchScheduler> batching_;
  std::unique_ptr<ModelRepository> repo_;
  std::unique_ptr<RestApi> rest_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<GrpcServer> grpc_;
  // --model_config_file_poll_wait_seconds > 0: the file and its content at start; the watcher
  // re-reads it from start() on.
  std::string config_path_, config_text_;
  std::FILE* log_ = nullptr;
  std::unique_ptr<class ConfigFileWatcher> config_watcher_;
};

}  // namespace tickinfer::serving
