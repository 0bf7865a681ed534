#include "serving/server_config.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "serving/text_proto.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void unknown(const TextField& f, std::string_view src, std::string_view in) {
  throw Error(f.where(src) + ": unknown field '" + f.name + "' in " + std::string(in));
}

[[noreturn]] void unsupported(const TextField& f, std::string_view src, std::string_view in) {
  throw Error(f.where(src) + ": field '" + f.name + "' of " + std::string(in) +
              " is not supported by tickinfer serve");
}

void once(std::set<std::string>& seen, const TextField& f, std::string_view src) {
  if (!seen.insert(f.name).second) {
    throw Error(f.where(src) + ": field '" + f.name + "' given more than once");
  }
}

VersionPolicy parse_policy(const TextField& p, std::string_view src) {
  p.expect_message(src);
  if (p.children.size() != 1) {
    throw Error(p.where(src) +
                ": model_version_policy must hold exactly one of latest, all, specific");
  }
  const TextField& c = p.children[0];
  c.expect_message(src);
  VersionPolicy v;
  if (c.name == "latest") {
    v.kind = VersionPolicy::Kind::Latest;
    for (const auto& f : c.children) {
      if (f.name != "num_versions") unknown(f, src, "latest");
      v.num_versions = f.as_int64(src);
      if (v.num_versions < 1) throw Error(f.where(src) + ": num_versions must be at least 1");
    }
  } else if (c.name == "all") {
    v.kind = VersionPolicy::Kind::All;
    if (!c.children.empty()) unknown(c.children[0], src, "all");
  } else if (c.name == "specific") {
    v.kind = VersionPolicy::Kind::Specific;
    for (const auto& f : c.children) {
      if (f.name != "versions") unknown(f, src, "specific");
      const int64_t n = f.as_int64(src);
      if (n < 0) throw Error(f.where(src) + ": versions must be >= 0");
      v.versions.push_back(n);
    }
    if (v.versions.empty()) throw Error(c.where(src) + ": specific needs at least one versions entry");
  } else {
    unknown(c, src, "model_version_policy (expected latest, all or specific)");
  }
  return v;
}

ModelConfig parse_model(const TextField& cfg, std::string_view src) {
  cfg.expect_message(src);
  ModelConfig m;
  std::set<std::string> seen;
  bool has_name = false, has_path = false;
  for (const auto& f : cfg.children) {
    if (f.name == "name") {
      once(seen, f, src);
      m.name = f.as_string(src);
      has_name = true;
      if (m.name.empty() || m.name.find_first_of("/:") != std::string::npos) {
        throw Error(f.where(src) + ": model name '" + m.name +
                    "' must be non-empty and contain neither '/' nor ':'");
      }
    } else if (f.name == "base_path") {
      once(seen, f, src);
      m.base_path = f.as_string(src);
      has_path = !m.base_path.empty();
    } else if (f.name == "model_platform") {
      once(seen, f, src);
      m.platform = f.as_string(src);
      // The format is read from the version folder; the platform names what TF Serving users and
      // tickinfer's own configs write for the formats it serves.
      if (m.platform != "tensorflow" && m.platform != "keras" && m.platform != "tickinfer" && m.platform != "tflite" &&
          m.platform != "onnx") {
        throw Error(f.where(src) + ": model_platform '" + m.platform +
                    "' is not supported (use \"tensorflow\")");
      }
    } else if (f.name == "model_version_policy") {
      once(seen, f, src);
      m.policy = parse_policy(f, src);
    } else if (f.name == "version_labels") {
      f.expect_message(src);
      std::string key;
      int64_t value = -1;
      bool has_key = false, has_value = false;
      for (const auto& kv : f.children) {
        if (kv.name == "key") {
          key = kv.as_string(src);
          has_key = true;
        } else if (kv.name == "value") {
          value = kv.as_int64(src);
          has_value = true;
        } else {
          unknown(kv, src, "version_labels");
        }
      }
      if (!has_key || !has_value || key.empty()) {
        throw Error(f.where(src) + ": version_labels needs a non-empty key and a value");
      }
      if (key.find_first_of("/:") != std::string::npos) {
        throw Error(f.where(src) + ": label '" + key + "' may contain neither '/' nor ':'");
      }
      if (!m.labels.emplace(key, value).second) {
        throw Error(f.where(src) + ": label '" + key + "' given more than once");
      }
    } else if (f.name == "model_type" || f.name == "logging_config") {
      unsupported(f, src, "ModelConfig");
    } else {
      unknown(f, src, "ModelConfig");
    }
  }
  if (!has_name) throw Error(cfg.where(src) + ": config needs a name");
  if (!has_path) throw Error(cfg.where(src) + ": config '" + m.name + "' needs a base_path");
  return m;
}

// A google.protobuf wrapper field: `field { value: N }`.
int64_t wrapped_int(const TextField& f, std::string_view src) {
  f.expect_message(src);
  if (f.children.size() != 1 || f.children[0].name != "value") {
    throw Error(f.where(src) + ": field '" + f.name + "' must be written as " + f.name +
                " { value: N }");
  }
  const int64_t v = f.children[0].as_int64(src);
  if (v < 0) throw Error(f.where(src) + ": field '" + f.name + "' must be >= 0");
  return v;
}

}  // namespace

std::vector<ModelConfig> parse_model_server_config(std::string_view text, std::string_view src) {
  const auto top = parse_text_proto(text, src);
  std::vector<ModelConfig> out;
  bool has_list = false;
  for (const auto& f : top) {
    if (f.name == "model_config_list") {
      if (has_list) throw Error(f.where(src) + ": model_config_list given more than once");
      has_list = true;
      f.expect_message(src);
      for (const auto& c : f.children) {
        if (c.name != "config") unknown(c, src, "model_config_list");
        out.push_back(parse_model(c, src));
      }
    } else if (f.name == "custom_model_config") {
      unsupported(f, src, "ModelServerConfig");
    } else {
      unknown(f, src, "ModelServerConfig");
    }
  }
  if (out.empty()) throw Error(std::string(src) + ": no model in model_config_list");
  std::set<std::string> names;
  for (const auto& m : out) {
    if (!names.insert(m.name).second) {
      throw Error(std::string(src) + ": model '" + m.name + "' configured more than once");
    }
  }
  return out;
}

MonitoringConfig parse_monitoring_config(std::string_view text, std::string_view src) {
  MonitoringConfig m;
  for (const auto& f : parse_text_proto(text, src)) {
    if (f.name != "prometheus_config") unknown(f, src, "MonitoringConfig");
    f.expect_message(src);
    for (const auto& c : f.children) {
      if (c.name == "enable") {
        m.prometheus_enable = c.as_bool(src);
      } else if (c.name == "path") {
        m.prometheus_path = c.as_string(src);
        if (m.prometheus_path.empty() || m.prometheus_path[0] != '/') {
          throw Error(c.where(src) + ": path must start with '/'");
        }
      } else {
        unknown(c, src, "prometheus_config");
      }
    }
  }
  return m;
}

BatchingParameters parse_batching_parameters(std::string_view text, std::string_view src) {
  BatchingParameters b;
  bool has_allowed = false;
  for (const auto& f : parse_text_proto(text, src)) {
    if (f.name == "max_batch_size") {
      b.max_batch_size = wrapped_int(f, src);
    } else if (f.name == "batch_timeout_micros") {
      b.batch_timeout_micros = wrapped_int(f, src);
    } else if (f.name == "max_enqueued_batches") {
      b.max_enqueued_batches = wrapped_int(f, src);
    } else if (f.name == "num_batch_threads") {
      b.num_batch_threads = wrapped_int(f, src);
    } else if (f.name == "allowed_batch_sizes") {
      has_allowed = true;
      const int64_t v = f.is_message ? wrapped_int(f, src) : f.as_int64(src);
      if (v < 1) throw Error(f.where(src) + ": allowed_batch_sizes entries must be >= 1");
      if (!b.allowed_batch_sizes.empty() && v <= b.allowed_batch_sizes.back()) {
        throw Error(f.where(src) + ": allowed_batch_sizes must be strictly ascending");
      }
      b.allowed_batch_sizes.push_back(v);
    } else if (f.name == "thread_pool_name" || f.name == "pad_variable_length_inputs" ||
               f.name == "enable_large_batch_splitting" || f.name == "max_execution_batch_size") {
      unsupported(f, src, "BatchingParameters");
    } else {
      unknown(f, src, "BatchingParameters");
    }
  }
  if (b.max_batch_size < 1) throw Error(std::string(src) + ": max_batch_size must be >= 1");
  if (has_allowed && b.allowed_batch_sizes.back() != b.max_batch_size) {
    throw Error(std::string(src) + ": the last allowed_batch_sizes entry must equal max_batch_size");
  }
  return b;
}

SslConfig parse_ssl_config(std::string_view text, std::string_view src) {
  SslConfig c;
  for (const auto& f : parse_text_proto(text, src)) {
    if (f.name == "server_key") c.server_key = f.as_string(src);
    else if (f.name == "server_cert") c.server_cert = f.as_string(src);
    else if (f.name == "custom_ca") c.custom_ca = f.as_string(src);
    else if (f.name == "client_verify") c.client_verify = f.as_bool(src);
    else unknown(f, src, "SSLConfig");
  }
  if (c.server_key.empty() || c.server_cert.empty()) {
    throw Error(std::string(src) + ": SSLConfig needs server_key and server_cert (PEM contents)");
  }
  if (c.client_verify && c.custom_ca.empty()) {
    throw Error(std::string(src) + ": client_verify needs custom_ca to verify client certificates with");
  }
  return c;
}

SslConfig read_ssl_config(const std::string& path) { return parse_ssl_config(read_file(path), path); }

std::vector<ModelConfig> read_model_server_config(const std::string& path) {
  return parse_model_server_config(read_file(path), path);
}
MonitoringConfig read_monitoring_config(const std::string& path) {
  return parse_monitoring_config(read_file(path), path);
}
BatchingParameters read_batching_parameters(const std::string& path) {
  return parse_batching_parameters(read_file(path), path);
}

}  // namespace tickinfer::serving
