#include "formats/onnx/onnx_tensor.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "onnx/onnx.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// No model the engine runs has a constant this large; the bound keeps hostile dims from
// asking for huge allocations.
constexpr int64_t kMaxElements = int64_t{1} << 28;

enum DType : int { kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
                   kBool = 9, kDouble = 11 };

int element_bytes(int dt) {
  switch (dt) {
    case kFloat: case kInt32: return 4;
    case kInt64: case kDouble: return 8;
    case kUint8: case kInt8: case kBool: return 1;
    case kUint16: case kInt16: return 2;
    default: return 0;
  }
}

template <typename T>
T load_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the host is little-endian (x86-64), as raw_data is
  return v;
}

void decode_raw(const std::string& raw, int dt, int64_t n, Tensor& out) {
  const char* p = raw.data();
  const int eb = element_bytes(dt);
  for (int64_t k = 0; k < n; ++k, p += eb) {
    switch (dt) {
      case kFloat: out.f[k] = load_le<float>(p); break;
      case kDouble: out.f[k] = static_cast<float>(load_le<double>(p)); break;
      case kInt64: out.i[k] = load_le<int64_t>(p); break;
      case kInt32: out.i[k] = load_le<int32_t>(p); break;
      case kInt16: out.i[k] = load_le<int16_t>(p); break;
      case kUint16: out.i[k] = load_le<uint16_t>(p); break;
      case kInt8: out.i[k] = load_le<int8_t>(p); break;
      case kUint8: case kBool: out.i[k] = load_le<uint8_t>(p); break;
    }
  }
}

// The typed field that carries `dt`, copied out; false when its element count is not `n`.
bool decode_typed(const onnx::TensorProto& t, int dt, int64_t n, Tensor& out) {
  switch (dt) {
    case kFloat:
      if (t.float_data_size() != n) return false;
      for (int64_t k = 0; k < n; ++k) out.f[k] = t.float_data(static_cast<int>(k));
      return true;
    case kDouble:
      if (t.double_data_size() != n) return false;
      for (int64_t k = 0; k < n; ++k) out.f[k] = static_cast<float>(t.double_data(static_cast<int>(k)));
      return true;
    case kInt64:
      if (t.int64_data_size() != n) return false;
      for (int64_t k = 0; k < n; ++k) out.i[k] = t.int64_data(static_cast<int>(k));
      return true;
    default:  // INT32 and the narrower integer types travel in int32_data
      if (t.int32_data_size() != n) return false;
      for (int64_t k = 0; k < n; ++k) out.i[k] = t.int32_data(static_cast<int>(k));
      return true;
  }
}

bool safe_relative(const std::filesystem::path& p) {
  if (p.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

uint64_t parse_decimal(const std::string& s, const std::string& ctx, const char* key) {
  if (s.empty() || s.size() > 18) throw Error(ctx + ": external data " + key + " '" + s + "' is not a decimal number");
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') throw Error(ctx + ": external data " + key + " '" + s + "' is not a decimal number");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string read_external(const onnx::TensorProto& t, const TensorSource& src, const std::string& ctx,
                          uint64_t want_bytes) {
  std::string location;
  uint64_t offset = 0;
  bool has_length = false;
  uint64_t length = 0;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_decimal(kv.value(), ctx, "offset");
    else if (kv.key() == "length") length = parse_decimal(kv.value(), ctx, "length"), has_length = true;
  }
  if (location.empty()) throw Error(ctx + ": external data has no 'location'");
  if (src.model_dir.empty()) throw Error(ctx + ": external data '" + location + "' needs the model's directory (load the model from a file)");
  const std::filesystem::path rel(location);
  if (!safe_relative(rel)) {
    throw Error(ctx + ": external data location '" + location + "' is not a path inside the model's directory");
  }
  const std::filesystem::path full = std::filesystem::path(src.model_dir) / rel;
  // A symbolic link inside the directory must not lead out of it either.
  std::error_code ec;
  const auto dir_real = std::filesystem::weakly_canonical(std::filesystem::path(src.model_dir), ec);
  const auto file_real = std::filesystem::weakly_canonical(full, ec);
  if (!ec) {
    const auto d_end = std::mismatch(dir_real.begin(), dir_real.end(), file_real.begin(), file_real.end()).first;
    if (d_end != dir_real.end()) {
      throw Error(ctx + ": external data location '" + location + "' resolves outside the model's directory");
    }
  }
  std::ifstream in(full, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ctx + ": cannot open external data file '" + location + "'");
  const std::streamoff fsize = in.tellg();
  if (fsize < 0) throw Error(ctx + ": cannot determine the size of external data file '" + location + "'");
  const uint64_t file_size = static_cast<uint64_t>(fsize);
  if (!has_length) length = offset <= file_size ? file_size - offset : 0;
  if (offset > file_size || length > file_size - offset) {
    throw Error(ctx + ": external data offset " + std::to_string(offset) + " length " + std::to_string(length) +
                " lies outside '" + location + "' (" + std::to_string(file_size) + " bytes)");
  }
  if (length != want_bytes) {
    throw Error(ctx + ": external data length " + std::to_string(length) + " does not match the tensor's " +
                std::to_string(want_bytes) + " bytes");
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (length && !in.read(bytes.data(), static_cast<std::streamsize>(length))) {
    throw Error(ctx + ": cannot read external data file '" + location + "'");
  }
  return bytes;
}

}  // namespace

const char* dtype_name(int dt) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                       "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                       "COMPLEX128", "BFLOAT16"};
  if (dt >= 0 && dt < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return kNames[dt];
  return "an unknown data type";
}

Tensor decode_tensor(const onnx::TensorProto& t, const TensorSource& src, const std::string& what) {
  const std::string ctx = src.label + ": " + what;
  const int dt = t.data_type();
  if (element_bytes(dt) == 0) {
    throw Error(ctx + ": element type " + std::string(dtype_name(dt)) + " is not supported");
  }
  Tensor out;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) throw Error(ctx + ": dims are negative or too large");
    out.dims.push_back(d);
    n *= d;
  }
  out.is_float = dt == kFloat || dt == kDouble;
  if (out.is_float) out.f.assign(static_cast<size_t>(n), 0.0f); else out.i.assign(static_cast<size_t>(n), 0);
  const uint64_t want_bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(element_bytes(dt));
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    decode_raw(read_external(t, src, ctx, want_bytes), dt, n, out);
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != want_bytes) {
      throw Error(ctx + ": raw_data holds " + std::to_string(t.raw_data().size()) + " bytes, dims " +
                  "need " + std::to_string(want_bytes));
    }
    decode_raw(t.raw_data(), dt, n, out);
  } else if (!decode_typed(t, dt, n, out)) {
    throw Error(ctx + ": the typed data field does not hold the " + std::to_string(n) + " values its dims need");
  }
  return out;
}

}  // namespace tickinfer::formats::onnx_import
