// Lowering of a classify / regress signature's example parsing (see tf_lowering.hpp): the
// ParseExampleV2 (or ParseExample) node that tf.io.parse_example puts between the signature's
// serialized tf.Examples and the model. Its dense outputs become Graph inputs, one per dense key,
// and the keys, shapes and defaults are recorded so the server can decode Examples into them
// (serving/example_decoder.hpp). Sparse and ragged features are refused by name: they would
// need a variable-size input the engine does not have.
//
// Also the few ops a classify signature applies to string constants: the class labels are a
// constant tiled or broadcast over the batch, which folds here to a [1, classes] string
// constant the SavedModel importer takes as the labels.
#include <algorithm>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

const TfTensor& string_const(const TfValue& v, const std::string& what, const std::string& where) {
  if (v.kind != TfValue::Kind::Const || v.tensor.dtype != kTfString) throw Error(where + ": " + what + " is not a string constant");
  return v.tensor;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

// The keys of one feature group: V2 takes one string vector, V1 one scalar input per key.
std::vector<std::string> keys_of(const std::vector<TfValue>& in, size_t first, size_t count, const std::string& what,
                                 const std::string& where) {
  std::vector<std::string> keys;
  for (size_t i = first; i < first + count; ++i) {
    if (i >= in.size()) throw Error(where + ": missing " + what + " input");
    const TfTensor& t = string_const(in[i], what, where);
    keys.insert(keys.end(), t.strings.begin(), t.strings.end());
  }
  return keys;
}

std::vector<int64_t> numeric_operand(const TfValue& v, const std::string& what, const std::string& where) {
  if (v.kind != TfValue::Kind::Const || v.tensor.dtype == kTfString) throw Error(where + ": " + what + " is not a constant");
  std::vector<int64_t> out;
  for (double d : v.tensor.values) out.push_back(tf_to_int(d));
  return out;
}

// Row-major strides of `shape`.
std::vector<int64_t> strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// out[index] = in[source(index)] over out_shape, where each output coordinate maps to an input
// coordinate by `map_coord` (tile: modulo, broadcast: 0 on size-1 axes).
template <class Map>
TfTensor gather_strings(const TfTensor& in, const std::vector<int64_t>& out_shape, Map map_coord, const std::string& where) {
  const int64_t count = tf_element_count(out_shape);
  if (count < 0) throw Error(where + ": string result of shape " + tf_shape_str(out_shape) + " is too large");
  TfTensor out;
  out.dtype = kTfString;
  out.shape = out_shape;
  const auto os = strides(out_shape), is = strides(in.shape);
  for (int64_t k = 0; k < count; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < out_shape.size(); ++d) src += map_coord(d, (k / os[d]) % out_shape[d]) * is[d];
    out.strings.push_back(in.strings[static_cast<size_t>(src)]);
  }
  return out;
}

}  // namespace

std::vector<TfValue> TfLowering::lower_parse_example(Op& op) {
  const bool v2 = op.def.op() == "ParseExampleV2";
  if (op.in.empty() || op.in[0].kind != TfValue::Kind::Examples) {
    throw Error(op.where + ": parses something other than the signature's serialized tf.Examples (not supported)");
  }
  if (!dense_features_.empty()) throw Error(op.where + ": a second example parser in one signature (not supported)");
  const int64_t num_sparse = attr_int(op.def, v2 ? "num_sparse" : "Nsparse", 0);
  const auto* tdense = find_attr(op.def, "Tdense");
  const auto* shapes = find_attr(op.def, "dense_shapes");
  const size_t ndense = tdense ? static_cast<size_t>(tdense->list().type_size()) : 0;
  if (num_sparse < 0 || num_sparse > 4096) throw Error(op.where + ": bad sparse feature count");
  // Inputs: serialized, names, then the keys (V2: sparse, dense, ragged vectors; V1: one scalar
  // per sparse key, then one per dense key), then one default per dense key.
  const size_t ns = static_cast<size_t>(num_sparse);
  const std::vector<std::string> sparse = v2 ? keys_of(op.in, 2, 1, "sparse_keys", op.where) : keys_of(op.in, 2, ns, "sparse_keys", op.where);
  const std::vector<std::string> dense = v2 ? keys_of(op.in, 3, 1, "dense_keys", op.where) : keys_of(op.in, 2 + ns, ndense, "dense_keys", op.where);
  if (!sparse.empty()) {
    throw Error(op.where + ": sparse feature(s) " + quoted_list(sparse) +
                " (tf.io.VarLenFeature / SparseFeature) are not supported: only fixed-length float features "
                "(tf.io.FixedLenFeature) can be decoded into the model's inputs");
  }
  if (v2) {
    const std::vector<std::string> ragged = keys_of(op.in, 4, 1, "ragged_keys", op.where);
    if (!ragged.empty()) throw Error(op.where + ": ragged feature(s) " + quoted_list(ragged) + " (tf.io.RaggedFeature) are not supported");
  }
  if (dense.empty()) throw Error(op.where + ": parses no dense features");
  if (dense.size() != ndense || !shapes || static_cast<size_t>(shapes->list().shape_size()) != ndense) {
    throw Error(op.where + ": dense_keys, Tdense and dense_shapes disagree");
  }
  const size_t first_default = v2 ? 5 : 2 + ns + ndense;
  if (op.in.size() != first_default + ndense) throw Error(op.where + ": expects " + std::to_string(ndense) + " dense defaults");
  std::vector<TfValue> out;
  for (size_t d = 0; d < ndense; ++d) {
    const std::string where = op.where + ": dense feature '" + dense[d] + "'";
    if (static_cast<int>(tdense->list().type(static_cast<int>(d))) != kTfFloat) {
      throw Error(where + " has dtype " + tf_dtype_name(tdense->list().type(static_cast<int>(d))) + " (only float32 features are supported)");
    }
    TfDenseFeature f;
    f.key = dense[d];
    f.shape = tf_shape_of(shapes->list().shape(static_cast<int>(d)));
    const int64_t n = tf_element_count(f.shape);
    if (f.shape.empty()) {
      throw Error(where + " is a scalar (FixedLenFeature([])): only features of at least one dimension are supported "
                  "(FixedLenFeature([1]) reads the same Examples)");
    }
    if (n <= 0) throw Error(where + " has shape " + tf_shape_str(f.shape) + " (a known, non-empty shape is required)");
    const TfValue& def = op.in[first_default + d];
    if (def.kind != TfValue::Kind::Const || def.tensor.dtype == kTfString) throw Error(where + ": its default is not a constant");
    const auto count = static_cast<int64_t>(def.tensor.values.size());
    if (count != 0 && count != 1 && count != n) {
      throw Error(where + ": default of " + std::to_string(count) + " values for shape " + tf_shape_str(f.shape));
    }
    f.has_default = count != 0;
    if (f.has_default) f.default_value.assign(static_cast<size_t>(n), def.tensor.values[0]);
    if (count == n) f.default_value = def.tensor.values;
    std::vector<int64_t> tf_shape{-1};
    tf_shape.insert(tf_shape.end(), f.shape.begin(), f.shape.end());
    TfValue v = add_input(f.key, tf_shape);
    graph_.nodes[static_cast<size_t>(v.node)].origin = op.def.op() + " dense key '" + f.key + "'";
    dense_features_.push_back(std::move(f));
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<TfValue> TfLowering::lower_string_op(Op& op) {
  const std::string& t = op.def.op();
  const bool examples = std::any_of(op.in.begin(), op.in.end(), [](const TfValue& v) { return v.kind == TfValue::Kind::Examples; });
  if (t == "Identity" || t == "Snapshot" || t == "StopGradient") {
    if (op.in.size() != 1) throw Error(op.where + ": expects one input");
    return {op.in[0]};
  }
  if (examples) {
    if (t == "Reshape" && op.in.size() == 2 && numeric_operand(op.in[1], "shape", op.where) == std::vector<int64_t>{-1}) return {op.in[0]};
    throw Error(op.where + ": the serialized tf.Examples are read by " + t + "; only ParseExampleV2 may read them (not supported)");
  }
  const TfTensor& s = string_const(op.in[0], "input 0", op.where);
  TfValue r;
  if (t == "ExpandDims" || t == "Reshape" || t == "Squeeze") {
    r.tensor = s;
    std::vector<int64_t> shape;
    if (t == "Squeeze") {
      for (int64_t d : s.shape) if (d != 1) shape.push_back(d);
    } else if (t == "ExpandDims") {
      const auto axis = numeric_operand(op.in.at(1), "axis", op.where).at(0);
      shape = s.shape;
      const auto rank = static_cast<int64_t>(shape.size());
      if (axis < -rank - 1 || axis > rank) throw Error(op.where + ": axis out of range");
      shape.insert(shape.begin() + (axis < 0 ? axis + rank + 1 : axis), 1);
    } else {
      shape = numeric_operand(op.in.at(1), "shape", op.where);
      int64_t known = 1;  // the product of the given dimensions; one -1 takes the rest
      for (int64_t d : shape) known *= d == -1 ? 1 : d;
      for (int64_t& d : shape) if (d == -1) d = known > 0 ? s.size() / known : 0;
    }
    if (tf_element_count(shape) != s.size()) throw Error(op.where + ": cannot reshape " + tf_shape_str(s.shape) + " to " + tf_shape_str(shape));
    r.tensor.shape = shape;
    return {r};
  }
  if (t == "Tile") {
    const auto mult = numeric_operand(op.in.at(1), "multiples", op.where);
    if (mult.size() != s.shape.size()) throw Error(op.where + ": multiples do not match the rank");
    std::vector<int64_t> shape = s.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (mult[d] < 0) throw Error(op.where + ": negative multiple");
      shape[d] *= mult[d];
    }
    r.tensor = gather_strings(s, shape, [&](size_t d, int64_t c) { return c % s.shape[d]; }, op.where);
    return {r};
  }
  if (t == "BroadcastTo") {
    const auto shape = numeric_operand(op.in.at(1), "shape", op.where);
    if (shape.size() < s.shape.size()) throw Error(op.where + ": cannot broadcast " + tf_shape_str(s.shape) + " to " + tf_shape_str(shape));
    TfTensor in = s;  // left-padded with 1s to the target rank
    in.shape.insert(in.shape.begin(), shape.size() - s.shape.size(), 1);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (in.shape[d] != 1 && in.shape[d] != shape[d]) throw Error(op.where + ": cannot broadcast " + tf_shape_str(s.shape) + " to " + tf_shape_str(shape));
    }
    r.tensor = gather_strings(in, shape, [&](size_t d, int64_t c) { return in.shape[d] == 1 ? 0 : c; }, op.where);
    return {r};
  }
  throw Error(op.where + ": op " + t + " on a string tensor is not supported (string constants are read only as "
              "example keys and as class labels tiled or broadcast over the batch)");
}

}  // namespace tickinfer::formats
