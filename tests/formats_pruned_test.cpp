// Pruned models (tests/fixtures/pruned, made by tools/make_pruned_fixtures.py; `make
// pruned-reference` points $TICKINFER_PRUNED_FIXTURES at a fresh set): tfmot PruneLowMagnitude
// wrappers left in .h5 / .keras / SavedModel files load as the stripped model with a warning,
// stripped files load as they are, and the converter's sparse TFLite tensors decode to the dense
// weights the TFLite interpreter computes with. Malformed sparsity metadata is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/model_file.hpp"
#include "formats/npy.hpp"
#include "formats/tflite/tflite_file.hpp"
#include "kernels/isa_variants.hpp"
#include "support/tflite_model_builder.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

using testing::MiniModel;
using testing::MiniOp;
using testing::MiniSparseDim;
using testing::mini_sparsity;

std::string pruned_dir() {
  const char* env = std::getenv("TICKINFER_PRUNED_FIXTURES");
  return env && *env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pruned";
}

struct PrunedCase {
  std::string name, file, format, inputs, outputs;
  bool unstripped = false, int8 = false;
  double zero_fraction = 0, target = 0;
};

std::vector<PrunedCase> pruned_cases() {
  std::ifstream f(pruned_dir() + "/manifest.json");
  if (!f) return {};
  const nlohmann::json m = nlohmann::json::parse(f);
  std::vector<PrunedCase> out;
  for (const auto& c : m.at("cases")) {
    PrunedCase p;
    p.name = c.at("name");
    p.file = pruned_dir() + "/" + c.at("file").get<std::string>();
    p.format = c.at("format");
    p.inputs = pruned_dir() + "/" + c.at("inputs").at(0).get<std::string>();
    p.outputs = pruned_dir() + "/" + c.at("outputs").at(0).get<std::string>();
    p.unstripped = c.value("unstripped", false);
    p.int8 = c.value("int8", false);
    p.zero_fraction = c.at("zero_fraction");
    p.target = m.at("target_sparsity");
    out.push_back(p);
  }
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(PrunedFixtures, ManifestListsEveryForm) {
  const auto cases = pruned_cases();
  ASSERT_GE(cases.size(), 11u) << "no pruned fixtures in " << pruned_dir();
  int unstripped = 0, tflite_int8 = 0;
  for (const auto& c : cases) {
    unstripped += c.unstripped;
    tflite_int8 += c.int8;
  }
  EXPECT_GE(unstripped, 4);  // .h5, .keras (MLP and LSTM), SavedModel
  EXPECT_GE(tflite_int8, 2);
}

// The wrapped layers come back as plain layers whose prunable weights carry the masks' zeros
// (exactly as many as strip_pruning left), and only unstripped files warn.
TEST(PrunedFixtures, KerasAndSavedModelLoadWithMasksApplied) {
  for (const auto& c : pruned_cases()) {
    if (c.format == "tflite") continue;
    SCOPED_TRACE(c.name);
    Graph g;
    try {
      g = formats::load_model_file(c.file);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    if (c.unstripped) {
      ASSERT_EQ(g.warnings.size(), 1u);
      EXPECT_NE(g.warnings[0].find("PruneLowMagnitude"), std::string::npos) << g.warnings[0];
      EXPECT_NE(g.warnings[0].find("strip_pruning was skipped"), std::string::npos) << g.warnings[0];
    } else {
      EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
    }
    size_t zeros = 0, total = 0, layers = 0;
    for (const Node& n : g.nodes) {
      EXPECT_NE(n.keras_class, "PruneLowMagnitude") << n.name;
      if (n.kind == OpKind::Input) continue;
      ++layers;
      ASSERT_TRUE(n.kind == OpKind::Dense || n.kind == OpKind::LSTM) << n.name << " " << op_name(n.kind);
      for (float v : n.weights.at(0).data) zeros += v == 0.0f;
      total += n.weights.at(0).data.size();
    }
    EXPECT_EQ(layers, c.name.rfind("mlp", 0) == 0 ? 3u : 2u);  // no mask multiply left behind
    const double fraction = static_cast<double>(zeros) / static_cast<double>(total);
    EXPECT_NEAR(fraction, c.zero_fraction, 1e-9);
    EXPECT_NEAR(fraction, c.target, 0.01);
  }
}

double constant_zero_fraction(const tfl::Program& p) {
  size_t zeros = 0, total = 0;
  for (const tfl::Op& op : p.ops) {
    const tfl::Tensor& w = p.tensors[static_cast<size_t>(op.inputs.at(1))];
    const size_t esize = tfl::dtype_size(w.type);
    for (size_t i = 0; i < w.data.size(); i += esize) {
      bool zero = true;
      for (size_t b = 0; b < esize; ++b) zero &= w.data[i + b] == 0;
      zeros += zero;
    }
    total += w.data.size() / esize;
  }
  return static_cast<double>(zeros) / static_cast<double>(total);
}

// Every sparse weight is decoded and every DENSIFY folded: three FULLY_CONNECTED ops on
// constant weights, which the interpreter runs to the TFLite reference kernels' outputs (int8
// bit for bit).
TEST(PrunedFixtures, SparseTfliteMatchesTheTfliteInterpreter) {
  for (const auto& c : pruned_cases()) {
    if (c.format != "tflite") continue;
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> bytes = read_bytes(c.file);
    std::shared_ptr<const tfl::Program> program;
    try {
      program = std::make_shared<const tfl::Program>(formats::load_tflite(bytes.data(), bytes.size(), c.name));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_EQ(program->ops.size(), 3u);
    for (const tfl::Op& op : program->ops) {
      EXPECT_EQ(op.code, tfl::OpCode::FullyConnected);
      EXPECT_TRUE(program->tensors[static_cast<size_t>(op.inputs.at(1))].is_constant());
    }
    const double fraction = constant_zero_fraction(*program);
    // int8 rounding can only add zeros (small kept weights that quantize to 0).
    if (c.int8) {
      EXPECT_GE(fraction, c.zero_fraction - 1e-9);
      EXPECT_NEAR(fraction, c.target, 0.03);
    } else {
      EXPECT_NEAR(fraction, c.zero_fraction, 1e-9);
    }
    tfl::Interpreter interp(program);
    const formats::NpyArray in = formats::read_npy(c.inputs), want = formats::read_npy(c.outputs);
    const size_t n_in = static_cast<size_t>(tfl::element_count(interp.input_tensor(0).shape));
    const size_t n_out = static_cast<size_t>(tfl::element_count(interp.output_tensor(0).shape));
    const size_t rows = in.data.size() / n_in;
    ASSERT_EQ(want.data.size(), rows * n_out);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < n_in; ++k) {
        const float v = in.data[r * n_in + k];
        if (c.int8) {
          static_cast<int8_t*>(interp.input_data(0))[k] = static_cast<int8_t>(v);
        } else {
          static_cast<float*>(interp.input_data(0))[k] = v;
        }
      }
      interp.invoke();
      for (size_t k = 0; k < n_out; ++k) {
        const float w = want.data[r * n_out + k];
        if (c.int8) {
          EXPECT_EQ(static_cast<const int8_t*>(interp.output_data(0))[k], static_cast<int8_t>(w)) << "row " << r;
        } else {
          EXPECT_NEAR(static_cast<const float*>(interp.output_data(0))[k], w, 1e-5 + 1e-5 * std::fabs(w)) << "row " << r;
        }
      }
    }
  }
}

// The case that failed `make test` on a fresh Zen 4 machine (tests/fixtures/pruned_repro/
// sparse-int8-fc/README.md): filters stored 1x16-sparse run TFLite's block-sparse kernel, which
// rounds twice, so the decoded filters must too; on every kernel set, dense and sparse forms.
TEST(PrunedFixtures, ZenFourReproMatchesOnEveryKernelSet) {
  const std::string dir = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pruned_repro/sparse-int8-fc";
  const std::vector<uint8_t> bytes = read_bytes(dir + "/mlp_block16_int8.tflite");
  ASSERT_FALSE(bytes.empty()) << dir;
  auto program = std::make_shared<const tfl::Program>(formats::load_tflite(bytes.data(), bytes.size(), "repro"));
  const formats::NpyArray in = formats::read_npy(dir + "/mlp_block16_int8_inputs.npy");
  const formats::NpyArray want = formats::read_npy(dir + "/expected_mlp_block16_int8.npy");
  ASSERT_EQ(in.shape, (std::vector<int64_t>{16, 32}));
  ASSERT_EQ(want.shape, (std::vector<int64_t>{16, 4}));
  for (const char* isa : {"scalar", "portable", "avx2", "avx512"}) {
    if (!kernels::isa_supported(kernels::parse_isa(isa))) continue;
    for (tfl::SparseChoice choice : {tfl::SparseChoice::Dense, tfl::SparseChoice::Sparse}) {
      tfl::InterpreterOptions options;
      options.isa = isa;
      options.sparse = choice;
      tfl::Interpreter interp(program, options);
      int mismatches = 0;
      for (size_t r = 0; r < 16; ++r) {
        for (size_t k = 0; k < 32; ++k) static_cast<int8_t*>(interp.input_data(0))[k] = static_cast<int8_t>(in.data[r * 32 + k]);
        interp.invoke();
        for (size_t k = 0; k < 4; ++k) {
          mismatches += static_cast<const int8_t*>(interp.output_data(0))[k] != static_cast<int8_t>(want.data[r * 4 + k]);
        }
      }
      EXPECT_EQ(mismatches, 0) << isa << (choice == tfl::SparseChoice::Sparse ? " sparse" : " dense");
    }
  }
}

// ---- hand-made sparse tensors: the mini FULLY_CONNECTED's weight w [2,4] stored sparse ----

// w = [[1, 0, 0, 4], [0, 6, 0, 0]]: row 0 keeps columns 0 and 3, row 1 column 1.
MiniModel sparse_fc(std::vector<int32_t> order = {0, 1}, std::vector<int32_t> segments = {0, 2, 3},
                    std::vector<int32_t> indices = {0, 3, 1}, std::vector<float> values = {1, 4, 6},
                    tflite::SparseIndexVector type = tflite::SparseIndexVector::Uint8Vector, int32_t rows = 2) {
  MiniModel m = MiniModel::fully_connected();
  m.buffers[1].data = testing::bytes_of(values);
  MiniSparseDim d0, d1;
  d0.dense_size = rows;
  d1.csr = true;
  d1.segments = std::move(segments);
  d1.indices = std::move(indices);
  d1.index_type = type;
  m.tensors[1].sparsity = mini_sparsity(std::move(order), {}, {d0, d1});
  return m;
}

std::vector<float> weight_of(const tfl::Program& p, size_t tensor) {
  const tfl::Tensor& t = p.tensors.at(tensor);
  std::vector<float> out(t.data.size() / sizeof(float));
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

tfl::Program load(const MiniModel& m) {
  const std::vector<uint8_t> bytes = m.serialize();
  return formats::load_tflite(bytes.data(), bytes.size(), "m.tflite");
}

std::string refusal(const MiniModel& m) {
  try {
    load(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(SparseTensor, CsrDecodesWithEveryIndexType) {
  const std::vector<float> dense = {1, 0, 0, 4, 0, 6, 0, 0};
  for (auto type : {tflite::SparseIndexVector::Uint8Vector, tflite::SparseIndexVector::Uint16Vector,
                    tflite::SparseIndexVector::Int32Vector}) {
    EXPECT_EQ(weight_of(load(sparse_fc({0, 1}, {0, 2, 3}, {0, 3, 1}, {1, 4, 6}, type)), 1), dense);
  }
}

TEST(SparseTensor, TraversalOrderColumnsFirst) {
  // Columns outer: column 0 keeps row 0, column 1 row 1, column 3 row 0.
  MiniModel m = MiniModel::fully_connected();
  m.buffers[1].data = testing::bytes_of(std::vector<float>{1, 6, 4});
  MiniSparseDim d0, d1;
  d0.dense_size = 4;
  d1.csr = true;
  d1.segments = {0, 1, 2, 2, 3};
  d1.indices = {0, 1, 0};
  m.tensors[1].sparsity = mini_sparsity({1, 0}, {}, {d0, d1});
  EXPECT_EQ(weight_of(load(m), 1), (std::vector<float>{1, 0, 0, 4, 0, 6, 0, 0}));
}

TEST(SparseTensor, OneByTwoBlocks) {
  // w = [[1, 2, 0, 0], [0, 0, 7, 8]]: the converter's block layout (block_map [1], block level last).
  MiniModel m = MiniModel::fully_connected();
  m.buffers[1].data = testing::bytes_of(std::vector<float>{1, 2, 7, 8});
  MiniSparseDim d0, d1, d2;
  d0.dense_size = 2;
  d1.csr = true;
  d1.segments = {0, 1, 2};
  d1.indices = {0, 1};
  d2.dense_size = 2;
  m.tensors[1].sparsity = mini_sparsity({0, 1, 2}, {1}, {d0, d1, d2});
  EXPECT_EQ(weight_of(load(m), 1), (std::vector<float>{1, 2, 0, 0, 0, 0, 7, 8}));
  d2.dense_size = 3;  // does not divide the 4 columns
  m.tensors[1].sparsity = mini_sparsity({0, 1, 2}, {1}, {d0, d1, d2});
  EXPECT_NE(refusal(m).find("block dimension 0 must be DENSE with a size that divides dimension 1"), std::string::npos)
      << refusal(m);
  m.tensors[1].sparsity = mini_sparsity({0, 1, 2}, {5}, {d0, d1, d2});
  EXPECT_NE(refusal(m).find("block_map entry 0 (5)"), std::string::npos) << refusal(m);
}

TEST(SparseTensor, DensifyOfAConstantFoldsAway) {
  MiniModel m = sparse_fc();
  m.tensors.push_back(testing::mini_tensor({2, 4}, 0, 0, "w_dense"));
  MiniOp densify;
  densify.builtin = 124;
  densify.inputs = {1};
  densify.outputs = {4};
  m.ops[0].inputs = {0, 4, 2};
  m.ops.insert(m.ops.begin(), densify);
  const tfl::Program p = load(m);
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].code, tfl::OpCode::FullyConnected);
  EXPECT_EQ(weight_of(p, 4), (std::vector<float>{1, 0, 0, 4, 0, 6, 0, 0}));
  // DENSIFY of a computed tensor: nothing a converter writes.
  m.ops[0].inputs = {0};
  m.tensors[4].shape = {1, 4};
  EXPECT_NE(refusal(m).find("op 0 (DENSIFY): densifies a computed tensor"), std::string::npos) << refusal(m);
}

TEST(SparseTensor, MalformedMetadataIsRefusedByName) {
  const std::string w = "m.tflite: tensor 1 'w': sparsity: ";
  struct Bad {
    MiniModel model;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {sparse_fc({0, 1}, {0, 4, 3}), "level 1 (dimension 1): array_segments decreases at entry 2"},
      {sparse_fc({0, 1}, {0, 3}), "level 1 (dimension 1): array_segments has 2 entries, 3 expected"},
      {sparse_fc({0, 1}, {1, 2, 3}), "level 1 (dimension 1): array_segments starts at 1, not 0"},
      {sparse_fc({0, 1}, {0, 2, 2}), "level 1 (dimension 1): array_segments ends at 2, but array_indices has 3 entries"},
      {sparse_fc({0, 1}, {0, 2, 3}, {0, 4, 1}), "level 1 (dimension 1): array_indices[1] = 4 is outside the dimension of size 4"},
      {sparse_fc({0, 1}, {0, 2, 3}, {3, 0, 1}), "level 1 (dimension 1): array_indices do not increase within segment 0"},
      {sparse_fc({0}), "traversal_order has 1 entries, but rank 2 with 0 block dimensions needs 2"},
      {sparse_fc({1, 1}), "traversal_order entry 1 (1) is not a permutation"},
      {sparse_fc({0, 1}, {0, 2, 3}, {0, 3, 1}, {1, 4}), "the buffer holds 8 bytes, but the metadata lists 3 values"},
      {sparse_fc({0, 1}, {0, 2, 3}, {0, 3, 1}, {1, 4, 6}, tflite::SparseIndexVector::Uint8Vector, 3),
       "level 0 (dimension 0): DENSE dense_size 3 does not match the size 2"},
  };
  for (const Bad& b : bad) {
    const std::string msg = refusal(b.model);
    EXPECT_EQ(msg.rfind(w + b.message, 0), 0u) << msg;
  }
  MiniModel m = MiniModel::fully_connected();
  m.tensors[1].sparsity = [](flatbuffers::FlatBufferBuilder& b) {
    std::vector<flatbuffers::Offset<tflite::DimensionMetadata>> md = {
        tflite::CreateDimensionMetadata(b, tflite::DimensionType::DENSE, 2),
        tflite::CreateDimensionMetadata(b, tflite::DimensionType::SPARSE_CSR)};
    std::vector<int32_t> order = {0, 1};
    return tflite::CreateSparsityParametersDirect(b, &order, nullptr, &md);
  };
  EXPECT_EQ(refusal(m), w + "a SPARSE_CSR level has no array_segments (or one of an unknown index type)");
}

// The committed sparse fixture with one CSR index and then one segment overwritten in place.
TEST(SparseTensor, CorruptedConverterFileIsRefused) {
  const std::string path = pruned_dir() + "/mlp_sparse_float.tflite";
  std::vector<uint8_t> bytes = read_bytes(path);
  ASSERT_FALSE(bytes.empty()) << path;
  const tflite::Model* model = tflite::GetModel(bytes.data());
  const tflite::Tensor* sparse = nullptr;
  for (const tflite::Tensor* t : *model->subgraphs()->Get(0)->tensors()) {
    if (t->sparsity() && !sparse) sparse = t;
  }
  ASSERT_NE(sparse, nullptr);
  const tflite::DimensionMetadata* csr = sparse->sparsity()->dim_metadata()->Get(1);
  ASSERT_EQ(csr->array_indices_type(), tflite::SparseIndexVector::Uint8Vector);
  const size_t index_at = static_cast<size_t>(csr->array_indices_as_Uint8Vector()->values()->data() - bytes.data());
  const size_t segment_at = static_cast<size_t>(csr->array_segments_as_Uint8Vector()->values()->data() - bytes.data()) + 1;
  auto message = [](const std::vector<uint8_t>& b) {
    try {
      formats::load_tflite(b.data(), b.size(), "bad.tflite");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  std::vector<uint8_t> bad = bytes;
  bad[index_at] = 250;
  EXPECT_NE(message(bad).find("sparsity: level 1 (dimension 1): array_indices[0] = 250 is outside the dimension of size 32"),
            std::string::npos)
      << message(bad);
  bad = bytes;
  bad[segment_at] = 255;
  EXPECT_NE(message(bad).find("sparsity: level 1 (dimension 1): array_segments decreases at entry 2"), std::string::npos)
      << message(bad);
}

}  // namespace
}  // namespace tickinfer
