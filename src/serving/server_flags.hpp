#pragma once
// tensorflow_model_server's command line, as `tickinfer serve` accepts it: `--flag=value` and
// `--flag value` (booleans: `--flag`, `--flag=true|false`); every flag of its main.cc is
// accepted, and the last occurrence of a flag wins, as there. Flags that only tune the TensorFlow
// runtime (or a GPU, XLA, a TPU) are accepted and listed in `notices` (printed at start) with
// what they would do and why they do nothing here, so nothing is ignored silently; unknown
// flags are refused. See docs/serving.md for the table.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::serving {

// --grpc_channel_arguments: the ones that mean something here, and the rest (each reported).
struct GrpcChannelArguments {
  int64_t max_receive_message_bytes = -1;  // -1: not given
  int64_t max_send_message_bytes = -1;
  std::vector<std::pair<std::string, std::string>> ignored;
};
GrpcChannelArguments parse_grpc_channel_arguments(const std::string& text);

struct ServerFlags {
  int grpc_port = 8500;                 // --port; 0 = any free port
  bool grpc_port_given = false;
  bool grpc = true;                     // serve gRPC (tests switch it off)
  std::string grpc_socket_path;         // also listen on unix:<path>
  std::string ssl_config_file;          // gRPC TLS
  int grpc_max_threads = 0;             // 0 = number of CPUs
  int rest_api_port = 0;                // 0 = REST off (as in TF Serving)
  int rest_api_num_threads = 0;         // 0 = number of CPUs
  int64_t rest_api_timeout_in_ms = 30000;
  bool rest_api_enable_cors_support = false;
  bool rest_api_tls = false;  // tickinfer's own: REST over TLS with --ssl_config_file
  std::string model_name = "default";
  std::string model_base_path;
  std::string model_config_file;
  int model_config_file_poll_wait_seconds = 0;  // > 0: re-read and apply it this often
  int num_load_threads = 0;             // versions loaded at once (0: one at a time)
  bool enable_per_model_batching_parameters = false;
  GrpcChannelArguments grpc_channel_arguments;
  double file_system_poll_wait_seconds = 1;
  bool enable_batching = false;
  std::string batching_parameters_file;
  std::string monitoring_config_file;
  bool enable_model_warmup = true;
  int num_request_iterations_for_warmup = 1;
  bool allow_version_labels_for_unavailable_models = false;
  bool print_version = false;
  bool enable_signature_method_name_check = false;  // Classify / Regress check the method_name
  std::string saved_model_tags = "serve";  // comma-separated MetaGraph tag set of SavedModels
  TfliteEngine tflite_engine = TfliteEngine::Auto;  // --tflite_engine: which engine runs a float TFLite model
  std::string device = "cpu";           // --device: cpu, cuda or cuda:N
  std::string cuda_precision = "fp32";  // --cuda_precision: float models' storage on the GPU
  // tickinfer's own
  std::string rest_api_bind_address = "0.0.0.0";
  int64_t max_body_bytes = 4 << 20;
  int64_t max_batch_size = 1024;
  int64_t max_connections = 1024;
  bool reject_nonfinite = true;
  bool grpc_native = true;  // --grpc_implementation
  std::string bearer_token_file;
  std::string request_log_file;
  double request_log_sample_rate = 1.0;
  double request_log_inputs_rate = 1.0;
  std::vector<std::string> notices;     // accepted flags that have no effect here
};

// Throws tickinfer::Error with a message naming the flag for anything it cannot accept.
ServerFlags parse_server_flags(const std::vector<std::string>& args);

// The flags table for `tickinfer help serve` and the docs.
std::string server_flags_help();

}  // namespace tickinfer::serving
