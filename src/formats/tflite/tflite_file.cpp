// TFLite flatbuffer -> tfl::Program. The flatbuffers verifier makes every offset safe to
// follow; everything it cannot know (indices between tables, data sizes against shapes, what the
// interpreter supports) is checked here before anything is copied.
#include "formats/tflite/tflite_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

#include "formats/tflite/tflite_builtin_names.hpp"
#include "formats/tflite/tflite_ops.hpp"
#include "formats/tflite/tflite_sparsity.hpp"
#include "tflite_generated.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr uint32_t kSchemaVersion = 3;
// Sanity limits for hostile files: a tensor above 2 GiB or rank above 16 is not a trading model.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 31;
constexpr size_t kMaxRank = 16;
// Builtin codes with their own refusal message.
constexpr int kCustom = 32, kIf = 118, kDensify = 124;
// A file with more subgraphs or tensors than this is hostile, not a trading model.
constexpr uint32_t kMaxSubgraphs = 4096;
constexpr uint64_t kMaxTensors = uint64_t{1} << 24;

class Loader {
 public:
  Loader(const tflite::Model& model, const std::string& label) : model_(model), label_(label) {}

  tfl::Program run() {
    if (model_.version() != kSchemaVersion) {
      fail("schema version " + std::to_string(model_.version()) + " is not the supported version 3");
    }
    const auto* subgraphs = model_.subgraphs();
    if (!subgraphs || subgraphs->size() == 0) fail("the model has no subgraph");
    if (subgraphs->size() > kMaxSubgraphs) fail(std::to_string(subgraphs->size()) + " subgraphs is too many");
    tfl::Program p;
    p.source_format = "tflite";
    if (model_.description()) p.name = model_.description()->str();
    for (uint32_t k = 0; k < subgraphs->size(); ++k) {
      const tflite::SubGraph* g = subgraphs->Get(k);
      if (!g->tensors()) fail(where_subgraph(k) + "has no tensors");
      subgraph_ = k;
      offset_ = static_cast<uint32_t>(p.tensors.size());
      ntensors_ = g->tensors()->size();
      if (uint64_t{offset_} + ntensors_ > kMaxTensors) fail("the model has too many tensors");
      for (uint32_t t = 0; t < ntensors_; ++t) p.tensors.push_back(read_tensor(*g->tensors()->Get(t), t));
      std::vector<tfl::Op> ops;
      if (g->operators()) {
        ops.reserve(g->operators()->size());
        for (uint32_t i = 0; i < g->operators()->size(); ++i) {
          const tflite::Operator& o = *g->operators()->Get(i);
          if (is_densify(o)) {
            fold_densify(o, i, p);
          } else {
            ops.push_back(read_op(o, i, p));
          }
        }
      }
      std::vector<int> ins = indices(g->inputs(), "subgraph input"), outs = indices(g->outputs(), "subgraph output");
      if (k == 0) {
        p.ops = std::move(ops);
        p.inputs = std::move(ins);
        p.outputs = std::move(outs);
      } else {
        tfl::Subgraph sg;
        if (g->name()) sg.name = g->name()->str();
        sg.ops = std::move(ops);
        sg.inputs = std::move(ins);
        sg.outputs = std::move(outs);
        p.subgraphs.push_back(std::move(sg));
      }
    }
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(label_ + ": " + what); }

  // "" for the main graph, else "subgraph 2 " (errors name a tensor or op of subgraph k > 0 so).
  std::string where_subgraph(uint32_t k) const { return k == 0 ? std::string() : "subgraph " + std::to_string(k) + " "; }

  std::string tensor_where(const tflite::Tensor& x, uint32_t t) const {
    return where_subgraph(subgraph_) + "tensor " + std::to_string(t) + " '" + (x.name() ? x.name()->str() : std::string()) + "'";
  }

  std::vector<int> indices(const flatbuffers::Vector<int32_t>* v, const std::string& what) const {
    std::vector<int> out;
    if (!v) return out;
    for (uint32_t k = 0; k < v->size(); ++k) {
      const int32_t t = v->Get(k);
      if (t < 0 || static_cast<uint32_t>(t) >= ntensors_) {
        fail(where_subgraph(subgraph_) + what + " " + std::to_string(k) + " refers to tensor " + std::to_string(t) +
             ", but subgraph " + std::to_string(subgraph_) + " has " + std::to_string(ntensors_) + " tensors");
      }
      out.push_back(static_cast<int>(offset_ + static_cast<uint32_t>(t)));
    }
    return out;
  }

  tfl::DType read_type(int8_t type, const std::string& where) const {
    switch (type) {
      case 0: case 1: case 2: case 3: case 4: case 6: case 7: case 9: case 13: case 18:
        return static_cast<tfl::DType>(type);
      default: break;
    }
    static const char* const kNames[] = {"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING",
                                         "BOOL", "INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128",
                                         "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4",
                                         "BFLOAT16", "INT2", "UINT4", "FLOAT8_E4M3FN", "FLOAT8_E5M2"};
    const bool known = type >= 0 && static_cast<size_t>(type) < std::size(kNames);
    fail(where + ": type " + (known ? std::string(kNames[type]) : std::to_string(type)) + " is not supported");
  }

  tfl::Tensor read_tensor(const tflite::Tensor& x, uint32_t t) const {
    const std::string where = tensor_where(x, t);
    tfl::Tensor out;
    if (x.name()) out.name = x.name()->str();
    out.type = read_type(x.type(), where);
    out.is_variable = x.is_variable();
    if (x.external_buffer() != 0) fail(where + ": data in an external buffer is not supported");

    // Shape: fixed, non-negative, bounded. (-1 may appear in shape_signature, never in shape.)
    uint64_t elements = 1;
    const size_t esize = tfl::dtype_size(out.type);
    if (x.shape()) {
      if (x.shape()->size() > kMaxRank) fail(where + ": rank " + std::to_string(x.shape()->size()) + " is too large");
      for (int32_t d : *x.shape()) {
        if (d < 0) fail(where + ": dimension " + std::to_string(d) + " is negative (dynamic shapes are not supported)");
        out.shape.push_back(d);
        if (d != 0 && elements > kMaxTensorBytes / esize / static_cast<uint64_t>(d)) {
          fail(where + ": shape is too large (over 2 GiB)");
        }
        elements *= static_cast<uint64_t>(d);
      }
    }

    // Data.
    const auto* buffers = model_.buffers();
    const uint32_t nbuffers = buffers ? buffers->size() : 0;
    if (x.buffer() != 0) {
      if (x.buffer() >= nbuffers) {
        fail(where + ": buffer index " + std::to_string(x.buffer()) + " is out of range (the model has " +
             std::to_string(nbuffers) + " buffers)");
      }
      const tflite::Buffer* b = buffers->Get(x.buffer());
      if (b->offset() > 1) fail(where + ": data stored outside the flatbuffer (models over 2 GB) is not supported");
      if (x.sparsity()) {
        // An all-zero sparse constant stores no values at all: an empty buffer whose metadata lists
        // no leaves is the valid encoding of zeros (the decoder checks the count either way).
        const std::string at = label_ + ": " + where;  // densify's errors carry the file name too
        const uint8_t* values = b->data() ? b->data()->data() : nullptr;
        const size_t bytes = b->data() ? b->data()->size() : 0;
        out.data = densify(read_sparsity(*x.sparsity(), at), out.shape, esize, values, bytes, at);
        out.sparse_in_file = true;
      } else if (b->data() && b->data()->size() != 0) {
        if (b->data()->size() != elements * esize) {
          fail(where + ": buffer " + std::to_string(x.buffer()) + " holds " + std::to_string(b->data()->size()) +
               " bytes but shape and type need " + std::to_string(elements * esize));
        }
        out.data.assign(b->data()->begin(), b->data()->end());
      }
    }

    if (x.sparsity() && out.data.empty()) fail(where + ": sparsity: a sparse tensor without constant data");

    // Quantization: per-tensor or per-axis affine only.
    if (const auto* q = x.quantization()) {
      if (q->details_type() != tflite::QuantizationDetails::NONE) {
        fail(where + ": custom, blockwise or multi-axis quantization is not supported");
      }
      const size_t nscale = q->scale() ? q->scale()->size() : 0;
      const size_t nzp = q->zero_point() ? q->zero_point()->size() : 0;
      if (nscale != nzp) {
        fail(where + ": quantization has " + std::to_string(nscale) + " scales but " + std::to_string(nzp) + " zero points");
      }
      if (nscale > 0) {
        for (float s : *q->scale()) {
          if (!std::isfinite(s) || s < 0) fail(where + ": quantization scale " + std::to_string(s) + " is negative or not finite");
          out.quant.scale.push_back(s);
        }
        // The verifier checks a vector's length field for 4-byte alignment only, so the int64
        // elements of a valid file may sit at 4 mod 8: copy them out byte-wise rather than
        // through flatbuffers' typed accessors (a misaligned 8-byte load).
        const uint8_t* zp_bytes = q->zero_point()->Data();
        out.quant.zero_point.resize(nzp);
        for (size_t i = 0; i < nzp; ++i) {
          int64_t v;
          std::memcpy(&v, zp_bytes + i * sizeof(int64_t), sizeof v);
          out.quant.zero_point[i] = flatbuffers::EndianScalar(v);
        }
        out.quant.axis = q->quantized_dimension();
        if (nscale > 1) {
          const int axis = out.quant.axis;
          if (axis < 0 || static_cast<size_t>(axis) >= out.shape.size() ||
              static_cast<size_t>(out.shape[static_cast<size_t>(axis)]) != nscale) {
            fail(where + ": " + std::to_string(nscale) + " per-axis scales do not match quantized dimension " +
                 std::to_string(axis) + " of its shape");
          }
        }
      }
    }
    return out;
  }

  // The op's builtin code: max(deprecated_builtin_code, builtin_code), since old files fill only
  // the byte and codes above 127 fill only the int.
  int builtin_code(const tflite::OperatorCode& c) const {
    return std::max(static_cast<int>(c.deprecated_builtin_code()), static_cast<int>(c.builtin_code()));
  }

  tfl::Op read_op(const tflite::Operator& o, uint32_t i, const tfl::Program& p) const {
    const std::string op_where = where_subgraph(subgraph_) + "op " + std::to_string(i);
    const auto* codes = model_.operator_codes();
    const uint32_t ncodes = codes ? codes->size() : 0;
    if (o.opcode_index() >= ncodes) {
      fail(op_where + ": opcode_index " + std::to_string(o.opcode_index()) + " is out of range (the model has " +
           std::to_string(ncodes) + " operator codes)");
    }
    const tflite::OperatorCode& oc = *codes->Get(o.opcode_index());
    const int builtin = builtin_code(oc);
    const std::string name = tflite_builtin_label(builtin);
    if (builtin == kCustom || oc.custom_code()) {
      fail(op_where + ": custom op '" + (oc.custom_code() ? oc.custom_code()->str() : std::string()) +
           "' is not supported");
    }
    if (builtin == kIf) fail(op_where + ": IF (conditional control flow) is not supported");
    const auto code = tflite_op_code(builtin);
    if (!code) fail(op_where + ": " + name + " is not supported");

    tfl::Op op;
    op.code = *code;
    op.inputs = op_indices(o.inputs(), op_where + " (" + name + ") input", true);
    op.outputs = op_indices(o.outputs(), op_where + " (" + name + ") output", false);
    op.intermediates = op_indices(o.intermediates(), op_where + " (" + name + ") intermediate", false);
    if (!op.outputs.empty()) op.label = p.tensors[static_cast<size_t>(op.outputs[0])].name;
    op.options = read_tflite_options(o, op.code, label_ + ": " + op_where + " (" + name + " '" + op.label + "')");
    check_subgraph_index(op, op_where + " (" + name + ")");
    op.precision = precision(op, p);
    return op;
  }

  bool is_densify(const tflite::Operator& o) const {
    const auto* codes = model_.operator_codes();
    if (!codes || o.opcode_index() >= codes->size()) return false;  // read_op names the bad index
    return builtin_code(*codes->Get(o.opcode_index())) == kDensify && !codes->Get(o.opcode_index())->custom_code();
  }

  // DENSIFY of a constant (sparse weights the converter left for the interpreter to expand) is
  // done here: its output becomes that constant, and the op is dropped. A DENSIFY of a computed
  // tensor has no use in a converted model and is refused.
  void fold_densify(const tflite::Operator& o, uint32_t i, tfl::Program& p) const {
    const std::string where = where_subgraph(subgraph_) + "op " + std::to_string(i) + " (DENSIFY)";
    const std::vector<int> in = op_indices(o.inputs(), where + " input", false);
    const std::vector<int> out = op_indices(o.outputs(), where + " output", false);
    if (in.size() != 1 || out.size() != 1) fail(where + ": expects one input and one output");
    const tfl::Tensor& src = p.tensors[static_cast<size_t>(in[0])];
    tfl::Tensor& dst = p.tensors[static_cast<size_t>(out[0])];
    if (!src.is_constant()) fail(where + ": densifies a computed tensor (only constant sparse weights are supported)");
    if (dst.is_constant() || dst.is_variable) fail(where + ": output tensor '" + dst.name + "' already holds data");
    if (src.type != dst.type || src.shape != dst.shape) {
      fail(where + ": output tensor '" + dst.name + "' differs in type or shape from its input '" + src.name + "'");
    }
    dst.data = src.data;
    if (dst.quant.empty()) dst.quant = src.quant;
  }

  std::vector<int> op_indices(const flatbuffers::Vector<int32_t>* v, const std::string& what, bool allow_missing) const {
    std::vector<int> out;
    if (!v) return out;
    for (uint32_t k = 0; k < v->size(); ++k) {
      const int32_t t = v->Get(k);
      const bool ok = (t == -1 && allow_missing) || (t >= 0 && static_cast<uint32_t>(t) < ntensors_);
      if (!ok) {
        fail(what + " " + std::to_string(k) + " refers to tensor " + std::to_string(t) + ", but subgraph " +
             std::to_string(subgraph_) + " has " + std::to_string(ntensors_) + " tensors");
      }
      out.push_back(t < 0 ? t : static_cast<int>(offset_ + static_cast<uint32_t>(t)));
    }
    return out;
  }

  // The precision the file's tensor types imply: int8 (or int16) activations = Int8; float
  // activations with int8 weights = dynamic-range; bf16 weights = BF16.
  static tfl::Precision precision(const tfl::Op& op, const tfl::Program& p) {
    bool float_in = false, int_weights = false, bf16_weights = false, quant_act = false;
    for (int t : op.inputs) {
      if (t < 0) continue;
      const tfl::Tensor& x = p.tensors[static_cast<size_t>(t)];
      if (x.is_constant()) {
        int_weights |= x.type == tfl::DType::I8;
        bf16_weights |= x.type == tfl::DType::BF16;
      } else {
        float_in |= x.type == tfl::DType::F32;
        quant_act |= (x.type == tfl::DType::I8 || x.type == tfl::DType::I16) && !x.quant.empty();
      }
    }
    for (int t : op.outputs) {  // QUANTIZE: float in, int8 out
      const tfl::Tensor& y = p.tensors[static_cast<size_t>(t)];
      quant_act |= (y.type == tfl::DType::I8 || y.type == tfl::DType::I16) && !y.quant.empty();
    }
    if (quant_act) return tfl::Precision::Int8;
    if (float_in && int_weights) return tfl::Precision::Int8Dynamic;
    if (bf16_weights) return tfl::Precision::BF16;
    return tfl::Precision::F32;
  }

  // WHILE / CALL_ONCE name subgraphs of this file other than the main one.
  void check_subgraph_index(const tfl::Op& op, const std::string& where) const {
    const uint32_t n = model_.subgraphs()->size();
    auto check = [&](int k, const char* field) {
      if (k < 1 || static_cast<uint32_t>(k) >= n) {
        fail(where + ": " + field + " " + std::to_string(k) + " is not a subgraph other than the main one (the model has " +
             std::to_string(n) + ")");
      }
    };
    if (op.code == tfl::OpCode::While) {
      check(op.options.cond_subgraph, "cond_subgraph_index");
      check(op.options.body_subgraph, "body_subgraph_index");
    } else if (op.code == tfl::OpCode::CallOnce) {
      check(op.options.body_subgraph, "init_subgraph_index");
    }
  }

  const tflite::Model& model_;
  const std::string& label_;
  uint32_t subgraph_ = 0;  // the subgraph being read
  uint32_t offset_ = 0;    // index in Program::tensors of its tensor 0
  uint32_t ntensors_ = 0;  // its tensor count
};

tfl::Program load_aligned(const uint8_t* bytes, size_t size, const std::string& label) {
  // Depth 64 covers the schema's nesting (Model/SubGraph/Tensor/QuantizationParameters); the
  // table cap bounds verification time on hostile files.
  flatbuffers::Verifier verifier(bytes, size, /*max_depth=*/64, /*max_tables=*/1000000);
  if (!tflite::VerifyModelBuffer(verifier)) {
    throw Error(label + ": not a valid TFLite flatbuffer (the flatbuffers verifier rejected it)");
  }
  const tflite::Model* model = tflite::GetModel(bytes);
  const auto* buffers = model->buffers();
  if (buffers && buffers->size() > 0 && buffers->Get(0)->data() && buffers->Get(0)->data()->size() != 0) {
    throw Error(label + ": not a valid TFLite flatbuffer (buffer 0 must be the empty sentinel)");
  }
  tfl::Program p = Loader(*model, label).run();
  try {
    tfl::validate(p);
  } catch (const Error& e) {
    throw Error(label + ": " + e.what());
  }
  return p;
}

}  // namespace

bool is_tflite(const void* data, size_t size) {
  return data && size >= 8 && std::memcmp(static_cast<const uint8_t*>(data) + 4, "TFL3", 4) == 0;
}

tfl::Program load_tflite(const void* data, size_t size, const std::string& label) {
  if (!data || size < 8) throw Error(label + ": not a valid TFLite flatbuffer (" + std::to_string(size) + " bytes)");
  if (!is_tflite(data, size)) throw Error(label + ": not a valid TFLite flatbuffer (no TFL3 identifier at bytes 4..7)");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) throw Error(label + ": not a valid TFLite flatbuffer (over 2 GiB)");
  // flatbuffers reads scalars in place; keep them aligned (vectors are 16-aligned in the file).
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    struct alignas(16) Block {
      uint8_t bytes[16];
    };
    std::vector<Block> copy((size + 15) / 16);
    std::memcpy(copy.data(), data, size);
    return load_aligned(reinterpret_cast<const uint8_t*>(copy.data()), size, label);
  }
  return load_aligned(static_cast<const uint8_t*>(data), size, label);
}

}  // namespace tickinfer::formats
