// The .tkq model file: a round trip keeps every field of a Program, the bytes follow
// docs/tkq-format.md (checked against offsets written out by hand from the document), and
// hostile files (truncated, corrupted, crafted with valid checksums) give tickinfer::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "formats/tkq/tkq_file.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace {

using tfl::DType;
using tfl::OpCode;

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A small int8 FC program with every kind of field set: per-axis and per-tensor quantization,
// a variable tensor, an optional input left out, an intermediate, options with new_shape.
tfl::Program sample_program() {
  tfl::Program p;
  p.name = "sample";
  p.source_format = "tickinfer";
  auto add = [&](std::string name, DType type, tfl::Shape shape) {
    tfl::Tensor t;
    t.name = std::move(name);
    t.type = type;
    t.shape = std::move(shape);
    p.tensors.push_back(std::move(t));
    return static_cast<int>(p.tensors.size() - 1);
  };
  const int x = add("x", DType::F32, {1, 3});
  const int xq = add("x_q", DType::I8, {1, 3});
  p.tensors[xq].quant = {{0.05f}, {-3}, 0};
  const int w = add("w", DType::I8, {2, 3});
  p.tensors[w].data = bytes_of(std::vector<int8_t>{1, -127, 5, 127, 0, -2});
  p.tensors[w].quant = {{0.01f, 0.02f}, {0, 0}, 0};
  const int b = add("b", DType::I32, {2});
  p.tensors[b].data = bytes_of(std::vector<int32_t>{100, -7});
  const int y = add("y", DType::I8, {1, 2});
  p.tensors[y].quant = {{0.1f}, {4}, 0};
  const int state = add("state", DType::I16, {1, 2});
  p.tensors[state].is_variable = true;
  const int inter = add("gate_scale", DType::I16, {});
  p.tensors[inter].quant = {{1.0f / 4096}, {0}, 0};
  const int out = add("out", DType::F32, {1, 2});

  tfl::Op q;
  q.code = OpCode::Quantize;
  q.inputs = {x};
  q.outputs = {xq};
  q.label = "dense";
  q.precision = tfl::Precision::Int8;
  tfl::Op fc;
  fc.code = OpCode::FullyConnected;
  fc.inputs = {xq, w, b};
  fc.outputs = {y};
  fc.intermediates = {inter, state};
  fc.label = "dense";
  fc.precision = tfl::Precision::Int8;
  fc.options.activation = tfl::FusedActivation::Relu6;
  fc.options.keep_num_dims = true;
  fc.options.cell_clip = 2.5f;
  fc.options.shrink_axis_mask = 5;
  fc.options.new_shape = {1, -1};
  fc.options.padding = tfl::PaddingMode::Same;
  tfl::Op dq;
  dq.code = OpCode::Dequantize;
  dq.inputs = {y};
  dq.outputs = {out};
  dq.label = "dense";
  p.ops = {q, fc, dq};
  p.inputs = {x};
  p.outputs = {out};
  return p;
}

void expect_same(const tfl::Program& a, const tfl::Program& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source_format, b.source_format);
  EXPECT_EQ(a.stream_only, b.stream_only);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    SCOPED_TRACE("tensor " + std::to_string(i));
    const auto &x = a.tensors[i], &y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.quant.scale, y.quant.scale);
    EXPECT_EQ(x.quant.zero_point, y.quant.zero_point);
    EXPECT_EQ(x.quant.axis, y.quant.axis);
    EXPECT_EQ(x.data, y.data);
    EXPECT_EQ(x.is_variable, y.is_variable);
  }
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i));
    const auto &x = a.ops[i], &y = b.ops[i];
    EXPECT_EQ(x.code, y.code);
    EXPECT_EQ(x.precision, y.precision);
    EXPECT_EQ(x.label, y.label);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.intermediates, y.intermediates);
    EXPECT_EQ(x.options.activation, y.options.activation);
    EXPECT_EQ(x.options.padding, y.options.padding);
    EXPECT_EQ(x.options.keep_num_dims, y.options.keep_num_dims);
    EXPECT_EQ(x.options.cell_clip, y.options.cell_clip);
    EXPECT_EQ(x.options.beta, y.options.beta);
    EXPECT_EQ(x.options.alpha, y.options.alpha);
    EXPECT_EQ(x.options.shrink_axis_mask, y.options.shrink_axis_mask);
    EXPECT_EQ(x.options.new_shape, y.options.new_shape);
    EXPECT_EQ(x.options.pot_scale_int16, y.options.pot_scale_int16);
    EXPECT_EQ(x.options.reset_after, y.options.reset_after);
    EXPECT_EQ(x.options.own_arithmetic, y.options.own_arithmetic);
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
}

template <class T>
T read_le(const std::vector<uint8_t>& f, size_t at) {
  T v;
  std::memcpy(&v, f.data() + at, sizeof(T));
  return v;
}
template <class T>
void write_le(std::vector<uint8_t>& f, size_t at, T v) {
  std::memcpy(f.data() + at, &v, sizeof(T));
}

// Recomputes both checksums as docs/tkq-format.md defines them, so a crafted file reaches the
// structural checks behind them.
void reseal(std::vector<uint8_t>& f) {
  write_le<uint32_t>(f, 36, stats::crc32(f.data() + 64, f.size() - 64));
  write_le<uint32_t>(f, 60, stats::crc32(f.data(), 60));
}

size_t find(const std::vector<uint8_t>& f, const std::string& s) {
  const auto it = std::search(f.begin(), f.end(), s.begin(), s.end());
  EXPECT_NE(it, f.end()) << s;
  return static_cast<size_t>(it - f.begin());
}

void expect_error(const std::vector<uint8_t>& f, const std::string& fragment) {
  try {
    load_tkq(f.data(), f.size(), "crafted.tkq");
    FAIL() << "no error; expected one containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crafted.tkq"), std::string::npos) << e.what();
  }
}

TEST(TkqFile, RoundTripKeepsEveryField) {
  const auto p = sample_program();
  const auto f = serialize_tkq(p);
  expect_same(p, load_tkq(f.data(), f.size()));
}

TEST(TkqFile, ProgramWithoutOpsRoundTrips) {
  tfl::Program p;
  p.tensors.resize(1);
  p.tensors[0].shape = {1, 4};
  p.inputs = p.outputs = {0};
  const auto f = serialize_tkq(p);
  expect_same(p, load_tkq(f.data(), f.size()));
}

// The structural rules of tfl::validate apply to loaded files too.
TEST(TkqFile, ProgramRulesAreChecked) {
  tfl::Program p;
  const auto f = serialize_tkq(p);
  expect_error(f, "program has no inputs");
  auto q = sample_program();
  q.ops[1].inputs = {1};  // FULLY_CONNECTED needs its filter
  const auto g = serialize_tkq(q);
  expect_error(g, "has 1 inputs");
}

// Offsets from docs/tkq-format.md: header fields, the section table at 64, sections and every
// tensor's data on 64-byte boundaries.
TEST(TkqFile, LayoutMatchesTheDocument) {
  const auto f = serialize_tkq(sample_program());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.data()), 8), std::string("TICKTKQ\0", 8));
  EXPECT_EQ(read_le<uint16_t>(f, 8), 1);
  EXPECT_EQ(read_le<uint16_t>(f, 10), 3);  // 1.1: op codes up to SEQUENCE_GRU; 1.2: the GRU flags byte; 1.3: program flags
  EXPECT_EQ(f[40], 0);                       // program flags: none (a 1.2 reader reads the file)
  EXPECT_EQ(read_le<uint32_t>(f, 12), 64u);
  EXPECT_EQ(read_le<uint64_t>(f, 16), f.size());
  EXPECT_EQ(read_le<uint64_t>(f, 24), 64u);
  EXPECT_EQ(read_le<uint32_t>(f, 32), 2u);
  EXPECT_EQ(read_le<uint32_t>(f, 36), stats::crc32(f.data() + 64, f.size() - 64));
  EXPECT_EQ(read_le<uint32_t>(f, 60), stats::crc32(f.data(), 60));
  EXPECT_EQ(read_le<uint32_t>(f, 64), 1u);  // program section
  EXPECT_EQ(read_le<uint32_t>(f, 96), 2u);  // data section
  const auto data_at = read_le<uint64_t>(f, 96 + 8);
  EXPECT_EQ(data_at % 64, 0u);
  EXPECT_EQ(read_le<uint64_t>(f, 64 + 8) % 64, 0u);
  // Weights first (64-aligned offset 0), then the bias at the next 64-byte boundary.
  EXPECT_EQ(static_cast<int8_t>(f[data_at + 1]), -127);
  EXPECT_EQ(read_le<int32_t>(f, data_at + 64), 100);
  EXPECT_EQ(read_le<int32_t>(f, data_at + 68), -7);
  EXPECT_EQ(read_le<uint64_t>(f, 96 + 16), 64u + 8u);
}

// A program of one RELU labelled "R" over [1, 4].
tfl::Program one_relu() {
  tfl::Program p;
  p.tensors.resize(2);
  p.tensors[0].shape = p.tensors[1].shape = {1, 4};
  tfl::Op relu;
  relu.code = OpCode::Relu;
  relu.inputs = {0};
  relu.outputs = {1};
  relu.label = "R";
  p.ops = {relu};
  p.inputs = {0};
  p.outputs = {1};
  return p;
}

// Where one_relu()'s op record holds its options size: after the code, precision, reserved byte,
// label "R" and three index lists.
size_t options_size_at(const std::vector<uint8_t>& f) {
  return find(f, std::string("\x0a\x00\x00\x00\x01\x00\x00\x00R", 9)) + 9 + 8 + 8 + 4;
}

// Options byte 11 holds the GRU flags (docs/tkq-format.md): bit 0 reset_before (1.1, where the
// byte was 0 or 1, so 1.1 files read the same), bit 1 own arithmetic (1.2); any other bit is
// refused by name, as a 1.1 reader refuses bit 1.
TEST(TkqFile, GruFlagsByteHoldsResetBeforeAndOwnArithmetic) {
  tfl::Program p = one_relu();  // any op carries the block; only SEQUENCE_GRU reads these two
  const size_t at = options_size_at(serialize_tkq(p));
  for (const bool reset_after : {true, false}) {
    for (const bool own : {false, true}) {
      p.ops[0].options.reset_after = reset_after;
      p.ops[0].options.own_arithmetic = own;
      const auto f = serialize_tkq(p);
      const uint8_t want = static_cast<uint8_t>((reset_after ? 0 : 1) | (own ? 2 : 0));
      if (want == 0) {
        EXPECT_EQ(read_le<uint32_t>(f, at), 0u);  // the defaults: nothing stored
      } else {
        ASSERT_EQ(read_le<uint32_t>(f, at), 12u);  // the block ends with byte 11
        EXPECT_EQ(f[at + 4 + 11], want);
      }
      const auto q = load_tkq(f.data(), f.size());
      EXPECT_EQ(q.ops[0].options.reset_after, reset_after);
      EXPECT_EQ(q.ops[0].options.own_arithmetic, own);
    }
  }
  auto f = serialize_tkq(p);  // reset_before and own: byte 3
  for (const uint8_t bad : {4, 7, 128}) {
    auto g = f;
    g[at + 4 + 11] = bad;
    reseal(g);
    expect_error(g, "GRU flags byte " + std::to_string(bad) + " sets bits other than reset_before (1) and own arithmetic (2)");
  }
}

// Header byte 40 holds the program flags (1.3): bit 0 stream only (`quantize --stream`), which
// survives the round trip; a file without it reads as before, and any other bit is refused by
// name (as a 1.2 reader refuses bit 0: "reserved header byte 40 is not zero").
TEST(TkqFile, ProgramFlagsByteHoldsStreamOnly) {
  tfl::Program p = one_relu();
  for (const bool stream_only : {false, true}) {
    p.stream_only = stream_only;
    const auto f = serialize_tkq(p);
    EXPECT_EQ(f[40], stream_only ? 1 : 0);
    EXPECT_EQ(load_tkq(f.data(), f.size()).stream_only, stream_only);
  }
  const auto f = serialize_tkq(p);
  for (const uint8_t bad : {2, 3, 128}) {
    auto g = f;
    g[40] = bad;
    reseal(g);
    expect_error(g, "program flags byte " + std::to_string(bad) + " sets a bit this reader does not know");
  }
  auto g = f;
  g[41] = 1;
  reseal(g);
  expect_error(g, "reserved header byte 41 is not zero");
}

// Options equal to the defaults are not stored; a block may stop anywhere, even mid-field, and
// the rest reads as the defaults.
TEST(TkqFile, OptionsBlocksStoreOnlyWhatDiffersFromTheDefaults) {
  tfl::Program p = one_relu();
  auto f = serialize_tkq(p);
  const size_t at = options_size_at(f);
  EXPECT_EQ(read_le<uint32_t>(f, at), 0u);
  const auto q = load_tkq(f.data(), f.size());
  EXPECT_EQ(q.ops[0].options.stride_w, 1);
  EXPECT_TRUE(q.ops[0].options.pot_scale_int16);
  EXPECT_EQ(q.ops[0].options.beta, 1.0f);
  p.ops[0].options.alpha = 0.5f;  // bytes 52..55: the block stops after them
  f = serialize_tkq(p);
  EXPECT_EQ(read_le<uint32_t>(f, at), 56u);
  EXPECT_EQ(load_tkq(f.data(), f.size()).ops[0].options.alpha, 0.5f);
}

TEST(TkqFile, EveryTruncationIsAnError) {
  const auto f = serialize_tkq(sample_program());
  for (size_t n = 0; n < f.size(); ++n) {
    EXPECT_THROW(load_tkq(f.data(), n, "cut.tkq"), Error) << "length " << n;
  }
}

TEST(TkqFile, AnyFlippedByteFailsAChecksum) {
  const auto good = serialize_tkq(sample_program());
  for (size_t i = 0; i < good.size(); ++i) {
    auto f = good;
    f[i] ^= 0x41;
    EXPECT_THROW(load_tkq(f.data(), f.size()), Error) << "byte " << i;
  }
}

// Corruption behind valid checksums: every byte of the program section set to several values;
// the reader must either accept the result or throw Error, never crash or over-allocate.
TEST(TkqFile, CraftedProgramSectionsNeverCrash) {
  const auto good = serialize_tkq(sample_program());
  const size_t start = read_le<uint64_t>(good, 64 + 8), len = read_le<uint64_t>(good, 64 + 16);
  int errors = 0;
  for (size_t i = start; i < start + len; ++i) {
    for (uint8_t v : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      auto f = good;
      if (f[i] == v) continue;
      f[i] = v;
      reseal(f);
      try {
        load_tkq(f.data(), f.size());
      } catch (const Error&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(TkqFile, BadMagicAndVersion) {
  auto f = serialize_tkq(sample_program());
  auto g = f;
  g[0] = 'X';
  expect_error(g, "bad magic");
  g = f;
  write_le<uint16_t>(g, 8, 2);
  reseal(g);
  expect_error(g, "format version 2.3 is not supported");
  std::vector<uint8_t> tiny(10, 0);
  expect_error(tiny, "shorter than the header");
}

TEST(TkqFile, ChecksumsAreChecked) {
  auto f = serialize_tkq(sample_program());
  auto g = f;
  g[g.size() - 1] ^= 1;
  expect_error(g, "payload checksum mismatch");
  g = f;
  g[20] ^= 1;
  expect_error(g, "header checksum mismatch");
}

TEST(TkqFile, FileSizeMustMatchTheHeader) {
  auto f = serialize_tkq(sample_program());
  f.push_back(0);
  expect_error(f, "header says");
}

TEST(TkqFile, SectionOutsideTheFile) {
  auto f = serialize_tkq(sample_program());
  write_le<uint64_t>(f, 96 + 16, 1u << 30);  // data section size
  reseal(f);
  expect_error(f, "lie outside the file");
  f = serialize_tkq(sample_program());
  write_le<uint32_t>(f, 32, 0x10000000u);  // section count
  reseal(f);
  expect_error(f, "section table");
}

// Version 1.1 stores op codes up to BATCH_MATMUL (46), REVERSE_V2 (59) and SEQUENCE_GRU (60); the
// converter's control flow and variables between are refused by name, one past the end by number.
TEST(TkqFile, OpCodePastSequenceGruIsRefused) {
  static_assert(static_cast<int>(tfl::OpCode::SequenceGru) == 60, "docs/tkq-format.md lists 60 as SEQUENCE_GRU");
  auto f = serialize_tkq(sample_program());
  const size_t code = find(f, std::string("\x00\x00\x03\x00\x05\x00\x00\x00", 8) + "dense");
  write_le<uint16_t>(f, code, 60);
  reseal(f);
  expect_error(f, "op 1 (SEQUENCE_GRU 'dense'): has 3 inputs; it takes 6");  // a defined code, validated as one
  write_le<uint16_t>(f, code, 51);
  reseal(f);
  expect_error(f, "op code 51 (ASSIGN_VARIABLE) is not stored in .tkq files");
  write_le<uint16_t>(f, code, 61);
  reseal(f);
  expect_error(f, "op code 61 is not defined");
}

TEST(TkqFile, OpInputIndexOutOfRange) {
  auto f = serialize_tkq(sample_program());
  // The FC op: code, precision, reserved, label "dense", then the input count and indices.
  const size_t label = find(f, std::string("\x00\x00\x03\x00\x05\x00\x00\x00", 8) + "dense");
  const size_t inputs = label + 8 + 5;
  ASSERT_EQ(read_le<uint32_t>(f, inputs), 3u);
  write_le<int32_t>(f, inputs + 4, 99);
  reseal(f);
  expect_error(f, "tensor index 99 out of range");
  write_le<int32_t>(f, inputs + 4, 1);
  write_le<int32_t>(f, inputs + 4 + 8, -1);  // -1 is fine for an input (the bias)...
  reseal(f);
  EXPECT_EQ(load_tkq(f.data(), f.size()).ops[1].inputs[2], -1);
  write_le<int32_t>(f, inputs + 4 + 12 + 4, -1);  // ...but not for an output
  reseal(f);
  expect_error(f, "output: tensor index -1 out of range");
}

TEST(TkqFile, DataSizeMustMatchShape) {
  auto f = serialize_tkq(sample_program());
  // Tensor "w": name, type, flags, reserved, rank 2 [2, 3], 2 scales, zero points all zero (so
  // none stored), axis, data offset, data size.
  const size_t rec = find(f, std::string("\x01\x00\x00\x00", 4) + "w") + 5;
  EXPECT_EQ(f[rec + 1], 2 | 4);  // has data, zero points all zero
  const size_t size_at = rec + 4 + 4 + 8 + 4 + 8 + 4 + 4 + 8;
  ASSERT_EQ(read_le<uint64_t>(f, size_at), 6u);
  write_le<uint64_t>(f, size_at, 7);
  reseal(f);
  expect_error(f, "data 7 bytes, its shape and type need 6");
  write_le<uint64_t>(f, size_at, 6);
  write_le<int32_t>(f, rec + 8, 1 << 30);  // first dimension
  reseal(f);
  expect_error(f, "tensor 2 'w'");
}

TEST(TkqFile, HugeCountsAreRefusedBeforeAllocating) {
  auto f = serialize_tkq(sample_program());
  const size_t program_at = read_le<uint64_t>(f, 64 + 8);
  // name "sample" (4 + 6), source "tickinfer" (4 + 9), then the tensor count.
  const size_t count_at = program_at + 10 + 13;
  ASSERT_EQ(read_le<uint32_t>(f, count_at), 8u);
  write_le<uint32_t>(f, count_at, 0xFFFFFFFFu);
  reseal(f);
  expect_error(f, "tensor count: count 4294967295 exceeds");
}

TEST(TkqFile, SerializeRefusesUnrepresentablePrograms) {
  auto p = sample_program();
  p.tensors[2].data.pop_back();
  EXPECT_THROW(serialize_tkq(p), Error);
  p = sample_program();
  p.ops[1].outputs = {42};
  EXPECT_THROW(serialize_tkq(p), Error);
}

}  // namespace
}  // namespace tickinfer::formats
