// Reads and validates a .tkq file (layout: docs/tkq-format.md). Every value read from the file is
// checked before it is used: the reader never indexes, allocates or copies by an unchecked count.
#include <bit>
#include <fstream>
#include <iterator>
#include <limits>

#include "formats/tkq/tkq_file.hpp"
#include "formats/tkq/tkq_layout.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

static_assert(std::endian::native == std::endian::little, ".tkq is little-endian; so is every host we build for");

namespace tickinfer::formats {

namespace {

template <class T>
T load_at(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Reads a section front to back; every read is bounds-checked and names what it was reading.
class SectionReader {
 public:
  SectionReader(const uint8_t* p, size_t n, const std::string& source) : p_(p), n_(n), source_(source) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(source_ + ": " + what); }

  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v = load_at<T>(p_ + at_);
    at_ += sizeof(T);
    return v;
  }
  std::string string(const char* what) {
    const uint32_t len = get<uint32_t>(what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len;
    return s;
  }
  // A count of items of at least `item_bytes` each: refused when the rest of the section could
  // not hold them, so a hostile count cannot make us allocate.
  uint32_t count(size_t item_bytes, const char* what) {
    const uint32_t n = get<uint32_t>(what);
    if (static_cast<uint64_t>(n) * item_bytes > n_ - at_) {
      fail(std::string(what) + ": count " + std::to_string(n) + " exceeds the section's remaining " +
           std::to_string(n_ - at_) + " bytes");
    }
    return n;
  }
  std::vector<int> indices(const char* what) {
    const uint32_t n = count(4, what);
    std::vector<int> v(n);
    for (auto& i : v) i = get<int32_t>(what);
    return v;
  }
  size_t offset() const { return at_; }
  size_t remaining() const { return n_ - at_; }
  void skip(size_t n, const char* what) { need(n, what); at_ += n; }

 private:
  void need(size_t k, const char* what) const {
    if (k > n_ - at_) {
      fail(std::string("truncated ") + what + " at byte " + std::to_string(at_) + " of the program section");
    }
  }
  const uint8_t* p_;
  size_t n_;
  size_t at_ = 0;
  const std::string& source_;
};

bool known_dtype(uint8_t t) {
  switch (static_cast<tfl::DType>(t)) {
    case tfl::DType::F32: case tfl::DType::F16: case tfl::DType::I32: case tfl::DType::U8:
    case tfl::DType::I64: case tfl::DType::Bool: case tfl::DType::I16: case tfl::DType::I8:
    case tfl::DType::BF16:
      return true;
    case tfl::DType::Resource:  // TFLite resource handles never reach a .tkq file
      return false;
  }
  return false;
}

tfl::OpOptions parse_options(SectionReader& r, const std::string& where) {
  tfl::OpOptions o;
  const uint8_t act = r.get<uint8_t>("fused activation");
  if (act > static_cast<uint8_t>(tfl::FusedActivation::SignBit)) {
    r.fail(where + ": fused activation " + std::to_string(act) + " is not defined");
  }
  o.activation = static_cast<tfl::FusedActivation>(act);
  const uint8_t pad = r.get<uint8_t>("padding");
  if (pad > static_cast<uint8_t>(tfl::PaddingMode::Valid)) r.fail(where + ": padding " + std::to_string(pad) + " is not defined");
  o.padding = static_cast<tfl::PaddingMode>(pad);
  bool* flags[] = {&o.keep_num_dims, &o.asymmetric_quantize_inputs, &o.keep_dims, &o.time_major,
                   &o.offset, &o.adj_x, &o.adj_y, &o.approximate, &o.pot_scale_int16};
  for (bool* f : flags) {
    const uint8_t b = r.get<uint8_t>("option flag");
    if (b > 1) r.fail(where + ": option flag byte " + std::to_string(b) + " is neither 0 nor 1");
    *f = b != 0;
  }
  // Reserved in 1.0, where writers wrote 0 and readers skipped it: a 1.0 file that broke that
  // reads as GRU flags now (bits 0 and 1) or fails (any other bit).
  const uint8_t gru = r.get<uint8_t>("GRU flags");
  if ((gru & ~(tkq::kGruResetBefore | tkq::kGruOwnArithmetic)) != 0) {
    r.fail(where + ": GRU flags byte " + std::to_string(gru) + " sets bits other than reset_before (1) and own arithmetic (2)");
  }
  o.reset_after = (gru & tkq::kGruResetBefore) == 0;
  o.own_arithmetic = (gru & tkq::kGruOwnArithmetic) != 0;
  for (int* v : {&o.stride_w, &o.stride_h, &o.dilation_w, &o.dilation_h, &o.filter_w, &o.filter_h,
                 &o.depth_multiplier}) {
    *v = r.get<int32_t>("op option");
  }
  for (float* v : {&o.cell_clip, &o.proj_clip, &o.beta, &o.alpha}) *v = r.get<float>("op option");
  for (int* v : {&o.axis, &o.num, &o.begin_mask, &o.end_mask, &o.ellipsis_mask, &o.new_axis_mask,
                 &o.shrink_axis_mask}) {
    *v = r.get<int32_t>("op option");
  }
  o.new_shape = r.indices("new_shape");
  return o;
}

// A stored block may stop early (the writer drops trailing bytes equal to the default options')
// or run longer (fields of a later minor version, skipped).
tfl::OpOptions read_options(SectionReader& r, const std::string& where, const std::string& source) {
  const uint32_t size = r.get<uint32_t>("op options size");
  if (size > r.remaining()) r.fail(where + ": options block of " + std::to_string(size) + " bytes runs past the program section");
  static const std::vector<uint8_t> defaults = tkq::encode_options(tfl::OpOptions{});
  std::vector<uint8_t> block(defaults);
  if (size > block.size()) block.resize(size);
  for (uint32_t i = 0; i < size; ++i) block[i] = r.get<uint8_t>("op options");
  SectionReader br(block.data(), block.size(), source);
  return parse_options(br, where);
}

struct Section {
  uint64_t offset = 0, size = 0;
  bool present = false;
};

// One tensor record of the program section; its data is copied out of the data section `blob`.
void read_tensor(SectionReader& r, uint32_t t, tfl::Tensor& tensor, const uint8_t* blob,
                 const Section& data_section) {
  tensor.name = r.string("tensor name");
  const std::string where = "tensor " + std::to_string(t) + " '" + tensor.name + "'";
  const uint8_t type = r.get<uint8_t>("tensor type");
  if (!known_dtype(type)) r.fail(where + ": type " + std::to_string(type) + " is not supported");
  tensor.type = static_cast<tfl::DType>(type);
  const uint8_t flags = r.get<uint8_t>("tensor flags");
  if (flags & ~(tkq::kFlagVariable | tkq::kFlagHasData | tkq::kFlagZeroPointsZero)) {
    r.fail(where + ": unknown flag bits " + std::to_string(flags));
  }
  tensor.is_variable = flags & tkq::kFlagVariable;
  r.skip(2, "tensor reserved bytes");
  tensor.shape = r.indices("tensor shape");
  int64_t elems = 1;
  for (int d : tensor.shape) {
    if (d < 0) r.fail(where + ": negative dimension " + std::to_string(d));
    if (d != 0 && elems > std::numeric_limits<int64_t>::max() / 16 / d) r.fail(where + ": shape too large");
    elems *= d;
  }
  const uint32_t n_scale = r.count(4, "scale count");
  tensor.quant.scale.resize(n_scale);
  for (auto& s : tensor.quant.scale) s = r.get<float>("scale");
  const uint32_t n_zp = r.count(8, "zero point count");
  if (flags & tkq::kFlagZeroPointsZero) {
    if (n_zp != 0 || n_scale == 0) r.fail(where + ": zero points flagged all-zero but " + std::to_string(n_zp) + " stored for " + std::to_string(n_scale) + " scales");
    tensor.quant.zero_point.assign(n_scale, 0);
  } else {
    if (n_zp != n_scale) r.fail(where + ": " + std::to_string(n_scale) + " scales but " + std::to_string(n_zp) + " zero points");
    tensor.quant.zero_point.resize(n_zp);
    for (auto& z : tensor.quant.zero_point) z = r.get<int64_t>("zero point");
  }
  tensor.quant.axis = r.get<int32_t>("quantized axis");
  if (tensor.quant.per_axis() &&
      (tensor.quant.axis < 0 || static_cast<size_t>(tensor.quant.axis) >= tensor.shape.size() ||
       tensor.shape[static_cast<size_t>(tensor.quant.axis)] != static_cast<int>(n_scale))) {
    r.fail(where + ": " + std::to_string(n_scale) + " per-axis scales do not match axis " +
           std::to_string(tensor.quant.axis) + " of the shape");
  }
  const uint64_t off = r.get<uint64_t>("data offset"), len = r.get<uint64_t>("data size");
  const uint64_t want = static_cast<uint64_t>(elems) * tfl::dtype_size(tensor.type);
  if (flags & tkq::kFlagHasData) {
    if (len != want || len == 0) {
      r.fail(where + ": data " + std::to_string(len) + " bytes, its shape and type need " + std::to_string(want));
    }
    if (off % tkq::kAlign != 0) r.fail(where + ": data offset " + std::to_string(off) + " is not 64-byte aligned");
    if (off > data_section.size || len > data_section.size - off) {
      r.fail(where + ": data [" + std::to_string(off) + ", +" + std::to_string(len) + ") lies outside the data section");
    }
    tensor.data.assign(blob + off, blob + off + len);
  } else if (len != 0) {
    r.fail(where + ": has data size " + std::to_string(len) + " but no data flag");
  }
}

}  // namespace

bool is_tkq(const void* data, size_t size) {
  return size >= sizeof(kTkqMagic) && std::memcmp(data, kTkqMagic, sizeof(kTkqMagic)) == 0;
}

tfl::Program load_tkq(const void* data, size_t size, std::string_view source_view) {
  const std::string source(source_view);
  const auto fail = [&](const std::string& what) -> void { throw Error(source + ": " + what); };
  const auto* b = static_cast<const uint8_t*>(data);
  if (size < tkq::kHeaderSize) fail("not a .tkq file (" + std::to_string(size) + " bytes, shorter than the header)");
  if (!is_tkq(data, size)) fail("not a .tkq file (bad magic)");
  const uint16_t major = load_at<uint16_t>(b + 8), minor = load_at<uint16_t>(b + 10);
  if (major != kTkqVersionMajor) {
    fail("format version " + std::to_string(major) + "." + std::to_string(minor) + " is not supported (this reader reads " +
         std::to_string(kTkqVersionMajor) + ".x)");
  }
  if (load_at<uint32_t>(b + tkq::kHeaderCrcOffset) != stats::crc32(b, tkq::kHeaderCrcOffset)) {
    fail("header checksum mismatch (corrupt header)");
  }
  if (load_at<uint32_t>(b + 12) != tkq::kHeaderSize) fail("header size " + std::to_string(load_at<uint32_t>(b + 12)) + " is not 64");
  const uint64_t file_size = load_at<uint64_t>(b + 16);
  if (file_size != size) {
    fail("header says " + std::to_string(file_size) + " bytes but the file has " + std::to_string(size) + " (truncated or padded)");
  }
  const uint8_t program_flags = b[tkq::kProgramFlagsOffset];
  if ((program_flags & ~tkq::kProgramStreamOnly) != 0) {
    fail("program flags byte " + std::to_string(program_flags) + " sets a bit this reader does not know (1: stream only)");
  }
  for (size_t i = tkq::kProgramFlagsOffset + 1; i < tkq::kHeaderCrcOffset; ++i) {
    if (b[i] != 0) fail("reserved header byte " + std::to_string(i) + " is not zero");
  }
  if (load_at<uint32_t>(b + 36) != stats::crc32(b + tkq::kHeaderSize, size - tkq::kHeaderSize)) {
    fail("payload checksum mismatch (corrupt or modified file)");
  }
  const uint64_t table_at = load_at<uint64_t>(b + 24);
  const uint32_t n_sections = load_at<uint32_t>(b + 32);
  if (table_at < tkq::kHeaderSize || table_at > size ||
      n_sections > (size - table_at) / tkq::kSectionEntrySize) {
    fail("section table (offset " + std::to_string(table_at) + ", " + std::to_string(n_sections) +
         " entries) lies outside the file");
  }
  Section program_section, data_section;
  for (uint32_t s = 0; s < n_sections; ++s) {
    const uint8_t* e = b + table_at + s * tkq::kSectionEntrySize;
    const uint32_t kind = load_at<uint32_t>(e);
    const uint64_t off = load_at<uint64_t>(e + 8), len = load_at<uint64_t>(e + 16);
    const std::string name = "section " + std::to_string(s) + " (kind " + std::to_string(kind) + ")";
    if (off % tkq::kAlign != 0) fail(name + ": offset " + std::to_string(off) + " is not 64-byte aligned");
    if (off < table_at + n_sections * tkq::kSectionEntrySize || off > size || len > size - off) {
      fail(name + ": bytes [" + std::to_string(off) + ", +" + std::to_string(len) + ") lie outside the file's payload");
    }
    Section* slot = kind == tkq::kSectionProgram ? &program_section : kind == tkq::kSectionData ? &data_section : nullptr;
    if (slot == nullptr) continue;  // a section a later minor version added
    if (slot->present) fail(name + ": appears twice");
    *slot = {off, len, true};
  }
  if (!program_section.present) fail("no program section");
  if (!data_section.present) fail("no data section");

  SectionReader r(b + program_section.offset, program_section.size, source);
  const uint8_t* blob = b + data_section.offset;
  tfl::Program p;
  p.name = r.string("program name");
  p.source_format = r.string("source format");
  p.stream_only = (program_flags & tkq::kProgramStreamOnly) != 0;
  // A tensor record takes at least 44 bytes, an op at least 20 + the options block.
  const uint32_t n_tensors = r.count(44, "tensor count");
  p.tensors.resize(n_tensors);
  for (uint32_t t = 0; t < n_tensors; ++t) read_tensor(r, t, p.tensors[t], blob, data_section);
  const auto check_index = [&](int i, bool optional, const std::string& where) {
    if ((optional && i == -1) || (i >= 0 && static_cast<uint32_t>(i) < n_tensors)) return;
    r.fail(where + ": tensor index " + std::to_string(i) + " out of range (" + std::to_string(n_tensors) + " tensors)");
  };
  const uint32_t n_ops = r.count(24, "op count");
  p.ops.resize(n_ops);
  for (uint32_t k = 0; k < n_ops; ++k) {
    auto& op = p.ops[k];
    const uint16_t code = r.get<uint16_t>("op code");
    const uint8_t precision = r.get<uint8_t>("op precision");
    r.skip(1, "op reserved byte");
    op.label = r.string("op label");
    const std::string where = "op " + std::to_string(k) + " '" + op.label + "'";
    if (!tkq::stores_op_code(code)) {
      r.fail(where + ": op code " + std::to_string(code) +
             (code <= tkq::kLastOpCode ? " (" + std::string(tfl::op_name(static_cast<tfl::OpCode>(code))) + ") is not stored in .tkq files"
                                       : " is not defined"));
    }
    op.code = static_cast<tfl::OpCode>(code);
    if (precision > static_cast<uint8_t>(tfl::Precision::Int8)) {
      r.fail(where + ": precision " + std::to_string(precision) + " is not defined");
    }
    op.precision = static_cast<tfl::Precision>(precision);
    op.inputs = r.indices("op inputs");
    op.outputs = r.indices("op outputs");
    op.intermediates = r.indices("op intermediates");
    for (int i : op.inputs) check_index(i, true, where + " input");
    for (int i : op.outputs) check_index(i, false, where + " output");
    for (int i : op.intermediates) check_index(i, false, where + " intermediate");
    op.options = read_options(r, where, source);
  }
  p.inputs = r.indices("program inputs");
  p.outputs = r.indices("program outputs");
  for (int i : p.inputs) check_index(i, false, "program input");
  for (int i : p.outputs) check_index(i, false, "program output");
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " unexpected bytes after the program record");
  try {
    tfl::validate(p);  // operand counts and the rest of the program's structure
  } catch (const Error& e) {
    fail(e.what());
  }
  return p;
}

tfl::Program load_tkq_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error("cannot read '" + path + "'");
  return load_tkq(bytes.data(), bytes.size(), path);
}

}  // namespace tickinfer::formats
