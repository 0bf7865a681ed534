#include "formats/keras/keras_synthetic_weights.hpp"

#include <algorithm>

#include "formats/keras/keras_json.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

std::vector<Weight> SyntheticWeightSource::layer_weights(const KerasLayerRef& layer) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& c = (layer.config && layer.config->is_object()) ? *layer.config : kEmpty;
  const std::string ctx = "synthetic weights: layer '" + layer.name + "' (" + layer.keras_class + ")";
  const std::string& cls = layer.keras_class;
  // Loose reads: malformed values are the importer's to reject, here they only pick a size.
  auto int_or = [&](const char* key, int fallback) {
    try {
      return json_int_or_single_list(c, key, fallback, 1, 1 << 24, ctx);
    } catch (const Error&) {
      return fallback;
    }
  };
  auto bool_or = [&](const char* key, bool fallback) {
    auto it = c.find(key);
    return (it != c.end() && it->is_boolean()) ? it->get<bool>() : fallback;
  };
  std::vector<Shape> shapes;
  const int in = input_width_;
  if (cls == "Dense") {
    const int units = int_or("units", 1);
    shapes = {{in, units}};
    if (bool_or("use_bias", true)) shapes.push_back({units});
  } else if (cls == "Conv1D") {
    const int filters = int_or("filters", 1);
    shapes = {{int_or("kernel_size", 1), in, filters}};
    if (bool_or("use_bias", true)) shapes.push_back({filters});
  } else if (cls == "Conv2D") {
    const int filters = int_or("filters", 1);
    int kh = 1, kw = 1;
    auto it = c.find("kernel_size");
    if (it != c.end() && it->is_array() && it->size() == 2 && (*it)[0].is_number_integer() &&
        (*it)[1].is_number_integer()) {
      kh = std::clamp((*it)[0].get<int>(), 1, 1 << 12);
      kw = std::clamp((*it)[1].get<int>(), 1, 1 << 12);
    } else {
      kh = kw = int_or("kernel_size", 1);
    }
    shapes = {{kh, kw, in, filters}};
    if (bool_or("use_bias", true)) shapes.push_back({filters});
  } else if (cls == "DepthwiseConv2D" || cls == "SeparableConv2D") {
    const int m = int_or("depth_multiplier", 1);
    const int kh = int_or("kernel_size", 1);
    shapes = {{kh, kh, in, m}};
    const int out = cls == "SeparableConv2D" ? int_or("filters", 1) : in * m;
    if (cls == "SeparableConv2D") shapes.push_back({1, 1, in * m, out});
    if (bool_or("use_bias", true)) shapes.push_back({out});
  } else if (cls == "LSTM" || cls == "GRU") {
    const int units = int_or("units", 1);
    const int cols = (cls == "LSTM" ? 4 : 3) * units;
    shapes = {{in, cols}, {units, cols}};
    if (bool_or("use_bias", true)) {
      shapes.push_back(cls == "GRU" && bool_or("reset_after", true) ? Shape{2, cols} : Shape{cols});
    }
    // Inside Bidirectional (the ref names both directions' cells): the backward layer's too, sized
    // as the forward's (this source sees only the forward config; a backward_layer of another
    // size is the importer's to refuse on the count or shapes).
    if (layer.sublayers.size() == 2 && layer.sublayers[1] == "backward_layer/cell") {
      const std::vector<Shape> one = shapes;
      shapes.insert(shapes.end(), one.begin(), one.end());
    }
  } else if (cls == "MultiHeadAttention") {
    // Every input taken as `in` wide; the output as wide as the query unless output_shape says.
    const int h = int_or("num_heads", 1), k = int_or("key_dim", 1);
    const int v = int_or("value_dim", k), o = int_or("output_shape", in);
    const bool bias = bool_or("use_bias", true);
    for (const Shape& kernel : {Shape{in, h, k}, Shape{in, h, k}, Shape{in, h, v}}) {
      shapes.push_back(kernel);
      if (bias) shapes.push_back({kernel[1], kernel[2]});
    }
    shapes.push_back({h, v, o});
    if (bias) shapes.push_back({o});
  } else if (cls == "BatchNormalization" || cls == "LayerNormalization") {
    int count = bool_or("center", true) + bool_or("scale", true) + (cls == "BatchNormalization" ? 2 : 0);
    shapes.assign(static_cast<size_t>(count), Shape{in});
  }
  std::vector<Weight> out;
  int64_t total = 0;
  for (Shape& s : shapes) {
    int64_t n = 1;
    for (int d : s) {
      n *= d;
      if (n > kMaxSyntheticValues) break;
    }
    total += n;
    if (total > kMaxSyntheticValues) throw Error(ctx + ": synthetic weights too large");
    Weight w;
    w.data.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w.data[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i % 97) - 0.5f;
    w.shape = std::move(s);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace tickinfer::formats
