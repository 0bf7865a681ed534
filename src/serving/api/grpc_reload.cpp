// ModelService/HandleReloadConfigRequest: a new ModelServerConfig for the running server, as
// TF Serving's ModelServiceImpl takes it. Only model_config_list is supported (anything else is
// INVALID_ARGUMENT, as there); each ModelConfig is checked as --model_config_file's are; the
// repository applies it (kept models keep their versions, new ones load, missing ones end)
// before the call returns. The answer's status and the gRPC status say the same thing: OK, or
// why nothing changed, or which new models have no version available yet.
#include "serving/api/grpc_services.hpp"
#include "serving/model_repository.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace tfs = tensorflow::serving;

namespace {

ModelConfig model_config_from(const tfs::ModelConfig& p, size_t index) {
  const std::string where = "model_config_list.config[" + std::to_string(index) + "]";
  ModelConfig m;
  m.name = p.name();
  if (m.name.empty() || m.name.find_first_of("/:") != std::string::npos)
    throw Error(where + ": model name '" + m.name + "' must be non-empty and contain neither '/' nor ':'");
  m.base_path = p.base_path();
  if (m.base_path.empty()) throw Error(where + " ('" + m.name + "'): needs a base_path");
  if (!p.model_platform().empty()) {
    m.platform = p.model_platform();
    if (m.platform != "tensorflow" && m.platform != "keras" && m.platform != "tickinfer" && m.platform != "tflite" &&
        m.platform != "onnx")
      throw Error(where + " ('" + m.name + "'): model_platform '" + m.platform + "' is not supported (use \"tensorflow\")");
  }
  if (p.has_model_version_policy()) {
    const auto& v = p.model_version_policy();
    switch (v.policy_choice_case()) {
      case tfs::FileSystemStoragePathSourceConfig::ServableVersionPolicy::kLatest:
        m.policy.kind = VersionPolicy::Kind::Latest;
        // An unset num_versions (0) serves one version, as TF Serving does.
        m.policy.num_versions = std::max<int64_t>(1, v.latest().num_versions());
        break;
      case tfs::FileSystemStoragePathSourceConfig::ServableVersionPolicy::kAll:
        m.policy.kind = VersionPolicy::Kind::All;
        break;
      case tfs::FileSystemStoragePathSourceConfig::ServableVersionPolicy::kSpecific:
        m.policy.kind = VersionPolicy::Kind::Specific;
        for (int64_t n : v.specific().versions()) {
          if (n < 0) throw Error(where + " ('" + m.name + "'): versions must be >= 0");
          m.policy.versions.push_back(n);
        }
        if (m.policy.versions.empty()) throw Error(where + " ('" + m.name + "'): specific needs at least one version");
        break;
      case tfs::FileSystemStoragePathSourceConfig::ServableVersionPolicy::POLICY_CHOICE_NOT_SET:
        break;
    }
  }
  for (const auto& [label, version] : p.version_labels()) {
    if (label.empty() || label.find_first_of("/:") != std::string::npos)
      throw Error(where + " ('" + m.name + "'): label '" + label + "' must be non-empty and contain neither '/' nor ':'");
    m.labels[label] = version;
  }
  return m;
}

grpc::Status answer(tfs::ReloadConfigResponse* resp, grpc::StatusCode code, const std::string& message) {
  resp->mutable_status()->set_error_code(static_cast<tensorflow::error::Code>(static_cast<int>(code)));
  resp->mutable_status()->set_error_message(message);
  return code == grpc::StatusCode::OK ? grpc::Status::OK : grpc::Status(code, message);
}

}  // namespace

grpc::Status GrpcModelService::HandleReloadConfigRequest(grpc::ServerContext*, const tfs::ReloadConfigRequest* req,
                                                         tfs::ReloadConfigResponse* resp) {
  if (!req->config().has_model_config_list())
    return answer(resp, grpc::StatusCode::INVALID_ARGUMENT,
                  "ServerModelConfig type not supported by HandleReloadConfigRequest. Only ModelConfigList is "
                  "currently supported");
  std::vector<ModelConfig> models;
  try {
    const auto& list = req->config().model_config_list().config();
    for (int i = 0; i < list.size(); ++i) models.push_back(model_config_from(list[i], static_cast<size_t>(i)));
  } catch (const Error& e) {
    return answer(resp, grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  std::vector<std::string> unavailable;
  try {
    unavailable = reload->reconfigure(std::move(models));
  } catch (const Error& e) {
    return answer(resp, grpc::StatusCode::INVALID_ARGUMENT, e.what());
  }
  if (!unavailable.empty()) {
    std::string names;
    for (const auto& n : unavailable) names += (names.empty() ? "" : ", ") + n;
    return answer(resp, grpc::StatusCode::UNKNOWN,
                  "Some models did not become available: " + names + " (GetModelStatus says why)");
  }
  return answer(resp, grpc::StatusCode::OK, "");
}

}  // namespace tickinfer::serving
