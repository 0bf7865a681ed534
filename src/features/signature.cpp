#include "features/signature.hpp"

#include <sstream>
#include <vector>

#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {
std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
}  // namespace

std::string signature_path_for(const std::string& model_path) {
  const auto slash = model_path.find_last_of('/');
  return (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) + "features.toml";
}

FeatureSpec load_model_signature(const std::string& model_path) {
  const std::string path = signature_path_for(model_path);
  try {
    return load_feature_spec(path);
  } catch (const Error& e) {
    throw Error("model '" + model_path + "': no usable feature signature (" + e.what() + ")");
  }
}

void check_signature(const FeatureSpec& pipeline, const FeatureSpec& model, const std::string& model_name) {
  const auto a = lines(pipeline.canonical_features());
  const auto b = lines(model.canonical_features());
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i])
      throw Error("model '" + model_name + "': feature signature mismatch at position " + std::to_string(i) +
                  ": the model was trained on " + b[i] + " ('" + model.features[i].name + "'), the pipeline computes " +
                  a[i] + " ('" + pipeline.features[i].name + "')");
  }
  if (a.size() != b.size())
    throw Error("model '" + model_name + "': feature signature mismatch: the model was trained on " +
                std::to_string(b.size()) + " features, the pipeline computes " + std::to_string(a.size()));
}

void check_input_width(const FeatureSpec& pipeline, std::size_t width, const std::string& model_name) {
  if (width != pipeline.width())
    throw Error("model '" + model_name + "': input width " + std::to_string(width) + " does not match the " +
                std::to_string(pipeline.width()) + " features of feature set '" + pipeline.name + "'");
}

}  // namespace tickinfer::features
