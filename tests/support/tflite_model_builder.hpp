#pragma once
// Builds small .tflite flatbuffers from a plain description, so loader tests can break one thing
// at a time (an index, a size, an option) in an otherwise valid file. The default is a float
// FULLY_CONNECTED: x [1,4] * w [2,4] + b [2] -> y [1,2].
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tflite_generated.h"

namespace tickinfer::testing {

using SparsityFn = std::function<flatbuffers::Offset<tflite::SparsityParameters>(flatbuffers::FlatBufferBuilder&)>;

// One traversal level of a hand-made sparse tensor: DENSE of `dense_size`, or SPARSE_CSR with
// its segments and indices stored as `index_type` (Int32Vector, Uint16Vector or Uint8Vector).
struct MiniSparseDim {
  bool csr = false;
  int32_t dense_size = 0;
  std::vector<int32_t> segments, indices;
  tflite::SparseIndexVector index_type = tflite::SparseIndexVector::Uint8Vector;
};

inline flatbuffers::Offset<void> mini_index_vector(flatbuffers::FlatBufferBuilder& b, tflite::SparseIndexVector type,
                                                   const std::vector<int32_t>& v) {
  if (type == tflite::SparseIndexVector::Int32Vector) return tflite::CreateInt32VectorDirect(b, &v).Union();
  if (type == tflite::SparseIndexVector::Uint16Vector) {
    const std::vector<uint16_t> u(v.begin(), v.end());
    return tflite::CreateUint16VectorDirect(b, &u).Union();
  }
  const std::vector<uint8_t> u(v.begin(), v.end());
  return tflite::CreateUint8VectorDirect(b, &u).Union();
}

inline SparsityFn mini_sparsity(std::vector<int32_t> order, std::vector<int32_t> block_map, std::vector<MiniSparseDim> dims) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    std::vector<flatbuffers::Offset<tflite::DimensionMetadata>> md;
    for (const MiniSparseDim& d : dims) {
      if (!d.csr) {
        md.push_back(tflite::CreateDimensionMetadata(b, tflite::DimensionType::DENSE, d.dense_size));
        continue;
      }
      auto seg = mini_index_vector(b, d.index_type, d.segments);
      auto idx = mini_index_vector(b, d.index_type, d.indices);
      md.push_back(tflite::CreateDimensionMetadata(b, tflite::DimensionType::SPARSE_CSR, 0, d.index_type, seg, d.index_type, idx));
    }
    return tflite::CreateSparsityParametersDirect(b, &order, block_map.empty() ? nullptr : &block_map, &md);
  };
}

struct MiniTensor {
  std::vector<int32_t> shape;
  int8_t type = 0;  // TensorType
  uint32_t buffer = 0;
  std::string name;
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  bool is_variable = false;
  bool sparse = false;  // an empty SparsityParameters table (when `sparsity` is not set)
  SparsityFn sparsity;  // builds the tensor's SparsityParameters
  uint32_t external_buffer = 0;
  tflite::QuantizationDetails details = tflite::QuantizationDetails::NONE;
};

inline MiniTensor mini_tensor(std::vector<int32_t> shape, int8_t type, uint32_t buffer, std::string name) {
  MiniTensor t;
  t.shape = std::move(shape);
  t.type = type;
  t.buffer = buffer;
  t.name = std::move(name);
  return t;
}

struct MiniBuffer {
  std::vector<uint8_t> data;
  uint64_t offset = 0, size = 0;
};

using OptionsFn = std::function<std::pair<tflite::BuiltinOptions, flatbuffers::Offset<void>>(flatbuffers::FlatBufferBuilder&)>;

struct MiniOp {
  int builtin = 9;           // BuiltinOperator
  int deprecated_code = -1;  // -1: min(builtin, 127) as the converter writes it
  std::string custom_code;
  int64_t opcode_index = -1;  // -1: this op's own OperatorCode entry
  std::vector<int32_t> inputs, outputs, intermediates;
  OptionsFn options;
};

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

struct MiniModel {
  uint32_t version = 3;
  std::string description = "mini";
  std::vector<MiniTensor> tensors;
  std::vector<MiniBuffer> buffers;  // buffers[0] is the empty sentinel
  std::vector<MiniOp> ops;
  std::vector<int32_t> inputs, outputs;
  int extra_subgraphs = 0;

  static MiniModel fully_connected() {
    MiniModel m;
    m.buffers = {MiniBuffer{}, MiniBuffer{bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}), 0, 0},
                 MiniBuffer{bytes_of(std::vector<float>{0.5f, -0.5f}), 0, 0}};
    m.tensors = {mini_tensor({1, 4}, 0, 0, "x"), mini_tensor({2, 4}, 0, 1, "w"), mini_tensor({2}, 0, 2, "b"),
                 mini_tensor({1, 2}, 0, 0, "y")};
    MiniOp fc;
    fc.inputs = {0, 1, 2};
    fc.outputs = {3};
    fc.options = [](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(tflite::BuiltinOptions::FullyConnectedOptions,
                            tflite::CreateFullyConnectedOptions(b).Union());
    };
    m.ops = {fc};
    m.inputs = {0};
    m.outputs = {3};
    return m;
  }

  std::vector<uint8_t> serialize() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<tflite::Buffer>> bufs;
    for (const auto& x : buffers) {
      bufs.push_back(tflite::CreateBufferDirect(b, x.data.empty() ? nullptr : &x.data, x.offset, x.size));
    }
    std::vector<flatbuffers::Offset<tflite::Tensor>> ts;
    for (const auto& t : tensors) {
      flatbuffers::Offset<tflite::QuantizationParameters> q = 0;
      if (!t.scale.empty() || !t.zero_point.empty() || t.details != tflite::QuantizationDetails::NONE) {
        flatbuffers::Offset<void> details = 0;
        if (t.details != tflite::QuantizationDetails::NONE) details = tflite::CreatePlaceholder(b).Union();
        q = tflite::CreateQuantizationParametersDirect(b, nullptr, nullptr, &t.scale, &t.zero_point, t.details,
                                                       details, t.quantized_dimension);
      }
      flatbuffers::Offset<tflite::SparsityParameters> sparsity =
          t.sparsity ? t.sparsity(b) : (t.sparse ? tflite::CreateSparsityParameters(b) : 0);
      ts.push_back(tflite::CreateTensorDirect(b, &t.shape, t.type, t.buffer, t.name.c_str(), q, t.is_variable,
                                              sparsity, nullptr, true, nullptr, t.external_buffer));
    }
    std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<tflite::Operator>> os;
    for (size_t i = 0; i < ops.size(); ++i) {
      const MiniOp& op = ops[i];
      const int dep = op.deprecated_code >= 0 ? op.deprecated_code : (op.builtin < 127 ? op.builtin : 127);
      codes.push_back(tflite::CreateOperatorCodeDirect(b, static_cast<int8_t>(dep),
                                                       op.custom_code.empty() ? nullptr : op.custom_code.c_str(), 1,
                                                       op.builtin));
      auto opt = op.options ? op.options(b)
                            : std::make_pair(tflite::BuiltinOptions::NONE, flatbuffers::Offset<void>(0));
      const auto index = static_cast<uint32_t>(op.opcode_index >= 0 ? op.opcode_index : static_cast<int64_t>(i));
      os.push_back(tflite::CreateOperatorDirect(b, index, &op.inputs, &op.outputs, opt.first, opt.second, nullptr, 0,
                                                nullptr, op.intermediates.empty() ? nullptr : &op.intermediates));
    }
    std::vector<flatbuffers::Offset<tflite::SubGraph>> graphs;
    graphs.push_back(tflite::CreateSubGraphDirect(b, &ts, &inputs, &outputs, &os, "main"));
    for (int i = 0; i < extra_subgraphs; ++i) graphs.push_back(tflite::CreateSubGraphDirect(b));
    auto model = tflite::CreateModelDirect(b, version, &codes, &graphs, description.c_str(), &bufs);
    tflite::FinishModelBuffer(b, model);
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

}  // namespace tickinfer::testing
