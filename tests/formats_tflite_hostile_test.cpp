// The TFLite loader refuses broken and unsupported files with a tickinfer::Error that names the
// tensor or op and the problem, and never crashes: one broken thing at a time in an otherwise
// valid file (tests/support/tflite_model_builder.hpp), then truncations and byte flips of a real
// converter output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_model_builder.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

using testing::MiniModel;
using testing::MiniOp;

tfl::Program load(const std::vector<uint8_t>& bytes) { return formats::load_tflite(bytes.data(), bytes.size(), "m.tflite"); }

// The Error message for a file that must be refused ("" and a test failure when it loads).
std::string refusal(const MiniModel& m) {
  try {
    load(m.serialize());
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the file loaded";
  return "";
}

#define EXPECT_REFUSED(model, ...)                                                  \
  do {                                                                              \
    const std::string msg = refusal(model);                                         \
    EXPECT_EQ(msg.rfind("m.tflite: ", 0), 0u) << msg;                               \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(msg.find(part), std::string::npos) << msg; \
  } while (0)

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(TfliteHostile, TheUnbrokenMiniModelLoads) {
  const tfl::Program p = load(MiniModel::fully_connected().serialize());
  ASSERT_EQ(p.tensors.size(), 4u);
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].code, tfl::OpCode::FullyConnected);
  EXPECT_EQ(p.ops[0].inputs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.ops[0].label, "y");
  EXPECT_EQ(p.tensors[1].data.size(), 32u);
  EXPECT_EQ(p.tensors[1].shape, (tfl::Shape{2, 4}));
  EXPECT_FALSE(p.tensors[0].is_constant());
  EXPECT_EQ(p.inputs, (std::vector<int>{0}));
  EXPECT_EQ(p.outputs, (std::vector<int>{3}));
  EXPECT_EQ(p.name, "mini");
  EXPECT_EQ(p.source_format, "tflite");
}

TEST(TfliteHostile, IdentifierAndSize) {
  auto bytes = MiniModel::fully_connected().serialize();
  EXPECT_TRUE(formats::is_tflite(bytes.data(), bytes.size()));
  bytes[7] = '2';
  EXPECT_FALSE(formats::is_tflite(bytes.data(), bytes.size()));
  try {
    load(bytes);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TFL3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(formats::load_tflite(bytes.data(), 3, "m.tflite"), Error);
  EXPECT_THROW(formats::load_tflite(nullptr, 0, "m.tflite"), Error);
}

TEST(TfliteHostile, SchemaVersion) {
  auto m = MiniModel::fully_connected();
  m.version = 2;
  EXPECT_REFUSED(m, "schema version 2");
}

TEST(TfliteHostile, BufferIndexOutOfRange) {
  auto m = MiniModel::fully_connected();
  m.tensors[1].buffer = 7;
  EXPECT_REFUSED(m, "tensor 1 'w'", "buffer index 7 is out of range");
}

TEST(TfliteHostile, DataSizeDoesNotMatchShape) {
  auto m = MiniModel::fully_connected();
  m.buffers[1].data.resize(28);
  EXPECT_REFUSED(m, "tensor 1 'w'", "28 bytes", "need 32");
}

TEST(TfliteHostile, SentinelBufferHoldsData) {
  auto m = MiniModel::fully_connected();
  m.buffers[0].data = {1, 2, 3, 4};
  EXPECT_REFUSED(m, "buffer 0");
}

TEST(TfliteHostile, HugeShape) {
  auto m = MiniModel::fully_connected();
  m.tensors[3].shape = {1, 2147483647, 2147483647};
  EXPECT_REFUSED(m, "tensor 3 'y'", "too large");
  m.tensors[3].shape = std::vector<int32_t>(40, 1);
  EXPECT_REFUSED(m, "tensor 3 'y'", "rank 40");
}

TEST(TfliteHostile, NegativeDimension) {
  auto m = MiniModel::fully_connected();
  m.tensors[0].shape = {-1, 4};
  EXPECT_REFUSED(m, "tensor 0 'x'", "negative");
}

TEST(TfliteHostile, OpTensorIndexOutOfRange) {
  auto m = MiniModel::fully_connected();
  m.ops[0].inputs = {0, 9, 2};
  EXPECT_REFUSED(m, "op 0 (FULLY_CONNECTED) input 1 refers to tensor 9");
  m = MiniModel::fully_connected();
  m.ops[0].outputs = {-1};
  EXPECT_REFUSED(m, "op 0 (FULLY_CONNECTED) output 0 refers to tensor -1");
  m = MiniModel::fully_connected();
  m.ops[0].intermediates = {4};
  EXPECT_REFUSED(m, "intermediate 0 refers to tensor 4");
}

TEST(TfliteHostile, OptionalInputsOnlyWhereTheOpAllowsThem) {
  auto m = MiniModel::fully_connected();
  m.ops[0].inputs = {0, 1, -1};  // FULLY_CONNECTED without bias
  EXPECT_EQ(load(m.serialize()).ops[0].inputs[2], -1);
  m.ops[0].inputs = {0, -1, 2};
  EXPECT_REFUSED(m, "FULLY_CONNECTED 'y'", "input 1", "required");
}

TEST(TfliteHostile, OperandCountsAndConstantOutputs) {
  auto m = MiniModel::fully_connected();
  m.ops[0].inputs = {0};
  EXPECT_REFUSED(m, "FULLY_CONNECTED 'y'", "has 1 inputs");
  m = MiniModel::fully_connected();
  m.ops[0].outputs = {1};
  EXPECT_REFUSED(m, "FULLY_CONNECTED 'w'", "constant");
  m = MiniModel::fully_connected();
  m.inputs = {9};
  EXPECT_REFUSED(m, "subgraph input 0 refers to tensor 9");
}

TEST(TfliteHostile, OpcodeIndexOutOfRange) {
  auto m = MiniModel::fully_connected();
  m.ops[0].opcode_index = 5;
  EXPECT_REFUSED(m, "op 0: opcode_index 5 is out of range");
}

TEST(TfliteHostile, OpIsTheLargerOfTheTwoCodeFields) {
  auto m = MiniModel::fully_connected();
  m.ops[0].builtin = 0;  // an old file: only deprecated_builtin_code is set
  m.ops[0].deprecated_code = 9;
  EXPECT_EQ(load(m.serialize()).ops[0].code, tfl::OpCode::FullyConnected);
  // A code above 127: the byte field holds 127 (PLACEHOLDER_FOR_GREATER_OP_CODES).
  m = MiniModel::fully_connected();
  m.ops[0] = MiniOp{150, 127, "", -1, {0}, {3}, {}, {}};  // GELU
  m.tensors[3].shape = {1, 4};
  EXPECT_EQ(load(m.serialize()).ops[0].code, tfl::OpCode::Gelu);
}

TEST(TfliteHostile, UnsupportedOpsAreNamed) {
  auto m = MiniModel::fully_connected();
  m.ops[0].builtin = 119;
  m.ops[0].options = nullptr;
  EXPECT_REFUSED(m, "op 0 (WHILE", "WhileOptions missing");
  m.ops[0].builtin = 118;
  EXPECT_REFUSED(m, "op 0: IF", "control flow", "not supported");
  m.ops[0].builtin = 27;
  EXPECT_REFUSED(m, "op 0: SVDF is not supported");
  m.ops[0].builtin = 400;
  EXPECT_REFUSED(m, "op 0: builtin op 400 is not supported");
  m.ops[0].builtin = 124;
  EXPECT_REFUSED(m, "op 0 (DENSIFY)", "expects one input and one output");  // a constant one folds (formats_pruned_test)
  m.ops[0].builtin = 32;
  m.ops[0].custom_code = "MyOp";
  EXPECT_REFUSED(m, "custom op 'MyOp'");
}

TEST(TfliteHostile, UnsupportedOptionsAreNamed) {
  auto m = MiniModel::fully_connected();
  m.ops[0].options = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tflite::BuiltinOptions::FullyConnectedOptions,
                          tflite::CreateFullyConnectedOptions(b, 0, 1).Union());
  };
  EXPECT_REFUSED(m, "op 0 (FULLY_CONNECTED 'y')", "weights_format SHUFFLED4x16INT8");
  m.ops[0].options = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(tflite::BuiltinOptions::FullyConnectedOptions,
                          tflite::CreateFullyConnectedOptions(b, 9).Union());
  };
  EXPECT_REFUSED(m, "fused_activation_function 9");
  m.ops[0] = MiniOp{44, -1, "", -1, {0}, {3}, {}, [](flatbuffers::FlatBufferBuilder& b) {
                      return std::make_pair(tflite::BuiltinOptions::UnidirectionalSequenceLSTMOptions,
                                            tflite::CreateUnidirectionalSequenceLSTMOptions(b, 4, 0, 0, false, false, true).Union());
                    }};
  EXPECT_REFUSED(m, "UNIDIRECTIONAL_SEQUENCE_LSTM", "diagonal_recurrent_tensors");
  m.ops[0] = MiniOp{3, -1, "", -1, {0, 1}, {3}, {}, [](flatbuffers::FlatBufferBuilder& b) {
                      return std::make_pair(tflite::BuiltinOptions::Conv2DOptions,
                                            tflite::CreateConv2DOptions(b, 1, 0, 1).Union());
                    }};
  EXPECT_REFUSED(m, "CONV_2D", "stride_w 0");
  m.ops[0] = MiniOp{36, -1, "", -1, {0, 1}, {3}, {}, [](flatbuffers::FlatBufferBuilder& b) {
                      return std::make_pair(tflite::BuiltinOptions::GatherOptions, tflite::CreateGatherOptions(b, 0, 1).Union());
                    }};
  EXPECT_REFUSED(m, "GATHER", "batch_dims=1");
}

TEST(TfliteHostile, DataOutsideTheFlatbuffer) {
  auto m = MiniModel::fully_connected();
  m.buffers[1] = {{}, 4096, 32};
  EXPECT_REFUSED(m, "tensor 1 'w'", "outside the flatbuffer");
  m = MiniModel::fully_connected();
  m.tensors[1].external_buffer = 1;
  EXPECT_REFUSED(m, "tensor 1 'w'", "external buffer");
}

TEST(TfliteHostile, SparseTensor) {
  auto m = MiniModel::fully_connected();
  m.tensors[1].sparse = true;  // an empty SparsityParameters: no levels described
  EXPECT_REFUSED(m, "tensor 1 'w'", "sparsity: no dim_metadata");
}

TEST(TfliteHostile, TensorTypes) {
  auto m = MiniModel::fully_connected();
  m.tensors[3].type = 5;
  EXPECT_REFUSED(m, "tensor 3 'y'", "type STRING is not supported");
  m.tensors[3].type = 100;
  EXPECT_REFUSED(m, "tensor 3 'y'", "type 100 is not supported");
}

TEST(TfliteHostile, QuantizationParameters) {
  auto m = MiniModel::fully_connected();
  m.tensors[1].scale = {0.1f, 0.2f};
  m.tensors[1].zero_point = {0};
  EXPECT_REFUSED(m, "tensor 1 'w'", "2 scales but 1 zero points");
  m.tensors[1].scale = {0.1f, 0.2f, 0.3f};
  m.tensors[1].zero_point = {0, 0, 0};
  EXPECT_REFUSED(m, "tensor 1 'w'", "per-axis");
  m.tensors[1].scale = {0.1f, 0.2f};
  m.tensors[1].zero_point = {0, 0};
  m.tensors[1].quantized_dimension = 0;  // w is [2, 4]: two scales on dim 0 fit
  EXPECT_EQ(load(m.serialize()).tensors[1].quant.scale.size(), 2u);
  m.tensors[1].quantized_dimension = 5;
  EXPECT_REFUSED(m, "tensor 1 'w'", "quantized dimension 5");
  m.tensors[1].quantized_dimension = 0;
  m.tensors[1].scale = {0.1f, -1.0f};
  EXPECT_REFUSED(m, "tensor 1 'w'", "negative or not finite");
  m.tensors[1].scale = {0.1f};
  m.tensors[1].zero_point = {3};
  m.tensors[1].details = tflite::QuantizationDetails::CustomQuantization;
  EXPECT_REFUSED(m, "tensor 1 'w'", "custom, blockwise or multi-axis");
}

TEST(TfliteHostile, MisalignedInputIsCopiedNotMisread) {
  const auto bytes = MiniModel::fully_connected().serialize();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  const tfl::Program p = formats::load_tflite(shifted.data() + 1, bytes.size(), "m.tflite");
  ASSERT_EQ(p.tensors.size(), 4u);
  float w0 = 0;
  std::memcpy(&w0, p.tensors[1].data.data(), 4);
  EXPECT_EQ(w0, 1.0f);
}

// A real converter output (int8 mlp_small): every truncation is refused, every single-byte
// corruption either loads or is refused with an Error (never a crash; run under ASan too).
std::vector<uint8_t> real_file() {
  return read_file(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/mlp_small/int8.tflite");
}

TEST(TfliteHostile, EveryTruncationIsRefused) {
  const auto bytes = real_file();
  ASSERT_GT(bytes.size(), 1000u);
  const size_t step = bytes.size() / 997 + 1;
  int refused = 0, tried = 0;
  for (size_t n = 0; n < bytes.size(); n += step) {
    ++tried;
    try {
      formats::load_tflite(bytes.data(), n, "cut.tflite");
      ADD_FAILURE() << "a file cut at " << n << " of " << bytes.size() << " bytes loaded";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("cut.tflite: ", 0), 0u) << e.what();
      ++refused;
    }
  }
  EXPECT_EQ(refused, tried);
}

TEST(TfliteHostile, FlippedBytesLoadOrGiveAnError) {
  const auto bytes = real_file();
  ASSERT_GT(bytes.size(), 1000u);
  std::mt19937 rng(12345);
  int refused = 0, loaded = 0;
  auto attempt = [&](const std::vector<uint8_t>& b) {
    try {
      formats::load_tflite(b.data(), b.size(), "flip.tflite");
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  };
  // Every byte of the first 4 KiB (root, vtables, tables), then random positions.
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4096); ++i) {
    auto b = bytes;
    b[i] ^= 0xFF;
    attempt(b);
  }
  for (int k = 0; k < 2000; ++k) {
    auto b = bytes;
    for (int j = 0; j < 4; ++j) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    attempt(b);
  }
  // Many flips land in weight data and load; flips in offsets and indices must be refused.
  EXPECT_GT(refused, 100) << "loaded " << loaded;
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace tickinfer
