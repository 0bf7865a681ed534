#include "formats/model_file.hpp"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "formats/isolated_load.hpp"
#include "formats/keras/keras_h5_file.hpp"
#include "formats/keras/keras_v3_file.hpp"
#include "formats/onnx/onnx_file.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "formats/tkq/tkq_file.hpp"
#include "tflite/rewrite/program_rewrite.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr uint64_t kMaxModelFileBytes = uint64_t{4} << 30;

bool starts_with_bytes(const void* data, size_t size, size_t offset, const char* magic, size_t len) {
  return size >= offset + len && std::memcmp(static_cast<const char*>(data) + offset, magic, len) == 0;
}

bool is_zip(const void* data, size_t size) {
  // A local file header, or the end-of-central-directory record of an empty archive.
  return starts_with_bytes(data, size, 0, "PK\x03\x04", 4) || starts_with_bytes(data, size, 0, "PK\x05\x06", 4);
}

bool is_hdf5(const void* data, size_t size) {
  // The superblock signature sits at offset 0 or after a user block of 512, 1024, 2048, ... bytes.
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  if (starts_with_bytes(data, size, 0, kSignature, 8)) return true;
  for (size_t offset = 512; offset + 8 <= size && offset <= (size_t{1} << 30); offset *= 2) {
    if (starts_with_bytes(data, size, offset, kSignature, 8)) return true;
  }
  return false;
}

// ONNX has no magic number: a ".onnx" name decides (any case); load_model_bytes falls back to a
// content check (formats/onnx/onnx_file.hpp) for other names.
bool has_onnx_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".onnx";
}

Graph load_onnx_file(const std::string& bytes, const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return load_onnx(bytes.data(), bytes.size(), path, dir.empty() ? "." : dir);
}

}  // namespace

Graph load_model_bytes(const void* data, size_t size, const std::string& label) {
  if (data == nullptr && size != 0) throw Error(label + ": no data");
  // Both formats go through libhdf5, which is only ever run in a child process.
  if (is_zip(data, size)) {
    return parse_isolated(&load_keras3_archive, data, size, label);
  }
  if (is_hdf5(data, size)) {
    return parse_isolated(&load_keras_h5, data, size, label);
  }
  if (looks_like_onnx(data, size)) return load_onnx(data, size, label, "");
  throw Error(label + ": unknown model format (expected a Keras .keras ZIP archive, a .h5 HDF5 file or an ONNX model)");
}

namespace {
bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::string read_model_file(const std::string& path) {
  if (is_directory(path)) throw Error(not_a_saved_model_message(path));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open file");
  std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot determine the file size");
  if (static_cast<uint64_t>(size) > kMaxModelFileBytes) throw Error(path + ": file is larger than 4 GiB");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) throw Error(path + ": cannot read file");
  return bytes;
}
}  // namespace

Graph load_model_file(const std::string& path) {
  if (is_saved_model_dir(path)) return load_saved_model(path).graph;
  const std::string bytes = read_model_file(path);
  if (has_onnx_extension(path)) return load_onnx_file(bytes, path);
  if (is_tflite(bytes.data(), bytes.size())) {
    throw Error(path + ": a TFLite model has no Keras layer graph (load it with tickinfer::Model::load)");
  }
  if (is_tkq(bytes.data(), bytes.size())) {
    throw Error(path + ": a quantized .tkq model has no Keras layer graph (load it with tickinfer::Model::load)");
  }
  return load_model_bytes(bytes.data(), bytes.size(), path);
}

AnyModel load_any_model_file(const std::string& path, TfliteEngine engine) {
  AnyModel m;
  if (is_saved_model_dir(path)) {
    SavedModel sm = load_saved_model(path);
    m.graph = std::move(sm.graph);
    m.saved_model = std::make_shared<const SavedModelInfo>(std::move(sm.info));
    return m;
  }
  const std::string bytes = read_model_file(path);
  if (has_onnx_extension(path)) {
    m.graph = load_onnx_file(bytes, path);
    return m;
  }
  if (is_tflite(bytes.data(), bytes.size())) {
    tfl::Program program = load_tflite(bytes.data(), bytes.size(), path);
    if (engine != TfliteEngine::Interpreter) {
      // The lift reads the program as the interpreter would run it: static shapes folded,
      // resource variables resolved, a recognised Keras 3 LSTM loop lowered to one fused op.
      tfl::InterpreterOptions as_written;
      as_written.fuse_activations = false;  // the lift maps each TFLite op onto a layer
      const auto prepared = tfl::rewrite_for_interpreter(std::make_shared<const tfl::Program>(program), as_written,
                                                         kernels::Isa::Scalar);
      TfliteLift lift = lift_tflite_program(*prepared);
      if (lift.graph) {
        m.graph = std::move(*lift.graph);
        return m;
      }
      if (engine == TfliteEngine::Graph) {
        throw Error(path + ": the TFLite engine is 'graph', but the program does not lift to the graph engine: " +
                    lift.refusal);
      }
    }
    m.program = std::make_shared<const tfl::Program>(std::move(program));
    return m;
  }
  if (is_tkq(bytes.data(), bytes.size())) {
    m.program = std::make_shared<const tfl::Program>(load_tkq(bytes.data(), bytes.size(), path));
    return m;
  }
  m.graph = load_model_bytes(bytes.data(), bytes.size(), path);
  return m;
}

}  // namespace tickinfer::formats
