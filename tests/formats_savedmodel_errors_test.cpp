// The SavedModel reader on broken input: each damage is made to a temporary copy of a committed
// fixture and must give an Error naming the file and what is wrong. Also the checksum and table
// primitives against known values.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/crc32c.hpp"
#include "formats/model_file.hpp"
#include "formats/savedmodel/saved_model.hpp"
#include "formats/savedmodel/sstable.hpp"
#include "formats/savedmodel/tensor_bundle.hpp"
#include "tensorflow/core/protobuf/saved_model.pb.h"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::formats {
namespace {

namespace fs = std::filesystem;

const fs::path kFixture = fs::path(::tickinfer::test::source_dir()) / "tests/fixtures/savedmodel/dense_act_k3/k3_export";
// Keras 3 export of a TransLOB block: causal MultiHeadAttention as Einsum, SelectV2 and Softmax.
const fs::path kAttentionFixture = fs::path(::tickinfer::test::source_dir()) / "tests/fixtures/savedmodel/translob_tiny_k3/k3_export";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A fresh copy of the fixture, removed at the end of the test.
class Copy {
 public:
  explicit Copy(const fs::path& from = kFixture)
      : dir_(fs::temp_directory_path() / ("tickinfer_sm_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    fs::remove_all(dir_);
    fs::copy(from, dir_, fs::copy_options::recursive);
  }
  ~Copy() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

// The error message of loading `dir`, or "" if it loads.
std::string load_error(const fs::path& dir) {
  try {
    load_saved_model(dir.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Crc32c, CheckValueAndMask) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c_extend(crc32c("1234", 4), "56789", 5), 0xE3069283u);
  const uint32_t c = 0xE3069283u;
  EXPECT_EQ(mask_crc32c(c), ((c >> 15) | (c << 17)) + 0xa282ead8u);
  // The TFRecord header of "hello" (5 as uint64 LE) has the masked CRC eab2043e.
  const char len[8] = {5, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(masked_crc32c(len, 8), 0x3e04b2eau);
}

TEST(SavedModelFixture, LoadsWithSignatures) {
  const SavedModel m = load_saved_model(kFixture.string());
  EXPECT_EQ(m.info.signature_key, "serving_default");
  ASSERT_GE(m.info.signatures.size(), 1u);
  bool found = false;
  for (const auto& s : m.info.signatures) {
    if (s.key != "serving_default") continue;
    found = true;
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0].dtype, 1);
    EXPECT_EQ(s.inputs[0].shape, (std::vector<int64_t>{-1, 10}));
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_EQ(s.outputs[0].key, "output_0");
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(m.graph.output_names, std::vector<std::string>{"output_0"});
  EXPECT_EQ(load_any_model_file(kFixture.string()).saved_model->signature_key, "serving_default");
}

TEST(SavedModelErrors, DirectoryThatIsNotASavedModel) {
  Copy c;
  fs::remove(c.dir() / "saved_model.pb");
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find(c.dir().string()), std::string::npos) << e;
  EXPECT_NE(e.find("not a SavedModel"), std::string::npos) << e;
  try {
    load_any_model_file(c.dir().string());
    ADD_FAILURE() << "loaded a directory without saved_model.pb";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("not a SavedModel"), std::string::npos) << err.what();
  }
}

TEST(SavedModelErrors, TruncatedSavedModelPb) {
  Copy c;
  const std::string pb = slurp(c.dir() / "saved_model.pb");
  spit(c.dir() / "saved_model.pb", pb.substr(0, pb.size() / 2 + 3));
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("saved_model.pb"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(SavedModelErrors, BundleChecksumFailure) {
  Copy c;
  const fs::path shard = c.dir() / "variables/variables.data-00000-of-00001";
  std::string data = slurp(shard);
  ASSERT_GT(data.size(), 16u);
  data[8] = static_cast<char>(data[8] ^ 0x40);
  spit(shard, data);
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("variables.data-00000-of-00001"), std::string::npos) << e;
  EXPECT_NE(e.find("checksum mismatch"), std::string::npos) << e;
}

TEST(SavedModelErrors, IndexBlockChecksumFailure) {
  Copy c;
  const fs::path index = c.dir() / "variables/variables.index";
  std::string data = slurp(index);
  data[3] = static_cast<char>(data[3] ^ 0x01);
  spit(index, data);
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("variables.index"), std::string::npos) << e;
  EXPECT_NE(e.find("checksum"), std::string::npos) << e;
}

TEST(SavedModelErrors, MissingShard) {
  Copy c;
  fs::remove(c.dir() / "variables/variables.data-00000-of-00001");
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("variables.data-00000-of-00001"), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST(SavedModelErrors, SignatureNamingAnUnknownTensor) {
  Copy c;
  tensorflow::SavedModel sm;
  ASSERT_TRUE(sm.ParseFromString(slurp(c.dir() / "saved_model.pb")));
  auto& sigs = *sm.mutable_meta_graphs(0)->mutable_signature_def();
  ASSERT_TRUE(sigs.count("serving_default"));
  auto& outs = *sigs["serving_default"].mutable_outputs();
  outs.begin()->second.set_name("no_such_node:0");
  spit(c.dir() / "saved_model.pb", sm.SerializeAsString());
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("saved_model.pb"), std::string::npos) << e;
  EXPECT_NE(e.find("no_such_node:0"), std::string::npos) << e;
  EXPECT_NE(e.find("not in the graph"), std::string::npos) << e;
}

TEST(SavedModelErrors, UnknownTagAndSignature) {
  SavedModelOptions o;
  o.tag = "gpu";
  try {
    load_saved_model(kFixture.string(), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no MetaGraph with tags 'gpu'"), std::string::npos) << e.what();
  }
  o = {};
  o.signature = "classify";
  try {
    load_saved_model(kFixture.string(), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no signature 'classify'"), std::string::npos) << e.what();
  }
}

TEST(SavedModelErrors, UnsupportedOpIsNamed) {
  Copy c;
  tensorflow::SavedModel sm;
  ASSERT_TRUE(sm.ParseFromString(slurp(c.dir() / "saved_model.pb")));
  bool changed = false;
  for (auto& f : *sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_library()->mutable_function()) {
    for (auto& n : *f.mutable_node_def()) {
      if (n.op() == "Tanh") {
        n.set_op("Asinh");
        changed = true;
      }
    }
  }
  ASSERT_TRUE(changed);
  spit(c.dir() / "saved_model.pb", sm.SerializeAsString());
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("Asinh"), std::string::npos) << e;
  EXPECT_NE(e.find("function '"), std::string::npos) << e;
  EXPECT_NE(e.find("node '"), std::string::npos) << e;
}

// Rewrites the first node of op `op` in the copy's functions with `edit`; false if there is none.
template <class Edit>
bool edit_first_node(const Copy& c, const std::string& op, Edit edit) {
  tensorflow::SavedModel sm;
  if (!sm.ParseFromString(slurp(c.dir() / "saved_model.pb"))) return false;
  for (auto& f : *sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_library()->mutable_function()) {
    for (auto& n : *f.mutable_node_def()) {
      if (n.op() != op) continue;
      edit(n);
      spit(c.dir() / "saved_model.pb", sm.SerializeAsString());
      return true;
    }
  }
  return false;
}

TEST(SavedModelErrors, EinsumThatIsNotAttentionIsNamed) {
  Copy c(kAttentionFixture);
  // The scores' equation with its output axes reordered: still a valid product, no longer attention's.
  ASSERT_TRUE(edit_first_node(c, "Einsum", [](tensorflow::NodeDef& n) {
    ASSERT_EQ(n.attr().at("equation").s(), "BTNH,BSNH->BNTS");
    (*n.mutable_attr())["equation"].set_s("BTNH,BSNH->BTNS");
  }));
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("(Einsum)"), std::string::npos) << e;
  EXPECT_NE(e.find("Einsum 'BTNH,BSNH->BTNS' of two computed tensors is not a product of attention"), std::string::npos) << e;
}

TEST(SavedModelErrors, SelectOnAComputedConditionIsNamed) {
  Copy c(kAttentionFixture);
  // The causal mask's condition replaced by the queries (the scores' Einsum's first operand): a
  // condition computed per input, of another tensor than the one selected from.
  std::string query;
  ASSERT_TRUE(edit_first_node(c, "Einsum", [&](tensorflow::NodeDef& n) { query = n.input(0); }));
  ASSERT_TRUE(edit_first_node(c, "SelectV2", [&](tensorflow::NodeDef& n) { n.set_input(0, query); }));
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("(SelectV2)"), std::string::npos) << e;
  EXPECT_NE(e.find("a condition computed from the input is not supported"), std::string::npos) << e;
}

TEST(SavedModelErrors, SelectOfAValueThatIsNoMaskIsNamed) {
  Copy c(kAttentionFixture);
  // SelectV2(mask, scores, 0): not the large negative a mask adds, so not an Add of a constant.
  ASSERT_TRUE(edit_first_node(c, "SelectV2", [](tensorflow::NodeDef& n) { n.set_input(2, "functional_1/multi_head_attention_1/zero:output:0"); }));
  tensorflow::SavedModel sm;
  ASSERT_TRUE(sm.ParseFromString(slurp(c.dir() / "saved_model.pb")));
  bool added = false;
  for (auto& f : *sm.mutable_meta_graphs(0)->mutable_graph_def()->mutable_library()->mutable_function()) {
    if (std::none_of(f.node_def().begin(), f.node_def().end(), [](const auto& n) { return n.op() == "SelectV2"; })) continue;
    tensorflow::NodeDef* zero = f.add_node_def();
    zero->set_name("functional_1/multi_head_attention_1/zero");
    zero->set_op("Const");
    (*zero->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    tensorflow::TensorProto& t = *(*zero->mutable_attr())["value"].mutable_tensor();
    t.set_dtype(tensorflow::DT_FLOAT);
    t.mutable_tensor_shape();
    t.add_float_val(0.0f);
    added = true;
  }
  ASSERT_TRUE(added);
  spit(c.dir() / "saved_model.pb", sm.SerializeAsString());
  const std::string e = load_error(c.dir());
  EXPECT_NE(e.find("(SelectV2)"), std::string::npos) << e;
  EXPECT_NE(e.find("only a large negative mask value before a softmax is supported"), std::string::npos) << e;
}

TEST(SSTable, RejectsSnappyBlocksAndBadFooters) {
  std::string index = slurp(kFixture / "variables/variables.index");
  EXPECT_NO_THROW(read_sstable(index, "t"));
  EXPECT_THROW(read_sstable(index.substr(0, 40), "t"), Error);
  std::string bad_magic = index;
  bad_magic.back() = 0;
  EXPECT_THROW(read_sstable(bad_magic, "t"), Error);
  // Mark the first data block (at offset 0) Snappy-compressed, with a valid checksum.
  const std::vector<TableEntry> entries = read_sstable(index, "t");
  ASSERT_FALSE(entries.empty());
  // The footer's metaindex handle follows the data blocks; the first data block starts at 0
  // and its trailer sits right before the next block. Find it by scanning for a valid trailer.
  bool marked = false;
  for (size_t end = 8; end + 5 <= index.size() - 48 && !marked; ++end) {
    uint32_t stored;
    std::memcpy(&stored, index.data() + end + 1, 4);
    if (index[end] != 0 || stored != mask_crc32c(crc32c_extend(crc32c(index.data(), end), index.data() + end, 1))) continue;
    std::string snappy = index;
    snappy[end] = 1;
    const uint32_t crc = mask_crc32c(crc32c_extend(crc32c(snappy.data(), end), snappy.data() + end, 1));
    std::memcpy(snappy.data() + end + 1, &crc, 4);
    try {
      read_sstable(snappy, "t.index");
      ADD_FAILURE() << "accepted a Snappy block";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Snappy"), std::string::npos) << e.what();
    }
    marked = true;
  }
  EXPECT_TRUE(marked);
}

TEST(TensorBundle, ReadsEveryEntryOfTheFixture) {
  const TensorBundle b = TensorBundle::open((kFixture / "variables/variables").string());
  int numeric = 0;
  for (const std::string& k : b.keys()) {
    if (k == "_CHECKPOINTABLE_OBJECT_GRAPH") {
      EXPECT_FALSE(b.read_string(k).empty());
      continue;
    }
    const TfTensor t = b.read(k);
    EXPECT_EQ(static_cast<int64_t>(t.values.size()), t.size()) << k;
    ++numeric;
  }
  EXPECT_GT(numeric, 0);
}

}  // namespace
}  // namespace tickinfer::formats
