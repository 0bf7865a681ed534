#include "formats/savedmodel/saved_model.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "formats/attention_fusion.hpp"
#include "formats/savedmodel/deep_stack.hpp"
#include "formats/savedmodel/tensor_bundle.hpp"
#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/protobuf/saved_model.pb.h"
#include "tensorflow/core/protobuf/trackable_object_graph.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace fs = std::filesystem;

namespace {

constexpr const char* kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr const char* kInitSignature = "__saved_model_init_op";

SavedModelTensorInfo tensor_info(const std::string& key, const tensorflow::TensorInfo& t) {
  SavedModelTensorInfo out;
  out.key = key;
  out.tensor_name = t.name();
  out.dtype = t.dtype();
  out.unknown_rank = t.tensor_shape().unknown_rank();
  out.shape = tf_shape_of(t.tensor_shape());
  out.sparse = t.encoding_case() == tensorflow::TensorInfo::kCooSparse;
  return out;
}

std::vector<SavedModelSignature> signatures_of(const tensorflow::MetaGraphDef& mg) {
  std::vector<SavedModelSignature> out;
  for (const auto& [key, sig] : mg.signature_def()) {
    if (key == kInitSignature) continue;
    SavedModelSignature s;
    s.key = key;
    s.method_name = sig.method_name();
    for (const auto& [k, t] : sig.inputs()) s.inputs.push_back(tensor_info(k, t));
    for (const auto& [k, t] : sig.outputs()) s.outputs.push_back(tensor_info(k, t));
    auto by_key = [](const SavedModelTensorInfo& a, const SavedModelTensorInfo& b) { return a.key < b.key; };
    std::sort(s.inputs.begin(), s.inputs.end(), by_key);
    std::sort(s.outputs.begin(), s.outputs.end(), by_key);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

// `tags` is comma-separated, as --saved_model_tags takes it; like TensorFlow's loader, the
// MetaGraph whose tag set equals the requested set is the one loaded.
const tensorflow::MetaGraphDef& pick_meta_graph(const tensorflow::SavedModel& sm, const std::string& tags, const std::string& label) {
  std::set<std::string> want;
  for (size_t start = 0; start <= tags.size();) {
    size_t end = tags.find(',', start);
    if (end == std::string::npos) end = tags.size();
    std::string t = tags.substr(start, end - start);
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    if (!t.empty()) want.insert(t);
    start = end + 1;
  }
  std::string seen;
  for (const auto& mg : sm.meta_graphs()) {
    const auto& have = mg.meta_info_def().tags();
    if (std::set<std::string>(have.begin(), have.end()) == want) return mg;
    seen += seen.empty() ? "{" : ", {";
    for (int i = 0; i < have.size(); ++i) seen += (i ? "," : "") + have[i];
    seen += "}";
  }
  throw Error(label + ": no MetaGraph with tags '" + tags + "' (tag sets present: " + (seen.empty() ? "none" : seen) + ")");
}

// node name -> NodeDef of the top-level graph.
std::map<std::string, const tensorflow::NodeDef*> top_nodes(const tensorflow::GraphDef& g) {
  std::map<std::string, const tensorflow::NodeDef*> m;
  for (const auto& n : g.node()) m[n.name()] = &n;
  return m;
}

// Checkpoint key of SavedObject `id`'s variable, from the TrackableObjectGraph.
std::string checkpoint_key(const tensorflow::TrackableObjectGraph& tog, int id, const std::string& label) {
  if (id < 0 || id >= tog.nodes_size()) throw Error(label + ": object " + std::to_string(id) + " is not in the checkpoint's object graph");
  for (const auto& a : tog.nodes(id).attributes()) {
    if (a.name() == "VARIABLE_VALUE") return a.checkpoint_key();
  }
  throw Error(label + ": object " + std::to_string(id) + " has no VARIABLE_VALUE in the checkpoint");
}

struct SignatureCall {
  const tensorflow::NodeDef* call = nullptr;
  std::vector<int> output_index;  // per signature output (sorted by key)
};

SignatureCall find_call(const SavedModelSignature& sig, const std::map<std::string, const tensorflow::NodeDef*>& nodes, const std::string& label) {
  SignatureCall sc;
  for (const SavedModelTensorInfo& o : sig.outputs) {
    const std::string where = label + ": signature '" + sig.key + "' output '" + o.key + "'";
    const size_t colon = o.tensor_name.find(':');
    const std::string node = o.tensor_name.substr(0, colon);
    auto it = nodes.find(node);
    if (it == nodes.end()) throw Error(where + " names tensor '" + o.tensor_name + "', which is not in the graph");
    const std::string& op = it->second->op();
    if (op != "StatefulPartitionedCall" && op != "PartitionedCall") {
      throw Error(where + ": tensor '" + o.tensor_name + "' is computed by a top-level " + op + " (expected a call of the signature function)");
    }
    if (sc.call != nullptr && sc.call != it->second) throw Error(where + ": outputs come from different calls (not supported)");
    sc.call = it->second;
    const std::string idx = colon == std::string::npos ? "0" : o.tensor_name.substr(colon + 1);
    if (idx.empty() || idx.size() > 6 || !std::all_of(idx.begin(), idx.end(), ::isdigit)) throw Error(where + ": bad tensor name '" + o.tensor_name + "'");
    sc.output_index.push_back(std::stoi(idx));
  }
  if (sc.call == nullptr) throw Error(label + ": signature '" + sig.key + "' has no outputs");
  return sc;
}

// Drops nodes no output depends on (left behind where the lowering looked through an op, e.g. the
// x * 0.5 of a gelu expression); inputs always stay. Nodes are in topological order.
void prune_unused(Graph& g) {
  std::vector<bool> keep(g.nodes.size(), false);
  for (int o : g.outputs) keep[static_cast<size_t>(o)] = true;
  for (int i : g.inputs) keep[static_cast<size_t>(i)] = true;
  for (size_t k = g.nodes.size(); k-- > 0;) {
    if (!keep[k]) continue;
    for (int in : g.nodes[k].inputs) keep[static_cast<size_t>(in)] = true;
  }
  std::vector<int> remap(g.nodes.size(), -1);
  std::vector<Node> nodes;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (!keep[k]) continue;
    remap[k] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(g.nodes[k]));
    for (int& in : nodes.back().inputs) in = remap[static_cast<size_t>(in)];
  }
  for (int& i : g.inputs) i = remap[static_cast<size_t>(i)];
  for (int& o : g.outputs) o = remap[static_cast<size_t>(o)];
  g.nodes = std::move(nodes);
}

}  // namespace


namespace {

// What every signature's lowering reads: the MetaGraph, its top-level nodes, the checkpoint's
// object graph and the variables.
struct ImportContext {
  const tensorflow::MetaGraphDef& mg;
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  tensorflow::TrackableObjectGraph tog;
  const VariableReader& read_variable;
  const std::string& label;
};

// A signature that takes serialized tf.Examples: exactly one input, of dtype string.
bool takes_examples(const SavedModelSignature& sig) { return sig.inputs.size() == 1 && sig.inputs[0].dtype == kTfString; }

// The arguments of the signature's call: its placeholders (float inputs become Graph inputs; the
// one string input of an example signature becomes the Examples value ParseExampleV2 reads),
// then one variable per captured VarHandleOp.
std::vector<TfValue> call_arguments(const ImportContext& c, const SavedModelSignature& sig, const tensorflow::NodeDef& call,
                                    const std::string& fn, bool examples, TfLowering& lowering) {
  const std::string& label = c.label;
  const auto& concrete = c.mg.object_graph_def().concrete_functions();
  auto cf = concrete.find(fn);
  std::vector<int> bound;
  if (cf != concrete.end()) bound.assign(cf->second.bound_inputs().begin(), cf->second.bound_inputs().end());
  std::vector<TfValue> args;
  size_t resource_arg = 0;
  for (const std::string& ref : call.input()) {
    if (!ref.empty() && ref[0] == '^') continue;
    const std::string node = ref.substr(0, ref.find(':'));
    auto it = c.nodes.find(node);
    if (it == c.nodes.end()) throw Error(label + ": call '" + call.name() + "' input '" + ref + "' is not in the graph");
    const tensorflow::NodeDef& in = *it->second;
    if (in.op() == "Placeholder") {
      auto si = std::find_if(sig.inputs.begin(), sig.inputs.end(), [&](const auto& t) { return t.tensor_name.substr(0, t.tensor_name.find(':')) == node; });
      if (si == sig.inputs.end()) throw Error(label + ": call input '" + node + "' is no input of signature '" + sig.key + "'");
      if (examples && si->dtype == kTfString && takes_examples(sig)) {
        TfValue v;
        v.kind = TfValue::Kind::Examples;
        args.push_back(std::move(v));
        continue;
      }
      if (si->dtype != kTfFloat) throw Error(label + ": signature input '" + si->key + "' has dtype " + tf_dtype_name(si->dtype) + " (only float32 is supported)");
      if (si->unknown_rank) throw Error(label + ": signature input '" + si->key + "' has unknown rank");
      args.push_back(lowering.add_input(si->key, si->shape));
    } else if (in.op() == "VarHandleOp") {
      if (resource_arg >= bound.size()) throw Error(label + ": function '" + fn + "' captures variable '" + node + "' that the object graph does not bind");
      const int id = bound[resource_arg++];
      const auto& objects = c.mg.object_graph_def().nodes();
      if (id < 0 || id >= objects.size() || objects.Get(id).kind_case() != tensorflow::SavedObject::kVariable) {
        throw Error(label + ": captured object " + std::to_string(id) + " of '" + fn + "' is not a variable");
      }
      const auto& var = objects.Get(id).variable();
      TfValue v;
      v.kind = TfValue::Kind::Resource;
      v.tensor = c.read_variable(checkpoint_key(c.tog, id, label), var.dtype(), tf_shape_of(var.shape()));
      if (v.tensor.dtype != kTfFloat) throw Error(label + ": variable '" + var.name() + "' has dtype " + tf_dtype_name(v.tensor.dtype) + " (only float32 is supported)");
      args.push_back(std::move(v));
    } else {
      throw Error(label + ": call '" + call.name() + "' input '" + node + "' is a " + in.op() + " (expected a Placeholder or VarHandleOp)");
    }
  }
  return args;
}

// Lowers signature `sig` to a Graph. For an example signature (`ex` set) the Graph's inputs are
// the dense features its ParseExampleV2 decodes (recorded in ex->features), and a string output
// that folds to a constant (class labels tiled over the batch) goes to ex->constant_outputs
// instead of the Graph.
Graph lower_signature(const ImportContext& c, const SavedModelSignature& sig, SavedModelExampleSignature* ex) {
  const std::string& label = c.label;
  for (const auto* list : {&sig.inputs, &sig.outputs}) {
    for (const SavedModelTensorInfo& t : *list) {
      if (t.sparse) throw Error(label + ": signature '" + sig.key + "' tensor '" + t.key + "' is sparse (not supported)");
    }
  }
  const SignatureCall sc = find_call(sig, c.nodes, label);
  const std::string fn = attr_func(*sc.call, "f");
  TfLowering lowering(c.mg.graph_def(), label);
  const std::vector<TfValue> args = call_arguments(c, sig, *sc.call, fn, ex != nullptr, lowering);
  if (!ex && lowering.graph().inputs.size() != sig.inputs.size()) throw Error(label + ": signature '" + sig.key + "' has inputs its function does not take");
  TfFrame& frame = lowering.call(fn, args, 0);
  Graph& g = lowering.graph();
  // Outputs in the order the function returns them (Keras' output order; keys sort as strings,
  // so output_10 would come before output_2).
  std::vector<size_t> order(sig.outputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sc.output_index[a] < sc.output_index[b]; });
  for (size_t i : order) {
    const std::string where = label + ": signature '" + sig.key + "' output '" + sig.outputs[i].key + "'";
    if (sc.output_index[i] >= lowering.result_count(frame)) throw Error(where + ": tensor '" + sig.outputs[i].tensor_name + "' does not exist");
    if (ex && sig.outputs[i].dtype == kTfString) {  // class labels: a constant, or refused alone
      try {
        const TfValue v = lowering.result(frame, sc.output_index[i], 0);
        if (v.kind != TfValue::Kind::Const || v.tensor.dtype != kTfString) throw Error(where + " is computed per example (only constant labels are supported)");
        ex->constant_outputs.push_back({sig.outputs[i].key, v.tensor.shape, v.tensor.strings});
      } catch (const Error& e) {
        ex->refused_outputs.emplace_back(sig.outputs[i].key, e.what());
      }
      continue;
    }
    const TfValue v = lowering.result(frame, sc.output_index[i], 0);
    g.outputs.push_back(lowering.materialize(v, where));
    g.output_names.push_back(sig.outputs[i].key);
  }
  if (ex) {
    if (lowering.dense_features().empty()) throw Error(label + ": signature '" + sig.key + "' does not parse its tf.Examples with ParseExampleV2");
    for (const TfDenseFeature& f : lowering.dense_features()) {
      ex->features.push_back({f.key, f.shape, f.has_default, std::vector<float>(f.default_value.begin(), f.default_value.end())});
    }
  }
  g.name = fn;
  prune_unused(g);
  // The attention chains were lowered op by op; the engine runs them as MultiHeadAttention nodes.
  fuse_attention(g);
  return std::move(g);
}

const SavedModelSignature& pick_signature(const std::vector<SavedModelSignature>& sigs, const SavedModelOptions& options, const std::string& label) {
  const std::string key = options.signature.empty() ? "serving_default" : options.signature;
  auto it = std::find_if(sigs.begin(), sigs.end(), [&](const auto& s) { return s.key == key; });
  if (it == sigs.end() && options.signature.empty() && sigs.size() == 1) it = sigs.begin();
  if (it == sigs.end()) {
    std::string names;
    for (const auto& s : sigs) names += (names.empty() ? "" : ", ") + s.key;
    throw Error(label + ": no signature '" + key + "' (signatures: " + (names.empty() ? "none" : names) + ")");
  }
  return *it;
}

SavedModel import_on_this_stack(const std::string& pb_bytes, const std::string& object_graph_bytes, const VariableReader& read_variable,
                                const std::string& label, const SavedModelOptions& options) {
  tensorflow::SavedModel sm;
  if (!sm.ParseFromString(pb_bytes)) throw Error(label + ": not a valid SavedModel protobuf (truncated or corrupt)");
  if (sm.meta_graphs_size() == 0) throw Error(label + ": the SavedModel holds no MetaGraph");
  const tensorflow::MetaGraphDef& mg = pick_meta_graph(sm, options.tag, label);
  SavedModel out;
  out.info.tags.assign(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
  out.info.tensorflow_version = mg.meta_info_def().tensorflow_version();
  out.info.signatures = signatures_of(mg);
  const SavedModelSignature& sig = pick_signature(out.info.signatures, options, label);
  out.info.signature_key = sig.key;
  ImportContext c{mg, top_nodes(mg.graph_def()), {}, read_variable, label};
  if (!object_graph_bytes.empty() && !c.tog.ParseFromString(object_graph_bytes)) throw Error(label + ": malformed checkpoint object graph");
  out.graph = lower_signature(c, sig, nullptr);
  if (!options.example_signatures) return out;
  for (const SavedModelSignature& other : out.info.signatures) {
    if (other.key == sig.key || !takes_examples(other)) continue;
    SavedModelExampleSignature ex;
    ex.key = other.key;
    try {
      ex.graph = lower_signature(c, other, &ex);
    } catch (const std::exception& e) {  // this signature is not served; the model still is
      ex = SavedModelExampleSignature{};
      ex.key = other.key;
      ex.error = e.what();
    }
    out.example_signatures.push_back(std::move(ex));
  }
  return out;
}

}  // namespace

SavedModel import_saved_model(const std::string& pb_bytes, const std::string& object_graph_bytes, const VariableReader& read_variable,
                              const std::string& label, const SavedModelOptions& options) {
  SavedModel out;
  run_on_deep_stack([&] {
    try {
      out = import_on_this_stack(pb_bytes, object_graph_bytes, read_variable, label, options);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {  // e.g. an out-of-range operand of a malformed graph
      throw Error(label + ": malformed SavedModel graph (" + e.what() + ")");
    }
  });
  return out;
}

namespace {

std::string read_file(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  if (ok) s << in.rdbuf();
  return std::move(s).str();
}

// Validates a lowered Graph now, so a lowering mistake is reported with the file; a
// variable-length axis is checked at one length (the engine resolves it per plan). A Graph with
// only fixed shapes gets the inferred shapes.
void validate_lowered(Graph& g, const std::string& pb) {
  Graph probe = g;
  for (int idx : probe.inputs) {
    for (int& d : probe.nodes[static_cast<size_t>(idx)].shape) d = d < 1 ? 3 : d;
  }
  try {
    infer_shapes(probe);
  } catch (const Error& e) {
    throw Error(pb + ": the lowered graph is inconsistent: " + e.what());
  }
  if (probe.nodes.size() == g.nodes.size() && std::all_of(g.inputs.begin(), g.inputs.end(), [&](int i) {
        const Shape& s = g.nodes[static_cast<size_t>(i)].shape;
        return std::all_of(s.begin(), s.end(), [](int d) { return d >= 1; });
      })) {
    g = std::move(probe);
  }
}

}  // namespace


SavedModel load_saved_model(const std::string& dir, const SavedModelOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": not a directory");
  const fs::path pb = fs::path(dir) / "saved_model.pb";
  if (!fs::exists(pb, ec)) {
    if (fs::exists(fs::path(dir) / "saved_model.pbtxt", ec)) throw Error((fs::path(dir) / "saved_model.pbtxt").string() + ": text-format SavedModels are not supported (save with the binary saved_model.pb)");
    throw Error(not_a_saved_model_message(dir));
  }
  bool ok = false;
  const std::string bytes = read_file(pb, ok);
  if (!ok) throw Error(pb.string() + ": cannot read file");
  const std::string prefix = (fs::path(dir) / "variables" / "variables").string();
  std::unique_ptr<TensorBundle> bundle;
  std::string object_graph;
  auto open_bundle = [&]() -> const TensorBundle& {
    if (!bundle) {
      bundle = std::make_unique<TensorBundle>(TensorBundle::open(prefix));
      if (bundle->has(kObjectGraphKey)) object_graph = bundle->read_string(kObjectGraphKey);
    }
    return *bundle;
  };
  if (fs::exists(prefix + ".index", ec)) open_bundle();
  const VariableReader reader = [&](const std::string& key, int, const std::vector<int64_t>& shape) {
    TfTensor t = open_bundle().read(key);
    if (!shape.empty() && t.shape != shape) {
      throw Error(prefix + ".index: entry '" + key + "' has shape " + tf_shape_str(t.shape) + ", the object graph says " + tf_shape_str(shape));
    }
    return t;
  };
  SavedModel m = import_saved_model(bytes, object_graph, reader, pb.string(), options);
  m.info.directory = dir;
  validate_lowered(m.graph, pb.string());
  for (SavedModelExampleSignature& ex : m.example_signatures) {
    if (!ex.error.empty()) continue;
    try {
      validate_lowered(ex.graph, pb.string());
    } catch (const Error& e) {
      ex.error = e.what();
    }
  }
  return m;
}

}  // namespace tickinfer::formats
