#include "formats/keras/keras_recurrent_directions.hpp"

#include <utility>

#include "formats/keras/keras_calls.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_layers.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

namespace {

// Hands out weights already read: one direction's share of a Bidirectional's.
class HeldWeights final : public WeightSource {
 public:
  explicit HeldWeights(std::vector<Weight> w) : w_(std::move(w)) {}
  std::vector<Weight> layer_weights(const KerasLayerRef&) override { return std::move(w_); }

 private:
  std::vector<Weight> w_;
};

bool is_recurrent(const std::string& cls) { return cls == "LSTM" || cls == "GRU"; }

Node named(OpKind kind, const std::string& name, const std::string& cls) {
  Node n;
  n.kind = kind;
  n.name = name;
  n.keras_class = cls;
  return n;
}

// One direction: the layer on `input` (its time axis reversed first when the config goes
// backwards), its node named `name`.
int direction(const LayerNodeSink& sink, const std::string& layer_class, const json& config, const std::string& name,
              const std::string& cls, int input, int in_rank, WeightSource& weights, const std::string& ctx) {
  if (json_bool(config, "go_backwards", false, ctx)) {
    input = sink.add(named(OpKind::ReverseTime, name + "/reverse_input", cls), {input}, in_rank);
  }
  json forwards = config;
  forwards["go_backwards"] = false;
  Node n = sink.convert(layer_class, forwards, weights);
  n.name = name;
  n.keras_class = cls;
  const int rank = output_rank(n, {in_rank});
  return sink.add(std::move(n), {input}, rank);
}

// The wrapped layer ({"class_name": "LSTM" | "GRU", "config": {...}}) of a Bidirectional.
const json& wrapped_config(const json& wrapped, const char* what, std::string& layer_class, const std::string& ctx) {
  layer_class = wrapped.is_object() ? json_string(wrapped, "class_name", "", ctx) : "";
  const json& config = member(wrapped, "config");
  if (!is_recurrent(layer_class) || !config.is_object()) {
    throw Error(ctx + ": the " + what + " layer is " + (layer_class.empty() ? "missing" : layer_class) +
                "; Bidirectional is supported around LSTM and GRU");
  }
  return config;
}

}  // namespace

bool recurrent_goes_backwards(const std::string& keras_class, const json& config, const std::string& ctx) {
  return is_recurrent(keras_class) && json_bool(config, "go_backwards", false, ctx);
}

int add_backwards_recurrent(const LayerNodeSink& sink, const KerasLayerRef& ref, const json& config,
                            const std::string& name, int input, int in_rank, WeightSource& weights,
                            const std::string& ctx) {
  return direction(sink, ref.keras_class, config, name, ref.keras_class, input, in_rank, weights, ctx);
}

std::vector<int> add_bidirectional(const LayerNodeSink& sink, const KerasLayerRef& ref, const json& wrapper,
                                   const std::string& name, int input, int in_rank, WeightSource& weights,
                                   const std::string& ctx) {
  const std::string cls = "Bidirectional";
  std::string forward_class, backward_class;
  const json& forward = wrapped_config(member(wrapper, "layer"), "wrapped", forward_class, ctx);
  json backward;
  if (const json& given = member(wrapper, "backward_layer"); !given.is_null()) {
    backward = wrapped_config(given, "backward", backward_class, ctx);
  } else {  // Keras' copy of the layer, reading the other way
    backward_class = forward_class;
    backward = forward;
    backward["go_backwards"] = !json_bool(forward, "go_backwards", false, ctx);
  }
  if (json_bool(forward, "go_backwards", false, ctx) == json_bool(backward, "go_backwards", false, ctx)) {
    throw Error(ctx + ": the forward and backward layers read the window the same way (go_backwards)");
  }
  const bool sequences = json_bool(forward, "return_sequences", false, ctx);
  if (json_bool(backward, "return_sequences", false, ctx) != sequences) {
    throw Error(ctx + ": the forward and backward layers disagree on return_sequences");
  }
  for (const json* c : {&forward, &std::as_const(backward)}) {
    if (json_bool(*c, "return_state", false, ctx)) throw Error(ctx + ": return_state=true is not supported in Bidirectional");
  }
  std::string mode = "concat";
  if (wrapper.contains("merge_mode")) mode = wrapper["merge_mode"].is_null() ? "None" : json_string(wrapper, "merge_mode", "", ctx);
  if (mode != "concat" && mode != "sum" && mode != "mul" && mode != "ave" && mode != "None") {
    throw Error(ctx + ": merge_mode='" + mode + "' is not supported (concat, sum, mul, ave or None)");
  }

  // The file holds the forward layer's variables, then the backward layer's.
  std::vector<Weight> all = weights.layer_weights(ref);
  const size_t forward_count = json_bool(forward, "use_bias", true, ctx) ? 3 : 2;
  if (all.size() < forward_count) {
    throw Error(ctx + ": expected the forward and the backward layer's weights, found " + std::to_string(all.size()) +
                " weight tensors");
  }
  HeldWeights forward_weights({all.begin(), all.begin() + static_cast<std::ptrdiff_t>(forward_count)});
  HeldWeights backward_weights({all.begin() + static_cast<std::ptrdiff_t>(forward_count), all.end()});
  const int y = direction(sink, forward_class, forward, name + "/forward", cls, input, in_rank, forward_weights, ctx);
  int y_rev = direction(sink, backward_class, backward, name + "/backward", cls, input, in_rank, backward_weights, ctx);
  const int rank = sequences ? 2 : 1;
  if (sequences) y_rev = sink.add(named(OpKind::ReverseTime, name + "/backward_in_time_order", cls), {y_rev}, rank);

  if (mode == "None") return {y, y_rev};
  if (mode == "ave") {
    const int sum = sink.add(named(OpKind::Add, name + "/sum", cls), {y, y_rev}, rank);
    const Shape shape = sink.shape_of(sum);
    for (int d : shape) {
      if (d < 1) throw Error(ctx + ": merge_mode='ave' needs a fixed window length (the input's time axis is None)");
    }
    Node half = named(OpKind::Constant, name + "/half", cls);
    half.weights.push_back(Weight{shape, std::vector<float>(static_cast<size_t>(shape_size(shape)), 0.5f)});
    const int h = sink.add(std::move(half), {}, rank);
    return {sink.add(named(OpKind::Multiply, name, cls), {sum, h}, rank)};
  }
  Node merge = named(mode == "concat" ? OpKind::Concatenate : mode == "sum" ? OpKind::Add : OpKind::Multiply, name, cls);
  merge.axis = -1;
  return {sink.add(std::move(merge), {y, y_rev}, rank)};
}

}  // namespace tickinfer::formats
