#include "serving/server_flags.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "engine/device_options.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

enum class Kind { Int, Int64, Double, String, Bool };
enum class Support { Yes, NoEffect, Rejected };

struct FlagSpec {
  const char* name;
  Kind kind;
  Support support;
  const char* help;
};

// Every flag of tensorflow_model_server (main.cc) plus tickinfer's own.
const FlagSpec kFlags[] = {
    {"port", Kind::Int, Support::Yes, "gRPC port (default 8500)"},
    {"grpc_socket_path", Kind::String, Support::Yes, "also serve gRPC on the Unix socket unix:<path>"},
    {"rest_api_port", Kind::Int, Support::Yes, "REST port; 0 (the default) turns REST off"},
    {"rest_api_num_threads", Kind::Int, Support::Yes, "REST worker threads (default: the CPUs usable, affinity and cgroup quota)"},
    {"rest_api_timeout_in_ms", Kind::Int64, Support::Yes, "deadline from a complete request to compute (default 30000)"},
    {"rest_api_enable_cors_support", Kind::Bool, Support::Yes, "add CORS headers, answer OPTIONS preflights"},
    {"enable_batching", Kind::Bool, Support::Yes, "queue requests into batches (default false: every request runs at once)"},
    {"allow_version_labels_for_unavailable_models", Kind::Bool, Support::Yes, "labels may point at versions not loaded"},
    {"batching_parameters_file", Kind::String, Support::Yes, "BatchingParameters text proto (needs --enable_batching)"},
    {"enable_per_model_batching_parameters", Kind::Bool, Support::Yes,
     "each version's batching_params.pbtxt sets its own batch size, timeout and queue (needs --enable_batching)"},
    {"model_config_file", Kind::String, Support::Yes, "ModelServerConfig text proto (model_config_list)"},
    {"model_config_file_poll_wait_seconds", Kind::Int, Support::Yes,
     "re-read --model_config_file every N s and apply added, removed and changed models (0: read once)"},
    {"num_load_threads", Kind::Int, Support::Yes, "versions loaded at once in a poll pass (0, the default: one at a time)"},
    {"num_unload_threads", Kind::Int, Support::NoEffect,
     "an unload drops the repository's reference; the last request holding the version frees it"},
    {"model_name", Kind::String, Support::Yes, "model name when no --model_config_file (default \"default\")"},
    {"model_base_path", Kind::String, Support::Yes, "folder of numeric version folders"},
    {"max_num_load_retries", Kind::Int, Support::NoEffect, "a failed version is retried when its files change"},
    {"load_retry_interval_micros", Kind::Int64, Support::NoEffect, "a failed version is retried when its files change"},
    {"file_system_poll_wait_seconds", Kind::Double, Support::Yes, "poll period for new/removed versions (default 1; 0 = once; <0 = never)"},
    {"flush_filesystem_caches", Kind::Bool, Support::NoEffect, "nothing to flush"},
    {"tensorflow_session_parallelism", Kind::Int64, Support::NoEffect, "no TensorFlow runtime"},
    {"tensorflow_intra_op_parallelism", Kind::Int64, Support::NoEffect, "no TensorFlow runtime"},
    {"tensorflow_inter_op_parallelism", Kind::Int64, Support::NoEffect, "no TensorFlow runtime"},
    {"tensorflow_session_config_file", Kind::String, Support::NoEffect,
     "would configure TensorFlow sessions; there is no TensorFlow runtime here, the file is not read"},
    {"ssl_config_file", Kind::String, Support::Yes, "gRPC TLS: SSLConfig text proto with PEM contents (REST stays plain, as in TF Serving)"},
    {"platform_config_file", Kind::String, Support::NoEffect,
     "would replace TensorFlow's platform; tickinfer's own serves every model, the file is not read"},
    {"per_process_gpu_memory_fraction", Kind::Double, Support::NoEffect,
     "would reserve GPU memory; with --device cuda each plan takes what its arenas need"},
    {"saved_model_tags", Kind::String, Support::Yes, "comma-separated tag set of the SavedModel MetaGraph to serve (default \"serve\")"},
    {"grpc_channel_arguments", Kind::String, Support::Yes,
     "key=value,...: grpc.max_receive_message_length and grpc.max_send_message_length apply; others are listed as ignored"},
    {"grpc_max_threads", Kind::Int, Support::Yes, "gRPC calls run at once (default: the CPUs usable, affinity and cgroup quota)"},
    {"enable_model_warmup", Kind::Bool, Support::Yes, "replay assets.extra/tf_serving_warmup_requests (default true)"},
    {"num_request_iterations_for_warmup", Kind::Int, Support::Yes, "replays of each warmup record (0, TF's default, or 1: once)"},
    {"version", Kind::Bool, Support::Yes, "print the version and exit"},
    {"monitoring_config_file", Kind::String, Support::Yes, "MonitoringConfig text proto (Prometheus)"},
    {"remove_unused_fields_from_bundle_metagraph", Kind::Bool, Support::NoEffect, "no metagraph"},
    {"prefer_tflite_model", Kind::Bool, Support::NoEffect, "a .tflite file in a version folder is always served"},
    {"num_tflite_pools", Kind::Int, Support::NoEffect, "each request thread runs its own prepared interpreter"},
    {"num_tflite_interpreters_per_pool", Kind::Int, Support::NoEffect, "each request thread runs its own prepared interpreter"},
    {"enable_signature_method_name_check", Kind::Bool, Support::Yes,
     "Classify / Regress / MultiInference only use signatures whose method_name is tensorflow/serving/classify / regress (default false: any of the right shape)"},
    {"xla_cpu_compilation_enabled", Kind::Bool, Support::NoEffect,
     "would allow XLA's CPU JIT; tickinfer compiles every model into its own plans"},
    {"xla_gpu_compilation_enabled", Kind::Bool, Support::NoEffect,
     "would allow XLA's CPU and GPU JIT; tickinfer compiles every model into its own plans (--device)"},
    {"enable_profiler", Kind::Bool, Support::NoEffect, "would register TensorFlow's profiler service; there is none here"},
    {"thread_pool_factory_config_file", Kind::String, Support::NoEffect,
     "would choose TensorFlow's request thread pools; tickinfer's threads: --rest_api_num_threads, --grpc_max_threads"},
    {"mixed_precision", Kind::String, Support::NoEffect,
     "would turn on oneDNN bfloat16 auto-mixed precision; models compute as they were saved"},
    {"skip_initialize_tpu", Kind::Bool, Support::NoEffect, "no TPU"},
    {"enable_grpc_healthcheck_service", Kind::Bool, Support::NoEffect, "grpc.health.v1.Health is always served"},
    {"enable_serialization_as_tensor_content", Kind::Bool, Support::NoEffect, "Predict answers with typed float_val"},
    {"use_alts_credentials", Kind::Bool, Support::Yes, "only false: ALTS (Google's transport security) is not available"},
    {"enable_cors_support", Kind::Bool, Support::Rejected, "did you mean --rest_api_enable_cors_support?"},
    // tickinfer's own
    {"rest_api_bind_address", Kind::String, Support::Yes, "tickinfer: address the REST and gRPC ports bind (default 0.0.0.0)"},
    {"tflite_engine", Kind::String, Support::Yes,
     "tickinfer: a float TFLite model on the graph engine when it lifts (auto, default), always on the TFLite "
     "interpreter (interpreter), or the graph engine or a failed load (graph)"},
    {"device", Kind::String, Support::Yes,
     "tickinfer: where every model's plans run: cpu (default), or cuda / cuda:N: that GPU, each model as the CUDA "
     "graph form, a batch's rows side by side in one launch (docs/gpu.md)"},
    {"cuda_precision", Kind::String, Support::Yes,
     "tickinfer: with --device cuda, float models' weight matrices and layer outputs in fp16/bf16 (fp32 default; "
     "fp16, fp16/fp16, ... as `tickinfer cuda-precision` prints; int8 models keep their int8)"},
    {"max_body_bytes", Kind::Int64, Support::Yes, "tickinfer: largest request body, else 413 (default 4194304)"},
    {"max_batch_size", Kind::Int64, Support::Yes, "tickinfer: most rows per request, else 400 (default 1024)"},
    {"max_connections", Kind::Int64, Support::Yes, "tickinfer: open REST connections, else 503 (default 1024)"},
    {"nonfinite_inputs", Kind::String, Support::Yes, "tickinfer: reject (default, 400) or allow NaN/Infinity inputs"},
    {"rest_api_tls", Kind::Bool, Support::Yes,
     "tickinfer: serve REST over TLS too, with --ssl_config_file's key, certificate and client_verify"},
    {"grpc_implementation", Kind::String, Support::Yes,
     "tickinfer: native (default: tickinfer's HTTP/2 server; grpc++ still serves TLS and unix sockets) or grpcpp"},
    {"bearer_token_file", Kind::String, Support::Yes, "tickinfer: require 'Authorization: Bearer <file contents>'"},
    {"request_log_file", Kind::String, Support::Yes,
     "tickinfer: append a checksummed binary record per sampled inference call, REST and gRPC (tickinfer replay)"},
    {"request_log_sample_rate", Kind::Double, Support::Yes, "tickinfer: fraction of requests logged, in (0, 1] (default 1)"},
    {"request_log_inputs_rate", Kind::Double, Support::Yes,
     "tickinfer: fraction of logged requests that keep their input values, in [0, 1] (default 1)"},
};

const FlagSpec* find_flag(const std::string& name) {
  for (const auto& f : kFlags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

int64_t to_int(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || x < lo || x > hi) {
    throw Error("--" + flag + ": '" + v + "' is not an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  return x;
}

double to_double(const std::string& flag, const std::string& v) {
  double x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    throw Error("--" + flag + ": '" + v + "' is not a number");
  }
  return x;
}

bool to_bool(const std::string& flag, const std::string& v) {
  if (v == "true" || v == "1" || v == "True") return true;
  if (v == "false" || v == "0" || v == "False") return false;
  throw Error("--" + flag + ": '" + v + "' is not true or false");
}

}  // namespace

GrpcChannelArguments parse_grpc_channel_arguments(const std::string& text) {
  GrpcChannelArguments a;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--grpc_channel_arguments: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    // gRPC: -1 means unlimited; TF Serving's own default for both is INT32_MAX.
    if (key == "grpc.max_receive_message_length" || key == "grpc.max_send_message_length") {
      const int64_t n = to_int("grpc_channel_arguments " + key, value, -1, INT32_MAX);
      const int64_t bytes = n < 0 ? INT32_MAX : n;
      (key == "grpc.max_receive_message_length" ? a.max_receive_message_bytes : a.max_send_message_bytes) = bytes;
    } else {
      a.ignored.emplace_back(key, value);
    }
  }
  return a;
}

namespace {

// A supported flag's value into the flags (the caller has checked the name and the duplicates).
void assign(ServerFlags& f, const std::string& name, const std::string& value) {
  if (name == "port") {
    f.grpc_port = static_cast<int>(to_int(name, value, 0, 65535));
    f.grpc_port_given = true;
  } else if (name == "ssl_config_file") {
    f.ssl_config_file = value;
  } else if (name == "batching_parameters_file") {
    f.batching_parameters_file = value;
  } else if (name == "grpc_socket_path") {
    f.grpc_socket_path = value;
  } else if (name == "grpc_max_threads") {
    f.grpc_max_threads = static_cast<int>(to_int(name, value, 0, 1024));
  } else if (name == "rest_api_port") {
    f.rest_api_port = static_cast<int>(to_int(name, value, 0, 65535));
  } else if (name == "rest_api_num_threads") {
    f.rest_api_num_threads = static_cast<int>(to_int(name, value, 0, 1024));
  } else if (name == "rest_api_timeout_in_ms") {
    f.rest_api_timeout_in_ms = to_int(name, value, 1, INT64_MAX / 1000000);
  } else if (name == "rest_api_enable_cors_support") {
    f.rest_api_enable_cors_support = to_bool(name, value);
  } else if (name == "rest_api_tls") {
    f.rest_api_tls = to_bool(name, value);
  } else if (name == "enable_batching") {
    f.enable_batching = to_bool(name, value);
  } else if (name == "allow_version_labels_for_unavailable_models") {
    f.allow_version_labels_for_unavailable_models = to_bool(name, value);
  } else if (name == "model_config_file") {
    f.model_config_file = value;
  } else if (name == "model_config_file_poll_wait_seconds") {
    f.model_config_file_poll_wait_seconds = static_cast<int>(to_int(name, value, INT32_MIN, INT32_MAX));
  } else if (name == "num_load_threads") {
    f.num_load_threads = static_cast<int>(to_int(name, value, 0, 1024));
  } else if (name == "enable_per_model_batching_parameters") {
    f.enable_per_model_batching_parameters = to_bool(name, value);
  } else if (name == "grpc_channel_arguments") {
    f.grpc_channel_arguments = parse_grpc_channel_arguments(value);
    for (const auto& [k, v] : f.grpc_channel_arguments.ignored)
      f.notices.push_back("--grpc_channel_arguments " + k + "=" + v +
                          " has no effect in tickinfer serve (applied: grpc.max_receive_message_length, "
                          "grpc.max_send_message_length)");
  } else if (name == "use_alts_credentials") {
    if (to_bool(name, value))
      throw Error("--use_alts_credentials=true: ALTS is not available in tickinfer serve, and serving without "
                  "the transport security asked for is refused (TLS: --ssl_config_file)");
  } else if (name == "enable_signature_method_name_check") {
    f.enable_signature_method_name_check = to_bool(name, value);
  } else if (name == "device") {
    f.device = value;
    engine::cuda_device_index(value);  // an Error naming the value
  } else if (name == "cuda_precision") {
    engine::parse_cuda_precision(value);  // an Error naming what is wrong; layers are checked per model
    f.cuda_precision = value;
  } else if (name == "tflite_engine") {
    f.tflite_engine = parse_tflite_engine(value);  // an Error naming the value
  } else if (name == "saved_model_tags") {
    if (value.find_first_not_of(", ") == std::string::npos) throw Error("--saved_model_tags: no tag given");
    f.saved_model_tags = value;
  } else if (name == "model_name") {
    f.model_name = value;
    if (value.empty() || value.find_first_of("/:") != std::string::npos) {
      throw Error("--model_name: '" + value + "' must be non-empty and contain neither '/' nor ':'");
    }
  } else if (name == "model_base_path") {
    f.model_base_path = value;
  } else if (name == "file_system_poll_wait_seconds") {
    f.file_system_poll_wait_seconds = to_double(name, value);
  } else if (name == "enable_model_warmup") {
    f.enable_model_warmup = to_bool(name, value);
  } else if (name == "num_request_iterations_for_warmup") {
    // TF Serving's default 0 means "the default": one replay of each record.
    f.num_request_iterations_for_warmup = std::max(1, static_cast<int>(to_int(name, value, 0, 1000000)));
  } else if (name == "version") {
    f.print_version = to_bool(name, value);
  } else if (name == "monitoring_config_file") {
    f.monitoring_config_file = value;
  } else if (name == "rest_api_bind_address") {
    f.rest_api_bind_address = value;
  } else if (name == "max_body_bytes") {
    f.max_body_bytes = to_int(name, value, 1, int64_t{1} << 31);
  } else if (name == "max_batch_size") {
    f.max_batch_size = to_int(name, value, 1, int64_t{1} << 24);
  } else if (name == "max_connections") {
    f.max_connections = to_int(name, value, 1, 1 << 20);
  } else if (name == "nonfinite_inputs") {
    if (value != "reject" && value != "allow") {
      throw Error("--nonfinite_inputs: '" + value + "' must be reject or allow");
    }
    f.reject_nonfinite = value == "reject";
  } else if (name == "grpc_implementation") {
    if (value != "native" && value != "grpcpp") {
      throw Error("--grpc_implementation: '" + value + "' must be native or grpcpp");
    }
    f.grpc_native = value == "native";
  } else if (name == "bearer_token_file") {
    f.bearer_token_file = value;
  } else if (name == "request_log_file") {
    f.request_log_file = value;
  } else if (name == "request_log_sample_rate") {
    f.request_log_sample_rate = to_double(name, value);
    if (!(f.request_log_sample_rate > 0 && f.request_log_sample_rate <= 1)) {
      throw Error("--request_log_sample_rate: '" + value + "' must be in (0, 1]");
    }
  } else if (name == "request_log_inputs_rate") {
    f.request_log_inputs_rate = to_double(name, value);
    if (!(f.request_log_inputs_rate >= 0 && f.request_log_inputs_rate <= 1)) {
      throw Error("--request_log_inputs_rate: '" + value + "' must be in [0, 1]");
    }
  }
}

}  // namespace

ServerFlags parse_server_flags(const std::vector<std::string>& args) {
  ServerFlags f;
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string body;
    if (a.rfind("--", 0) == 0) body = a.substr(2);
    else if (a.rfind("-", 0) == 0 && a.size() > 1) body = a.substr(1);  // gflags accepts -flag
    else throw Error("unexpected argument '" + a + "': tickinfer serve takes only --flags");
    const size_t eq = body.find('=');
    std::string name = body.substr(0, eq);
    std::string value;
    bool has_value = eq != std::string::npos;
    if (has_value) value = body.substr(eq + 1);
    const FlagSpec* spec = find_flag(name);
    if (!spec && !has_value && name.rfind("no", 0) == 0) {  // gflags' --noflag
      const FlagSpec* neg = find_flag(name.substr(2));
      if (neg && neg->kind == Kind::Bool) {
        spec = neg;
        name = neg->name;
        value = "false";
        has_value = true;
      }
    }
    if (!spec) throw Error("unknown flag '--" + name + "' (run 'tickinfer help serve' for the list)");
    if (!has_value) {
      if (spec->kind == Kind::Bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw Error("flag '--" + name + "' needs a value");
      }
    }
    if (spec->support == Support::Rejected) {
      throw Error("flag '--" + name + "' of tensorflow_model_server is not supported by tickinfer serve: " +
                  spec->help);
    }
    // tensorflow_model_server: the last occurrence wins (the Docker entrypoint's flags come first,
    // `docker run`'s arguments after them override them).
    if (seen.count(name) && seen[name] != value)
      f.notices.push_back("--" + name + " given more than once: the last value, '" + value + "', wins");
    seen[name] = value;
    if (spec->support == Support::NoEffect) {
      // Parse anyway so a malformed value is still an error.
      if (spec->kind == Kind::Bool) to_bool(name, value);
      else if (spec->kind == Kind::Int || spec->kind == Kind::Int64) to_int(name, value, INT64_MIN, INT64_MAX);
      else if (spec->kind == Kind::Double) to_double(name, value);
      f.notices.push_back("--" + name + "=" + value + " has no effect in tickinfer serve: " + spec->help);
      continue;
    }
    assign(f, name, value);
  }
  if (f.print_version) return f;
  if (!f.batching_parameters_file.empty() && !f.enable_batching) {
    throw Error("--batching_parameters_file needs --enable_batching");
  }
  if (f.enable_per_model_batching_parameters && !f.enable_batching) {
    throw Error("--enable_per_model_batching_parameters needs --enable_batching");
  }
  if (f.model_config_file_poll_wait_seconds > 0 && f.model_config_file.empty()) {
    throw Error("--model_config_file_poll_wait_seconds needs --model_config_file");
  }
  if (f.model_config_file.empty() && f.model_base_path.empty())
    throw Error("give --model_base_path (with --model_name) or --model_config_file");
  if (!f.model_config_file.empty() && !f.model_base_path.empty())  // as tensorflow_model_server
    f.notices.push_back("--model_base_path is ignored: --model_config_file names the models");
  if (f.grpc_port == f.rest_api_port && f.rest_api_port != 0) {
    throw Error("--port and --rest_api_port must differ");
  }
  return f;
}

std::string server_flags_help() {
  std::string out;
  for (const auto& f : kFlags) {
    std::string left = std::string("  --") + f.name;
    if (left.size() < 48) left += std::string(48 - left.size(), ' ');
    const char* tag = f.support == Support::Yes ? "" : f.support == Support::NoEffect ? "[no effect] " : "[rejected] ";
    out += left + " " + tag + f.help + "\n";
  }
  return out;
}

}  // namespace tickinfer::serving
