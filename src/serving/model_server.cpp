#include "serving/model_server.hpp"

#include <fstream>
#include <sstream>
#include <thread>

#include "serving/config_file_watcher.hpp"
#include "serving/server_config.hpp"
#include "stats/cpu_quota.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

ModelServer::ModelServer(const ServerFlags& flags, std::FILE* log) : flags_(flags) {
  std::vector<ModelConfig> models;
  std::string config_text;  // what the watcher compares against (--model_config_file_poll_wait_seconds)
  if (!flags.model_config_file.empty()) {
    std::ifstream in(flags.model_config_file, std::ios::binary);
    if (!in) throw Error("cannot read '" + flags.model_config_file + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    config_text = ss.str();
    models = parse_model_server_config(config_text, flags.model_config_file);
  } else {
    ModelConfig m;
    m.name = flags.model_name;
    m.base_path = flags.model_base_path;
    models.push_back(m);
  }
  MonitoringConfig monitoring;
  if (!flags.monitoring_config_file.empty()) monitoring = read_monitoring_config(flags.monitoring_config_file);
  std::string token;
  if (!flags.bearer_token_file.empty()) {
    std::ifstream in(flags.bearer_token_file);
    if (!in) throw Error("cannot read --bearer_token_file '" + flags.bearer_token_file + "'");
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) throw Error("--bearer_token_file '" + flags.bearer_token_file + "' is empty");
  }
  size_t threads = flags.rest_api_num_threads > 0 ? static_cast<size_t>(flags.rest_api_num_threads)
                                                  : stats::usable_cpus();
  const size_t grpc_threads = !flags.grpc ? 0
                              : flags.grpc_max_threads > 0 ? static_cast<size_t>(flags.grpc_max_threads)
                                                           : stats::usable_cpus();
  const bool rest_on = flags.rest_api_port != 0 || !flags.grpc;
  std::vector<std::string> names;
  for (const auto& m : models) names.push_back(m.name);
  metrics_ = std::make_unique<Metrics>(names);
  RepositoryOptions ro;
  const size_t direct_plans = (rest_on ? threads : 0) + grpc_threads;  // REST workers first, then gRPC's pool
  BatchingParameters batching;
  size_t batch_threads = 0;
  if (flags.enable_batching) {
    if (!flags.batching_parameters_file.empty()) batching = read_batching_parameters(flags.batching_parameters_file);
    batch_threads = batching.num_batch_threads > 0 ? static_cast<size_t>(batching.num_batch_threads)
                                                   : stats::usable_cpus();
    batching.num_batch_threads = static_cast<int64_t>(batch_threads);
  }
  ro.num_plans = direct_plans + batch_threads;  // then the batch threads' plans
  ro.warmup = flags.enable_model_warmup;
  ro.warmup_iterations = flags.num_request_iterations_for_warmup;
  ro.allow_labels_for_unavailable = flags.allow_version_labels_for_unavailable_models;
  ro.saved_model_tags = flags.saved_model_tags;
  ro.load.tflite_engine = flags.tflite_engine;
  ro.device = flags.device;
  ro.cuda_precision = flags.cuda_precision;
  ro.method_name_check = flags.enable_signature_method_name_check;
  ro.load_threads = flags.num_load_threads;
  ro.per_model_batching = flags.enable_per_model_batching_parameters;
  repo_ = std::make_unique<ModelRepository>(models, ro, metrics_.get());
  if (flags.model_config_file_poll_wait_seconds > 0) {
    config_path_ = flags.model_config_file;
    config_text_ = config_text;
  }

  RestOptions rest;
  rest.limits.max_batch = static_cast<size_t>(flags.max_batch_size);
  rest.limits.nonfinite = flags.reject_nonfinite ? NonFinitePolicy::Reject : NonFinitePolicy::Allow;
  rest.timeout_ns = static_cast<uint64_t>(flags.rest_api_timeout_in_ms) * 1000000ull;
  rest.cors = flags.rest_api_enable_cors_support;
  rest.bearer_token = token;
  if (monitoring.prometheus_enable) rest.metrics_path = monitoring.prometheus_path;
  if (flags.enable_batching) {
    batching_ = std::make_unique<BatchScheduler>(batching, direct_plans, flags.enable_per_model_batching_parameters);
    rest.batching = batching_.get();
  }
  if (!flags.request_log_file.empty()) {
    // Rings: one per REST worker, then gRPC's (GrpcOptions::request_log).
    const size_t rings = threads + (flags.grpc ? GrpcOptions::log_rings(grpc_threads) : 0);
    RequestLogOptions lo;
    lo.sample_rate = flags.request_log_sample_rate;
    lo.inputs_rate = flags.request_log_inputs_rate;
    request_log_ = std::make_unique<RequestLog>(flags.request_log_file, lo, rings);
    rest.request_log = request_log_.get();
  }
  rest_ = std::make_unique<RestApi>(*repo_, *metrics_, rest, threads);

  HttpServer::Options ho;
  ho.bind_address = flags.rest_api_bind_address;
  ho.port = flags.rest_api_port;
  ho.threads = threads;
  ho.max_connections = static_cast<size_t>(flags.max_connections);
  ho.limits.max_body_bytes = static_cast<size_t>(flags.max_body_bytes);
  if (flags.rest_api_tls) {
    if (flags.ssl_config_file.empty()) throw Error("--rest_api_tls needs --ssl_config_file (the key and certificate)");
    const SslConfig ssl = read_ssl_config(flags.ssl_config_file);
    ho.tls_key_pem = ssl.server_key;
    ho.tls_cert_pem = ssl.server_cert;
    ho.tls_ca_pem = ssl.custom_ca;
    ho.tls_client_verify = ssl.client_verify;
  }
  RestApi* api = rest_.get();
  if (rest_on) {
    http_ = std::make_unique<HttpServer>(
        ho, [api](const HttpRequest& req, uint64_t received_ns, size_t worker, HttpResponse& resp) {
          api->handle(req, received_ns, worker, resp);
        });
  }
  if (flags.grpc) {
    GrpcOptions go;
    go.address = (flags.rest_api_bind_address.find(':') != std::string::npos
                      ? "[" + flags.rest_api_bind_address + "]"
                      : flags.rest_api_bind_address) +
                 ":" + std::to_string(flags.grpc_port);
    go.threads = grpc_threads;
    go.unix_socket = flags.grpc_socket_path;
    go.first_plan = rest_on ? threads : 0;
    go.limits = rest.limits;
    go.batching = batching_.get();
    go.native = flags.grpc_native;
    go.request_log = request_log_.get();
    go.first_log_ring = threads;
    go.max_receive_message_bytes = flags.grpc_channel_arguments.max_receive_message_bytes;
    go.max_send_message_bytes = flags.grpc_channel_arguments.max_send_message_bytes;
    if (!flags.ssl_config_file.empty()) {
      const SslConfig ssl = read_ssl_config(flags.ssl_config_file);
      go.tls = true;
      go.tls_key = ssl.server_key;
      go.tls_cert = ssl.server_cert;
      go.tls_ca = ssl.custom_ca;
      go.tls_client_verify = ssl.client_verify;
    }
    grpc_ = std::make_unique<GrpcServer>(*repo_, *metrics_, go);
    GrpcServer* g = grpc_.get();
    repo_->set_ready_listener([g](bool ready) { g->set_serving(ready); });
  }
  if (log) {
    for (const auto& n : flags.notices) std::fprintf(log, "tickinfer serve: notice: %s\n", n.c_str());
  }
  log_ = log;
}

ModelServer::~ModelServer() {
  stop();
  // The HTTP workers are joined: destroy the API (which records into the log) before the log.
  http_.reset();
  grpc_.reset();
  rest_.reset();
  batching_.reset();
  request_log_.reset();
}

void ModelServer::start() {
  // Load before the workers answer, so /readyz is true as soon as models are warm.
  repo_->poll_once();
  if (http_) http_->start();
  if (flags_.file_system_poll_wait_seconds > 0) repo_->start_polling(flags_.file_system_poll_wait_seconds);
  if (!config_path_.empty())
    config_watcher_ = std::make_unique<ConfigFileWatcher>(config_path_, flags_.model_config_file_poll_wait_seconds,
                                                          *repo_, config_text_, log_);
}

void ModelServer::stop() {
  config_watcher_.reset();
  if (repo_) repo_->stop();
  if (http_) http_->stop();
  if (grpc_) grpc_->stop();
}

}  // namespace tickinfer::serving
