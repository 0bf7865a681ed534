#include "formats/keras/keras_config.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "formats/keras/keras_calls.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_layers.hpp"
#include "formats/keras/keras_layer_nodes.hpp"
#include "formats/keras/keras_pruning.hpp"
#include "formats/keras/keras_recurrent_directions.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

namespace {

constexpr size_t kMaxLayers = 100000;
constexpr int64_t kMaxInputValues = int64_t{1} << 28;

// One entry of a config's layer list, as read from either dialect.
struct LayerEntry {
  std::string name;
  std::string keras_class;
  const json* config = nullptr;       // the layer's "config" object
  // Functional only: one element per call of the layer (a shared layer has several).
  std::vector<LayerCall> calls;
  std::string keras3_path;
  // A tfmot PruneLowMagnitude wrapper (formats/keras/keras_pruning.hpp): keras_class and config are the
  // wrapped layer's; name and the Keras 3 path stay the wrapper's (the file stores them so).
  bool pruning_wrapper = false;
  // An inference no-op (Dropout, ...) called with training=True, as Monte Carlo dropout models
  // are built (DeepLOB): it runs as model.predict() runs it, as the identity, with a warning.
  bool called_with_training = false;
  // A Keras 3 operation on functional tensors (module keras.src.ops.*; keras_class "ops.<Name>"):
  // not a layer, so it has no weights path and does not count in the paths' numbering.
  bool op_node = false;
  // TimeDistributed(Dense): keras_class and config are the Dense's, the path the wrapper's (its
  // variables under "<path>/layer/vars").
  bool time_distributed = false;
  // Bidirectional(LSTM|GRU): keras_class and config are the wrapped layer's, wrapper the
  // Bidirectional's own config (keras_recurrent_directions.hpp).
  const json* wrapper = nullptr;
  std::string path_class() const {
    return pruning_wrapper ? kPruningWrapperClass : time_distributed ? "TimeDistributed" : wrapper ? "Bidirectional" : keras_class;
  }
};

bool is_model_class(const std::string& cls) {
  return cls == "Sequential" || cls == "Functional" || cls == "Model";
}

std::string layer_ctx(const std::string& label, const std::string& name, const std::string& cls) {
  return label + ": layer '" + name + "' (" + cls + ")";
}

// Assigns Keras 3 weight paths: snake_case(class) plus a per-class counter in list order.
class Keras3PathCounter {
 public:
  std::string next(const std::string& keras_class) {
    std::string base = keras_snake_case(keras_class);
    auto [it, fresh] = used_.try_emplace(base, 0);
    if (fresh) return "layers/" + base;
    return "layers/" + base + "_" + std::to_string(++it->second);
  }

 private:
  std::unordered_map<std::string, int> used_;
};

// Parses a shape that includes the batch dimension ([null, 10, 3]) into an un-batched Shape.
Shape shape_from_batch_shape(const json& batch_shape, const std::string& ctx) {
  if (!batch_shape.is_array() || batch_shape.size() < 2 || batch_shape.size() > 9) {
    throw Error(ctx + ": input shape must be a list of 2 to 9 dimensions including the batch, got " +
                json_brief(batch_shape));
  }
  Shape shape;
  int64_t values = 1;
  for (size_t i = 1; i < batch_shape.size(); ++i) {
    if (batch_shape[i].is_null()) {
      // A variable sequence length ([batch, None, features]) is the one unknown allowed: the
      // compiler takes the window length from its options, or streams one step at a time.
      if (i == 1 && batch_shape.size() == 3) {
        shape.push_back(-1);
        continue;
      }
      throw Error(ctx + ": input dimension " + std::to_string(i) +
                  " is unknown (None); only the time axis of a [batch, time, features] input "
                  "may be");
    }
    int d = json_value_int(batch_shape[i], 1, kMaxKerasDim, ctx + ": input dimension " + std::to_string(i));
    values *= d;
    if (values > kMaxInputValues) throw Error(ctx + ": input shape is too large");
    shape.push_back(d);
  }
  return shape;
}

// The input shape written on an InputLayer (or, in Keras 2 Sequential, on the first layer).
bool find_batch_shape(const json& config, const json*& out) {
  for (const char* key : {"batch_shape", "batch_input_shape"}) {
    auto it = config.find(key);
    if (it != config.end() && !it->is_null()) {
      out = &*it;
      return true;
    }
  }
  return false;
}

class GraphBuilder {
 public:
  GraphBuilder(WeightSource& weights, KerasDialect dialect, const std::string& label)
      : weights_(weights), dialect_(dialect), label_(label) {}

  Graph& graph() { return graph_; }
  const std::vector<std::string>& pruned_layers() const { return pruned_layers_; }

  int add_input(const std::string& name, Shape shape) {
    claim_name(name, "InputLayer");
    Node n;
    n.name = name;
    n.keras_class = "InputLayer";
    n.kind = OpKind::Input;
    n.shape = std::move(shape);
    ranks_.push_back(static_cast<int>(n.shape.size()));
    graph_.nodes.push_back(std::move(n));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }

  // `node_name` is the layer name, or for later calls of a shared layer "<name>#<call>".
  int add_layer(const LayerEntry& e, const std::vector<int>& inputs, const std::string& node_name,
                const json* call_kwargs = nullptr) {
    const std::string ctx = layer_ctx(label_, e.name, e.wrapper ? "Bidirectional" : e.keras_class);
    claim_name(node_name, e.keras_class);
    KerasLayerRef ref;
    ref.name = e.name;
    ref.keras_class = e.keras_class;
    ref.keras3_path = e.keras3_path;
    ref.weights_in_cell = layer_weights_in_cell(e.keras_class);
    ref.config = e.config;
    ref.pruning_wrapper = e.pruning_wrapper;
    ref.time_distributed = e.time_distributed;
    ref.sublayers = layer_weight_sublayers(e.keras_class);
    ref.call_kwargs = call_kwargs;
    if (e.pruning_wrapper && node_name == e.name) pruned_layers_.push_back(e.name);
    std::vector<int> in_ranks;
    for (int i : inputs) in_ranks.push_back(ranks_[static_cast<size_t>(i)]);
    if (e.wrapper || recurrent_goes_backwards(e.keras_class, *e.config, ctx)) {
      return add_directions(e, ref, inputs, in_ranks, node_name, ctx);
    }
    Node n = node_from_keras_layer(ref, *e.config, in_ranks, weights_, dialect_, ctx);
    n.name = node_name;
    if (e.time_distributed) n.keras_class = "TimeDistributed";  // as model.layers lists it
    if (n.kind == OpKind::LayerNorm && n.weights.empty()) fill_identity_affine(n, inputs[0], ctx);
    if (e.keras_class == "Dot") return add_dot(sink(ref, in_ranks, node_name, ctx), std::move(n), inputs, in_ranks, *e.config, ctx);
    count_weights(n, ctx);
    n.inputs = inputs;
    ranks_.push_back(output_rank(n, in_ranks));
    graph_.nodes.push_back(std::move(n));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }

  // The tensors a call of the layer returns, in Keras' order: the node add_layer made, or for a
  // recurrent layer called with return_state its output, state_h (and an LSTM's state_c) as
  // SliceRows nodes "<node>/output", "<node>/state_h", "<node>/state_c" of what the node computes
  // together (an LSTM's h rows and a last row holding c).
  std::vector<int> layer_outputs(const LayerEntry& e, int node) {
    if (auto two = two_outputs_.find(node); two != two_outputs_.end()) return two->second;
    const Node& n = graph_.nodes[static_cast<size_t>(node)];
    const bool gru_state = n.kind == OpKind::GRU && json_bool(*e.config, "return_state", false, e.name);
    if (!n.return_state && !gru_state) return {node};
    const bool sequences = n.return_sequences;
    const std::string name = n.name, cls = n.keras_class;
    auto rows = [&](const char* what, Node s) {
      s.name = name + "/" + what;
      s.keras_class = cls;
      const int rank = s.keepdims ? 2 : 1;
      return add_aux(std::move(s), {node}, rank);
    };
    if (gru_state) {  // a GRU's state is its last output: the sequence's last row
      Node last;
      last.kind = OpKind::SliceRows;
      last.slice_begin = -1;
      return {node, sequences ? rows("state_h", std::move(last)) : node};
    }
    const int output = rows("output", lstm_output_slice(LstmOutput::Output, sequences));
    return {output, rows("state_h", lstm_output_slice(LstmOutput::StateH, sequences)),
            rows("state_c", lstm_output_slice(LstmOutput::StateC, sequences))};
  }

  // An operation's constant arguments (LayerCall::constants) as Constant nodes, each broadcast
  // (numpy's rules, the batch axis included) to the shape of the call's first tensor and put at
  // its place among `inputs`.
  void add_constants(const LayerCall& call, const std::string& node_name, const std::string& ctx,
                     std::vector<int>& inputs) {
    const Shape target = inferred_shape(inputs.at(0), ctx);
    for (int d : target) {
      if (d < 1) throw Error(ctx + ": an array argument needs the tensor's shape fixed, got " + shape_str(target));
    }
    for (size_t k = 0; k < call.constants.size(); ++k) {
      const auto& [position, value] = call.constants[k];
      Node c;
      c.name = node_name + "/constant" + (k ? std::to_string(k) : "");
      c.keras_class = "Constant";
      c.kind = OpKind::Constant;
      c.weights.push_back(constant_argument(*value, target, ctx));
      claim_name(c.name, c.keras_class);
      count_weights(c, ctx);
      ranks_.push_back(static_cast<int>(target.size()));
      graph_.nodes.push_back(std::move(c));
      inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(std::min(position, inputs.size())),
                    static_cast<int>(graph_.nodes.size()) - 1);
    }
  }

 private:
  // A recurrent layer that reads backwards, or a Bidirectional around one, as the nodes
  // keras_recurrent_directions.hpp writes it (named from node_name, claimed already).
  int add_directions(const LayerEntry& e, KerasLayerRef ref, const std::vector<int>& inputs,
                     const std::vector<int>& in_ranks, const std::string& node_name, const std::string& ctx) {
    if (inputs.size() != 1) throw Error(ctx + ": reading the window backwards takes one input (no initial_state)");
    if (!e.wrapper) {
      return add_backwards_recurrent(sink(ref, in_ranks, node_name, ctx), ref, *e.config, node_name, inputs[0], in_ranks[0],
                                     weights_, ctx);
    }
    ref.sublayers = {"forward_layer/cell", "backward_layer/cell"};  // the .keras file's paths
    ref.weights_in_cell = false;
    std::vector<int> outs =
        add_bidirectional(sink(ref, in_ranks, node_name, ctx), ref, *e.wrapper, node_name, inputs[0], in_ranks[0], weights_, ctx);
    if (outs.size() > 1) two_outputs_[outs.back()] = outs;
    return outs.back();
  }

  // What a layer written as several nodes may do here (keras_layer_nodes.hpp); `ref` is the layer's.
  LayerNodeSink sink(const KerasLayerRef& ref, const std::vector<int>& in_ranks, const std::string& node_name,
                     const std::string& ctx) {
    LayerNodeSink s;
    s.add = [this, node_name, ctx](Node n, std::vector<int> in, int rank) {
      count_weights(n, ctx);
      const bool own = n.name == node_name;  // claimed by add_layer
      return add_aux(std::move(n), std::move(in), rank, own);
    };
    s.convert = [this, ref, in_ranks, ctx](const std::string& cls, const json& config, WeightSource& source) {
      KerasLayerRef inner = ref;
      inner.keras_class = cls;
      inner.weights_in_cell = layer_weights_in_cell(cls);
      inner.sublayers = layer_weight_sublayers(cls);
      return node_from_keras_layer(inner, config, in_ranks, source, dialect_, ctx);
    };
    s.shape_of = [this, ctx](int node) { return inferred_shape(node, ctx); };
    return s;
  }

  // A node the importer adds around a layer's own (its name claimed, its inputs and rank set).
  int add_aux(Node n, std::vector<int> inputs, int rank, bool name_claimed = false) {
    if (!name_claimed) claim_name(n.name, n.keras_class);
    n.inputs = std::move(inputs);
    ranks_.push_back(rank);
    graph_.nodes.push_back(std::move(n));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }

  // Adds the node's weights to the model's total, which stops at 1 GiB.
  void count_weights(const Node& n, const std::string& ctx) {
    for (const Weight& w : n.weights) {
      total_weight_values_ += static_cast<int64_t>(w.data.size());
      if (total_weight_values_ > kMaxTotalWeightValues) throw Error(ctx + ": model weights exceed 1 GiB");
    }
  }

  // The shape of node `input`, by shape inference over the graph built so far.
  Shape inferred_shape(int input, const std::string& ctx) {
    Graph probe;
    probe.nodes = std::move(graph_.nodes);
    for (size_t i = 0; i < probe.nodes.size(); ++i) {
      if (probe.nodes[i].kind == OpKind::Input) probe.inputs.push_back(static_cast<int>(i));
    }
    probe.outputs = {input};
    Shape in_shape;
    try {
      infer_shapes(probe);
      in_shape = probe.nodes[static_cast<size_t>(input)].shape;
    } catch (const Error& e) {
      graph_.nodes = std::move(probe.nodes);
      throw Error(ctx + ": cannot determine the input's shape: " + e.what());
    }
    graph_.nodes = std::move(probe.nodes);
    return in_shape;
  }

  // gamma = 1, beta = 0 sized by the channel count of node `input` (only
  // LayerNormalization(center=False, scale=False), whose file holds no variable).
  void fill_identity_affine(Node& n, int input, const std::string& ctx) {
    const Shape in_shape = inferred_shape(input, ctx);
    if (in_shape.empty()) throw Error(ctx + ": input has rank 0");
    const int channels = in_shape.back();
    n.weights = {Weight{{channels}, std::vector<float>(static_cast<size_t>(channels), 1.0f)},
                 Weight{{channels}, std::vector<float>(static_cast<size_t>(channels), 0.0f)}};
  }

  void claim_name(const std::string& name, const std::string& cls) {
    if (!names_.insert(name).second) {
      throw Error(layer_ctx(label_, name, cls) + ": duplicate layer name");
    }
  }

  WeightSource& weights_;
  KerasDialect dialect_;
  const std::string& label_;
  Graph graph_;
  std::vector<int> ranks_;  // un-batched output rank per node
  std::unordered_set<std::string> names_;
  std::unordered_map<int, std::vector<int>> two_outputs_;  // Bidirectional(merge_mode=None): its last node -> both
  int64_t total_weight_values_ = 0;
  std::vector<std::string> pruned_layers_;
};

// Reads the common fields of every entry of config["layers"].
std::vector<LayerEntry> read_layer_list(const json& config, bool functional, const std::string& label) {
  const json& layers = member(config, "layers");
  if (!layers.is_array()) throw Error(label + ": model config has no 'layers' list");
  if (layers.size() > kMaxLayers) throw Error(label + ": too many layers");
  std::vector<LayerEntry> entries;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& layer = layers[i];
    const std::string where = label + ": layers[" + std::to_string(i) + "]";
    if (!layer.is_object()) throw Error(where + " must be an object");
    LayerEntry e;
    e.keras_class = json_string(layer, "class_name", "", where);
    if (json_string(layer, "module", "", where).rfind("keras.src.ops", 0) == 0) {
      e.op_node = true;
      e.keras_class = "ops." + e.keras_class;
    }
    if (!layer.contains("config") || !layer["config"].is_object()) {
      throw Error(where + " (" + e.keras_class + ") has no config object");
    }
    e.config = &layer["config"];
    e.name = json_string(*e.config, "name", json_string(layer, "name", "", where), where);
    if (e.name.empty()) throw Error(where + " (" + e.keras_class + ") has no name");
    if (e.keras_class == kPruningWrapperClass) {
      const json& wrapped = pruning_wrapped_layer(*e.config, layer_ctx(label, e.name, e.keras_class));
      e.pruning_wrapper = true;
      e.keras_class = wrapped["class_name"].get<std::string>();
      e.config = &wrapped["config"];
    }
    if (e.keras_class == "TimeDistributed") {
      const json& wrapped = member(*e.config, "layer");
      const std::string inner = wrapped.is_object() ? json_string(wrapped, "class_name", "", where) : "";
      if (inner != "Dense" || !member(wrapped, "config").is_object()) {
        throw Error(layer_ctx(label, e.name, e.keras_class) + ": wrapping " + (inner.empty() ? "nothing" : inner) +
                    " is not supported (only Dense, which applies to the last axis either way)");
      }
      e.time_distributed = true;
      e.keras_class = inner;
      e.config = &wrapped["config"];
    }
    if (e.keras_class == "Bidirectional") {  // the wrapped class is checked where it is read
      const json& wrapped = member(*e.config, "layer");
      if (!wrapped.is_object() || !member(wrapped, "config").is_object()) {
        throw Error(layer_ctx(label, e.name, e.keras_class) + ": has no wrapped layer");
      }
      e.wrapper = e.config;
      e.keras_class = json_string(wrapped, "class_name", "", where);
      e.config = &wrapped["config"];
    }
    const std::string ctx = layer_ctx(label, e.name, e.keras_class);
    if (is_model_class(e.keras_class)) {
      throw Error(ctx + ": nested models are not supported (flatten the model before saving)");
    }
    if (e.keras_class != "InputLayer" && !is_supported_layer_class(e.keras_class)) {
      throw Error(ctx + ": layer class is not supported");
    }
    if (functional) {
      e.calls = parse_inbound(member(layer, "inbound_nodes"), is_inference_noop_class(e.keras_class),
                              layer_takes_keyword_inputs(e.keras_class), e.op_node, e.called_with_training, ctx);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

Shape input_layer_shape(const LayerEntry& e, const std::string& label) {
  const std::string ctx = layer_ctx(label, e.name, e.keras_class);
  check_float32_policy(*e.config, ctx);
  if (json_bool(*e.config, "sparse", false, ctx) || json_bool(*e.config, "ragged", false, ctx)) {
    throw Error(ctx + ": sparse or ragged inputs are not supported");
  }
  const json* batch_shape = nullptr;
  if (!find_batch_shape(*e.config, batch_shape)) throw Error(ctx + ": input layer has no shape");
  return shape_from_batch_shape(*batch_shape, ctx);
}

void build_sequential(GraphBuilder& b, const json& model, const json& config, const std::string& label) {
  std::vector<LayerEntry> entries = read_layer_list(config, /*functional=*/false, label);
  size_t first = 0;
  int prev = -1;
  if (!entries.empty() && entries[0].keras_class == "InputLayer") {
    prev = b.add_input(entries[0].name, input_layer_shape(entries[0], label));
    first = 1;
  } else {
    // Keras 2 puts batch_input_shape on the first layer; otherwise fall back to the build shape.
    const json* batch_shape = nullptr;
    std::string name = "input";
    const LayerEntry* e0 = entries.empty() ? nullptr : &entries[0];
    if (e0 && find_batch_shape(e0->wrapper ? *e0->wrapper : *e0->config, batch_shape)) {  // a wrapper's own
      name = entries[0].name + "_input";
    } else if (config.contains("build_input_shape") && !config["build_input_shape"].is_null()) {
      batch_shape = &config["build_input_shape"];
    } else if (model.contains("build_config") && model["build_config"].is_object() &&
               model["build_config"].contains("input_shape")) {
      batch_shape = &model["build_config"]["input_shape"];
    } else {
      throw Error(label + ": Sequential model has no input shape (no InputLayer or batch_input_shape)");
    }
    prev = b.add_input(name, shape_from_batch_shape(*batch_shape, label + ": Sequential input"));
  }
  if (first == entries.size()) throw Error(label + ": Sequential model has no layers");
  Keras3PathCounter paths;  // Sequential.layers leaves the InputLayer out
  for (size_t i = first; i < entries.size(); ++i) {
    LayerEntry& e = entries[i];
    if (e.keras_class == "InputLayer") {
      throw Error(layer_ctx(label, e.name, e.keras_class) + ": InputLayer inside a Sequential model");
    }
    e.keras3_path = paths.next(e.path_class());
    const std::vector<int> outs = b.layer_outputs(e, b.add_layer(e, {prev}, e.name));
    if (e.wrapper && outs.size() > 1) {  // Bidirectional(merge_mode=None): the model's two outputs
      if (i + 1 != entries.size()) {
        throw Error(layer_ctx(label, e.name, "Bidirectional") + ": merge_mode=None hands two tensors to the next layer");
      }
      b.graph().inputs = {0};
      b.graph().outputs = outs;
      return;
    }
    prev = outs[0];
  }
  b.graph().inputs = {0};
  b.graph().outputs = {prev};
}

// Node names for the calls of a layer: the layer name, then "<name>#1", "<name>#2", ...
std::string call_node_name(const LayerEntry& e, size_t call) {
  return call == 0 ? e.name : e.name + "#" + std::to_string(call);
}

void build_functional(GraphBuilder& b, const json& config, const std::string& label) {
  std::vector<LayerEntry> entries = read_layer_list(config, /*functional=*/true, label);
  for (const LayerEntry& e : entries) {
    if (e.called_with_training) {
      b.graph().warnings.push_back("layer '" + e.name + "' (" + e.keras_class +
                                   ") is called with training=True (Monte Carlo dropout); it runs as "
                                   "model.predict() runs it, as the identity");
    }
  }
  std::unordered_map<std::string, size_t> index_of;
  Keras3PathCounter paths;  // Functional.layers keeps the InputLayers
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].op_node) entries[i].keras3_path = paths.next(entries[i].path_class());
    if (!index_of.emplace(entries[i].name, i).second) {
      throw Error(layer_ctx(label, entries[i].name, entries[i].keras_class) + ": duplicate layer name");
    }
  }
  // One vertex per call of each layer (an InputLayer is one vertex without inputs); first_vertex
  // maps a layer to its call 0.
  std::vector<size_t> first_vertex(entries.size());
  std::vector<std::pair<size_t, size_t>> vertices;  // (entry, call)
  for (size_t i = 0; i < entries.size(); ++i) {
    const LayerEntry& e = entries[i];
    const std::string ctx = layer_ctx(label, e.name, e.keras_class);
    if (e.keras_class == "InputLayer" && !e.calls.empty()) {
      bool all_empty = true;  // Keras 2 may write [] per call; Keras 3 writes no calls
      for (const LayerCall& call : e.calls) all_empty &= call.tensors.empty();
      if (!all_empty) throw Error(ctx + ": InputLayer has inputs");
    }
    if (e.keras_class != "InputLayer" && e.calls.empty()) throw Error(ctx + ": layer is never called");
    first_vertex[i] = vertices.size();
    const size_t calls = e.keras_class == "InputLayer" ? 1 : e.calls.size();
    for (size_t k = 0; k < calls; ++k) vertices.emplace_back(i, k);
  }
  auto vertex_of = [&](const TensorRef& t, const std::string& ctx) {
    auto it = index_of.find(t.layer);
    if (it == index_of.end()) throw Error(ctx + ": layer '" + t.layer + "' does not exist");
    const LayerEntry& producer = entries[it->second];
    const size_t calls = producer.keras_class == "InputLayer" ? 1 : producer.calls.size();
    if (static_cast<size_t>(t.call) >= calls) {
      throw Error(ctx + ": layer '" + t.layer + "' has no call " + std::to_string(t.call));
    }
    return first_vertex[it->second] + static_cast<size_t>(t.call);
  };
  // Kahn's algorithm, preferring config order, so any valid config order is accepted.
  std::vector<std::vector<size_t>> consumers(vertices.size());
  std::vector<size_t> pending(vertices.size(), 0);
  std::vector<std::vector<std::pair<size_t, int>>> producers(vertices.size());  // (vertex, output)
  for (size_t v = 0; v < vertices.size(); ++v) {
    const LayerEntry& e = entries[vertices[v].first];
    if (e.keras_class == "InputLayer") continue;
    const std::string ctx = layer_ctx(label, e.name, e.keras_class);
    for (const TensorRef& t : e.calls[vertices[v].second].tensors) {
      size_t p = vertex_of(t, ctx);
      producers[v].emplace_back(p, t.tensor);
      consumers[p].push_back(v);
      ++pending[v];
    }
  }
  // The node holding output `tensor` of vertex p (a layer with several outputs has one each).
  std::vector<std::vector<int>> outputs_of(vertices.size());
  auto node_of = [&](size_t p, int tensor, const std::string& ctx) {
    const std::vector<int>& outs = outputs_of[p];
    if (tensor < 0 || static_cast<size_t>(tensor) >= outs.size()) {
      const LayerEntry& producer = entries[vertices[p].first];
      throw Error(ctx + ": uses output " + std::to_string(tensor) + " of layer '" + producer.name + "', which has " +
                  std::to_string(outs.size()) + (outs.size() == 1 ? " output" : " outputs") +
                  (producer.keras_class == "LSTM" || producer.keras_class == "GRU" ? "" : " (multi-output layers are "
                                                                                          "supported for LSTM and GRU "
                                                                                          "return_state only)"));
    }
    return outs[static_cast<size_t>(tensor)];
  };
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t v = 0; v < vertices.size(); ++v) {
    if (pending[v] == 0) ready.push(v);
  }
  size_t placed = 0;
  while (!ready.empty()) {
    size_t v = ready.top();
    ready.pop();
    const auto [i, call] = vertices[v];
    const LayerEntry& e = entries[i];
    if (e.keras_class == "InputLayer") {
      outputs_of[v] = {b.add_input(e.name, input_layer_shape(e, label))};
    } else {
      const std::string ctx = layer_ctx(label, e.name, e.keras_class);
      std::vector<int> inputs;
      for (const auto& [p, tensor] : producers[v]) inputs.push_back(node_of(p, tensor, ctx));
      const LayerCall& c = e.calls[call];
      if (!c.constants.empty()) b.add_constants(c, call_node_name(e, call), ctx, inputs);
      outputs_of[v] = b.layer_outputs(e, b.add_layer(e, inputs, call_node_name(e, call), c.kwargs));
    }
    ++placed;
    for (size_t c : consumers[v]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (placed != vertices.size()) throw Error(label + ": the layer graph has a cycle");

  Graph& g = b.graph();
  std::vector<bool> is_model_input(entries.size(), false);
  for (const TensorRef& t : parse_endpoint_list(member(config, "input_layers"), label + ": input_layers")) {
    size_t v = vertex_of(t, label + ": input_layers");
    size_t i = vertices[v].first;
    if (entries[i].keras_class != "InputLayer") {
      throw Error(label + ": input '" + t.layer + "' is not an InputLayer");
    }
    if (is_model_input[i]) throw Error(label + ": input '" + t.layer + "' is listed twice");
    is_model_input[i] = true;
    g.inputs.push_back(outputs_of[v][0]);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].keras_class == "InputLayer" && !is_model_input[i]) {
      throw Error(label + ": InputLayer '" + entries[i].name + "' is not listed in input_layers");
    }
  }
  for (const TensorRef& t : parse_endpoint_list(member(config, "output_layers"), label + ": output_layers")) {
    g.outputs.push_back(node_of(vertex_of(t, label + ": output_layers"), t.tensor, label + ": output_layers"));
  }
}

}  // namespace

Graph graph_from_keras_config(const json& model, WeightSource& weights, KerasDialect dialect,
                              const std::string& label) {
  if (!model.is_object()) throw Error(label + ": model config must be a JSON object");
  const std::string cls = json_string(model, "class_name", "", label + ": model config");
  const json& config = member(model, "config");
  if (!config.is_object()) throw Error(label + ": model config has no 'config' object");
  GraphBuilder builder(weights, dialect, label);
  builder.graph().name = json_string(config, "name", "", label + ": model config");
  check_float32_policy(config, label + ": model '" + builder.graph().name + "'");
  if (cls == "Sequential") {
    build_sequential(builder, model, config, label);
  } else if (cls == "Functional" || cls == "Model") {
    build_functional(builder, config, label);
  } else {
    throw Error(label + ": model class '" + cls + "' is not supported (only Sequential and Functional)");
  }
  builder.graph().source_format = dialect == KerasDialect::Keras3 ? "keras3" : "keras2-h5";
  if (!builder.pruned_layers().empty()) builder.graph().warnings.push_back(pruning_wrapper_warning(builder.pruned_layers()));
  return std::move(builder.graph());
}

}  // namespace tickinfer::formats
