#pragma once
// TF Serving's text-proto config files, read into plain structs:
//   --model_config_file       ModelServerConfig { model_config_list { config { ... } ... } }
//   --monitoring_config_file  MonitoringConfig { prometheus_config { enable path } }
//   --batching_parameters_file BatchingParameters { max_batch_size { value: N } ... }
// Unknown fields are errors (a typo must not be ignored silently); fields TF Serving defines
// but tickinfer does not implement (custom_model_config, logging_config, model_type,
// thread_pool_name ...) are refused by name. Errors are tickinfer::Error "FILE:LINE:COL: ...".
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving {

struct VersionPolicy {
  enum class Kind { Latest, All, Specific };
  Kind kind = Kind::Latest;
  int64_t num_versions = 1;        // Latest
  std::vector<int64_t> versions;   // Specific
};

struct ModelConfig {
  std::string name;
  std::string base_path;
  std::string platform = "tensorflow";
  VersionPolicy policy;
  std::map<std::string, int64_t> labels;
};

struct MonitoringConfig {
  bool prometheus_enable = false;
  std::string prometheus_path = "/monitoring/prometheus/metrics";
};

struct BatchingParameters {
  int64_t max_batch_size = 1000;
  int64_t batch_timeout_micros = 0;
  int64_t max_enqueued_batches = 10;
  int64_t num_batch_threads = 0;  // 0 = number of CPUs
  std::vector<int64_t> allowed_batch_sizes;
};

// --ssl_config_file: TF Serving's SSLConfig (PEM contents, not paths), for gRPC.
struct SslConfig {
  std::string server_key, server_cert, custom_ca;
  bool client_verify = false;
};

std::vector<ModelConfig> parse_model_server_config(std::string_view text, std::string_view source);
MonitoringConfig parse_monitoring_config(std::string_view text, std::string_view source);
BatchingParameters parse_batching_parameters(std::string_view text, std::string_view source);

// The same, reading the file at `path` (named in errors).
std::vector<ModelConfig> read_model_server_config(const std::string& path);
MonitoringConfig read_monitoring_config(const std::string& path);
BatchingParameters read_batching_parameters(const std::string& path);
SslConfig parse_ssl_config(std::string_view text, std::string_view source);
SslConfig read_ssl_config(const std::string& path);

}  // namespace tickinfer::serving
