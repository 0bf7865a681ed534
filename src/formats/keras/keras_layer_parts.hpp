#pragma once
// Internal to the Keras layer converters (keras_layers.cpp, keras_sequence_layers.cpp): the config
// and weight checks they share, and the converters that live apart from the class table. Each
// throws Error "<ctx>: <problem>".
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "model/graph.hpp"

namespace tickinfer::formats::layer_parts {

// config[key], or a JSON null when absent.
const nlohmann::json& config_value(const nlohmann::json& config, const char* key);
// A required positive integer parameter (units, filters).
int required_positive(const nlohmann::json& config, const char* key, const std::string& ctx);
void reject_if_true(const nlohmann::json& config, const char* key, const std::string& ctx);
void require_channels_last(const nlohmann::json& config, const std::string& ctx);
Padding parse_padding(const nlohmann::json& config, bool allow_causal, const std::string& ctx);
Weight filled(Shape shape, float value);
// The layer's saved variables, checked for count against the configuration.
std::vector<Weight> fetch_weights(const KerasLayerRef& ref, WeightSource& source, size_t expected,
                                  const std::string& what, const std::string& ctx);
// -1 in `expected` matches any size.
void expect_shape(const Weight& w, const Shape& expected, const char* what, const std::string& ctx);
// A 2-D parameter as Keras writes it: [h, w] (an int means both; absent: fallback for both).
void json_int_pair(const nlohmann::json& c, const char* key, int fallback, int& h, int& w, const std::string& ctx);
// A 2-D convolution's kernel_size, strides and dilation_rate into the node's window fields.
void read_window2d(const nlohmann::json& c, Node& n, const std::string& ctx);

// keras_sequence_layers.cpp
Node multi_head_attention(const KerasLayerRef& ref, const nlohmann::json& c, const std::vector<int>& ranks,
                          WeightSource& ws, KerasDialect dialect, const std::string& ctx);
Node zero_padding(const nlohmann::json& c, const std::vector<int>& ranks, int spatial, const std::string& ctx);
Node depthwise_conv2d(const KerasLayerRef& ref, const nlohmann::json& c, const std::vector<int>& ranks,
                      WeightSource& ws, KerasDialect dialect, bool separable, const std::string& ctx);
Node permute(const nlohmann::json& c, const std::vector<int>& ranks, const std::string& ctx);
Node ops_pad(const KerasLayerRef& ref, const nlohmann::json& c, const std::vector<int>& ranks, const std::string& ctx);

}  // namespace tickinfer::formats::layer_parts
