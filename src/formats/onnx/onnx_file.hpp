#pragma once
// Reads an ONNX model (.onnx, a protobuf ModelProto; onnx/onnx.proto here) into the engine's
// Graph, with its initializers (raw_data, the typed fields, or external data files next to the
// model) and the default-domain opset 13 or later. The op by op lowering is in onnx_lower.hpp;
// docs/formats/onnx.md lists what is read and what is refused.
//
// ONNX files have no magic number. load_any_model_file takes a file as ONNX when its name ends in
// ".onnx" (any case); looks_like_onnx is the content check used otherwise: the bytes parse as a
// ModelProto that has a graph and a default-domain opset_import.
//
// Errors: tickinfer::Error starting with `label` and naming the node, op type and reason, e.g.
//   "m.onnx: node 'Loop__12' (Loop): control flow is not supported (...)".
// Hostile input never crashes the reader. The Graph has Input shapes set (a symbolic dimension
// after the batch is -1, a variable length) and is not yet validated by infer_shapes.
#include <cstddef>
#include <string>

#include "model/graph.hpp"

namespace tickinfer::formats {

bool looks_like_onnx(const void* data, size_t size);

// `model_dir` is where external data files are looked up ("" refuses external data).
Graph load_onnx(const void* data, size_t size, const std::string& label, const std::string& model_dir);

// The opsets of the default domain the importer accepts.
constexpr int kOnnxMinOpset = 13;
constexpr int kOnnxMaxOpset = 23;

}  // namespace tickinfer::formats
