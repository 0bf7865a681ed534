// Writes a tfl::Program as a .tkq file (layout: docs/tkq-format.md).
#include <algorithm>
#include <bit>
#include <fstream>
#include <limits>

#include "formats/tkq/tkq_file.hpp"
#include "formats/tkq/tkq_layout.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

static_assert(std::endian::native == std::endian::little, ".tkq is little-endian; so is every host we build for");

namespace tickinfer::formats {

namespace {

using tkq::ByteWriter;

uint32_t count32(size_t n, const char* what) {
  if (n > std::numeric_limits<uint32_t>::max()) throw Error(std::string("tkq: too many ") + what);
  return static_cast<uint32_t>(n);
}

void put_indices(ByteWriter& w, const std::vector<int>& v) {
  w.put<uint32_t>(count32(v.size(), "indices"));
  for (int i : v) w.put<int32_t>(i);
}

// The options block without its trailing bytes that equal the default options' bytes (most
// ops set one or two fields, so a block is usually a few bytes).
void put_options(ByteWriter& w, const tfl::OpOptions& o) {
  std::vector<uint8_t> b = tkq::encode_options(o);
  static const std::vector<uint8_t> defaults = tkq::encode_options(tfl::OpOptions{});
  if (b.size() == defaults.size()) {
    while (!b.empty() && b.back() == defaults[b.size() - 1]) b.pop_back();
  }
  w.put<uint32_t>(count32(b.size(), "option bytes"));
  w.put_bytes(b.data(), b.size());
}

// Checks what the format cannot represent; the reader repeats these checks on untrusted input.
void check_program(const tfl::Program& p) {
  const int n = static_cast<int>(p.tensors.size());
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const auto& tensor = p.tensors[t];
    const int64_t elems = tfl::element_count(tensor.shape);
    if (elems < 0) throw Error("tkq: tensor " + std::to_string(t) + " '" + tensor.name + "': negative dimension");
    if (tensor.is_constant() &&
        tensor.data.size() != static_cast<size_t>(elems) * tfl::dtype_size(tensor.type)) {
      throw Error("tkq: tensor " + std::to_string(t) + " '" + tensor.name + "': data size " +
                  std::to_string(tensor.data.size()) + " does not match its shape and type");
    }
    if (tensor.quant.zero_point.size() != tensor.quant.scale.size()) {
      throw Error("tkq: tensor " + std::to_string(t) + " '" + tensor.name + "': " +
                  std::to_string(tensor.quant.scale.size()) + " scales but " +
                  std::to_string(tensor.quant.zero_point.size()) + " zero points");
    }
  }
  const auto check = [&](int i, bool optional, const std::string& where) {
    if ((optional && i == -1) || (i >= 0 && i < n)) return;
    throw Error("tkq: " + where + ": tensor index " + std::to_string(i) + " out of range");
  };
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const auto& op = p.ops[k];
    const std::string where = "op " + std::to_string(k) + " '" + op.label + "'";
    for (int i : op.inputs) check(i, true, where);
    for (int i : op.outputs) check(i, false, where);
    for (int i : op.intermediates) check(i, false, where);
  }
  for (int i : p.inputs) check(i, false, "program input");
  for (int i : p.outputs) check(i, false, "program output");
}

}  // namespace

std::vector<uint8_t> serialize_tkq(const tfl::Program& program) {
  check_program(program);
  // The format has no subgraphs, and stores the op codes tkq::stores_op_code names.
  if (!program.subgraphs.empty()) throw Error("tkq: a program with subgraphs (TFLite WHILE / CALL_ONCE) cannot be stored");
  for (const auto& op : program.ops) {
    if (!tkq::stores_op_code(static_cast<uint16_t>(op.code))) {
      throw Error(std::string("tkq: op ") + tfl::op_name(op.code) + " cannot be stored in a .tkq file");
    }
  }

  // DATA section: each constant at the next 64-byte boundary.
  std::vector<uint64_t> data_offset(program.tensors.size(), 0);
  size_t data_size = 0;
  for (size_t t = 0; t < program.tensors.size(); ++t) {
    if (!program.tensors[t].is_constant()) continue;
    data_offset[t] = tkq::align_up(data_size);
    data_size = data_offset[t] + program.tensors[t].data.size();
  }

  ByteWriter meta;
  meta.put_string(program.name);
  meta.put_string(program.source_format);
  meta.put<uint32_t>(count32(program.tensors.size(), "tensors"));
  for (size_t t = 0; t < program.tensors.size(); ++t) {
    const auto& tensor = program.tensors[t];
    meta.put_string(tensor.name);
    meta.put<uint8_t>(static_cast<uint8_t>(tensor.type));
    const bool zero_zps = !tensor.quant.zero_point.empty() &&
                          std::all_of(tensor.quant.zero_point.begin(), tensor.quant.zero_point.end(), [](int64_t z) { return z == 0; });
    meta.put<uint8_t>(static_cast<uint8_t>((tensor.is_variable ? tkq::kFlagVariable : 0) |
                                           (tensor.is_constant() ? tkq::kFlagHasData : 0) |
                                           (zero_zps ? tkq::kFlagZeroPointsZero : 0)));
    meta.put<uint16_t>(0);
    put_indices(meta, tensor.shape);
    meta.put<uint32_t>(count32(tensor.quant.scale.size(), "scales"));
    for (float s : tensor.quant.scale) meta.put<float>(s);
    if (zero_zps) {
      meta.put<uint32_t>(0);
    } else {
      meta.put<uint32_t>(count32(tensor.quant.zero_point.size(), "zero points"));
      for (int64_t z : tensor.quant.zero_point) meta.put<int64_t>(z);
    }
    meta.put<int32_t>(tensor.quant.axis);
    meta.put<uint64_t>(data_offset[t]);
    meta.put<uint64_t>(tensor.data.size());
  }
  meta.put<uint32_t>(count32(program.ops.size(), "ops"));
  for (const auto& op : program.ops) {
    meta.put<uint16_t>(static_cast<uint16_t>(op.code));
    meta.put<uint8_t>(static_cast<uint8_t>(op.precision));
    meta.put<uint8_t>(0);
    meta.put_string(op.label);
    put_indices(meta, op.inputs);
    put_indices(meta, op.outputs);
    put_indices(meta, op.intermediates);
    put_options(meta, op.options);
  }
  put_indices(meta, program.inputs);
  put_indices(meta, program.outputs);

  // Header, section table (two entries), PROGRAM, DATA; each section 64-byte aligned.
  const size_t table_at = tkq::kHeaderSize;
  const size_t program_at = tkq::align_up(table_at + 2 * tkq::kSectionEntrySize);
  const size_t data_at = tkq::align_up(program_at + meta.bytes.size());
  const size_t file_size = data_at + data_size;

  ByteWriter out;
  out.bytes.assign(file_size, 0);
  std::memcpy(out.bytes.data(), kTkqMagic, sizeof(kTkqMagic));
  out.patch<uint16_t>(8, kTkqVersionMajor);
  out.patch<uint16_t>(10, kTkqVersionMinor);
  out.patch<uint32_t>(12, static_cast<uint32_t>(tkq::kHeaderSize));
  out.patch<uint64_t>(16, file_size);
  out.patch<uint64_t>(24, table_at);
  out.patch<uint32_t>(32, 2);
  out.patch<uint8_t>(tkq::kProgramFlagsOffset, program.stream_only ? tkq::kProgramStreamOnly : uint8_t{0});
  const auto put_section = [&](size_t entry, uint32_t kind, size_t at, size_t size) {
    const size_t e = table_at + entry * tkq::kSectionEntrySize;
    out.patch<uint32_t>(e, kind);
    out.patch<uint64_t>(e + 8, at);
    out.patch<uint64_t>(e + 16, size);
  };
  put_section(0, tkq::kSectionProgram, program_at, meta.bytes.size());
  put_section(1, tkq::kSectionData, data_at, data_size);
  std::memcpy(out.bytes.data() + program_at, meta.bytes.data(), meta.bytes.size());
  for (size_t t = 0; t < program.tensors.size(); ++t) {
    const auto& d = program.tensors[t].data;
    if (!d.empty()) std::memcpy(out.bytes.data() + data_at + data_offset[t], d.data(), d.size());
  }
  out.patch<uint32_t>(36, stats::crc32(out.bytes.data() + tkq::kHeaderSize, file_size - tkq::kHeaderSize));
  out.patch<uint32_t>(tkq::kHeaderCrcOffset, stats::crc32(out.bytes.data(), tkq::kHeaderCrcOffset));
  return std::move(out.bytes);
}

void save_tkq(const tfl::Program& program, const std::string& path) {
  const auto bytes = serialize_tkq(program);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("cannot open '" + path + "' for writing");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error("cannot write '" + path + "'");
}

}  // namespace tickinfer::formats
