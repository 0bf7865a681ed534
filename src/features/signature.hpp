#pragma once
// The model's feature signature. A model trained on a feature specification ships that
// specification beside it as `features.toml` in the model's directory; before a pipeline feeds a
// model, check_signature() compares the two ordered feature lists (kind and every parameter) and
// check_input_width() compares the vector width with the model's input. Any difference is refused
// with tickinfer::Error naming the model, the position and both features: a model never receives
// features in the wrong order or of the wrong width.
#include <cstddef>
#include <string>

#include "features/feature_spec.hpp"

namespace tickinfer::features {

// <directory of model_path>/features.toml
std::string signature_path_for(const std::string& model_path);
// Loads the signature beside the model. Error when it is missing or malformed.
FeatureSpec load_model_signature(const std::string& model_path);
// Error unless `pipeline` produces exactly the features `model` was trained on, in order.
void check_signature(const FeatureSpec& pipeline, const FeatureSpec& model, const std::string& model_name);
// Error unless the model's last input dimension equals the pipeline's width.
void check_input_width(const FeatureSpec& pipeline, std::size_t model_input_width, const std::string& model_name);

}  // namespace tickinfer::features
