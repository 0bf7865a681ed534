// The ONNX reader on files built here (tiny models through the same protobuf messages the
// reader parses) and on damaged copies: every problem must be an Error that starts with the
// file's path and names what is wrong; nothing may crash or load silently wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "formats/model_file.hpp"
#include "formats/onnx/onnx_file.hpp"
#include "onnx/onnx.pb.h"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("onnx_errors_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

void add_float_tensor(onnx::TensorProto* t, const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  t->set_name(name);
  t->set_data_type(1);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, int features) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(features);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

// y = relu(x @ W + B), x [batch, 3], W [3, 2].
onnx::ModelProto tiny_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(15);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  add_value_info(g->add_input(), "x", 3);
  add_value_info(g->add_output(), "y", 2);
  add_float_tensor(g->add_initializer(), "W", {3, 2}, {1, 2, 3, 4, 5, 6});
  add_float_tensor(g->add_initializer(), "B", {2}, {0.5f, -100.0f});
  add_node(g, "MatMul", "matmul", {"x", "W"}, {"h"});
  add_node(g, "Add", "bias", {"h", "B"}, {"z"});
  add_node(g, "Relu", "relu", {"z"}, {"y"});
  return m;
}

std::string write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}
std::string write(const std::string& path, const onnx::ModelProto& m) { return write(path, m.SerializeAsString()); }

// Loads `path` expecting an Error that starts with it and contains `what`.
void expect_error(const std::string& path, const std::string& what) {
  try {
    (void)formats::load_any_model_file(path);
    ADD_FAILURE() << path << " loaded; expected an error containing '" << what << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(OnnxReader, TinyModelLowersToOneDense) {
  TempDir d;
  const Graph g = formats::load_any_model_file(write(d.file("m.onnx"), tiny_model())).graph;
  EXPECT_EQ(g.source_format, "onnx");
  ASSERT_EQ(g.nodes.size(), 2u);  // input, Dense (bias and relu merged into it)
  const Node& dense = g.nodes[1];
  EXPECT_EQ(dense.kind, OpKind::Dense);
  EXPECT_EQ(dense.activation.kind, ActKind::Relu);
  EXPECT_EQ(dense.weights[0].data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(dense.weights[1].data, (std::vector<float>{0.5f, -100.0f}));
  EXPECT_NE(dense.origin.find("MatMul 'matmul'"), std::string::npos) << dense.origin;
  EXPECT_NE(dense.origin.find("Relu 'relu'"), std::string::npos) << dense.origin;
  ASSERT_EQ(g.output_names, std::vector<std::string>{"y"});
}

TEST(OnnxReader, ContentSniffWithoutTheExtension) {
  const std::string bytes = tiny_model().SerializeAsString();
  EXPECT_TRUE(formats::looks_like_onnx(bytes.data(), bytes.size()));
  EXPECT_FALSE(formats::looks_like_onnx("PK\x03\x04", 4));
  TempDir d;
  EXPECT_EQ(formats::load_any_model_file(write(d.file("model.bin"), bytes)).graph.source_format, "onnx");
}

TEST(OnnxReader, TruncatedFilesAreErrorsNamingTheFile) {
  TempDir d;
  const std::string bytes = tiny_model().SerializeAsString();
  expect_error(write(d.file("half.onnx"), bytes.substr(0, bytes.size() / 2)), "not a valid ONNX model");
  expect_error(write(d.file("empty.onnx"), std::string()), "empty file");
  for (size_t cut = 1; cut < bytes.size(); ++cut) {  // every prefix: an error or a complete model, never a crash
    const std::string path = write(d.file("cut.onnx"), bytes.substr(0, cut));
    try {
      (void)formats::load_any_model_file(path);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
    }
  }
}

// Damaged copies of an exporter's file (tf2onnx's stacked LSTM): cut short, or with an op renamed.
TEST(OnnxReader, DamagedCopiesOfAFixtureAreErrors) {
  const std::string src = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/onnx/lstm_stacked_k3/model.onnx";
  std::ifstream in(src, std::ios::binary);
  ASSERT_TRUE(in) << src;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TempDir d;
  expect_error(write(d.file("cut.onnx"), bytes.substr(0, bytes.size() * 2 / 3)), "not a valid ONNX model");
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() == "LSTM") n.set_op_type("LSTMv2");
  }
  expect_error(write(d.file("renamed.onnx"), m), "(LSTMv2): operator LSTMv2 is not supported");
  ASSERT_TRUE(m.ParseFromString(bytes));
  m.mutable_graph()->mutable_initializer()->RemoveLast();
  expect_error(write(d.file("noinit.onnx"), m), "is neither a graph input, an initializer nor a node output");
}

TEST(OnnxReader, OpsetBelow13IsRefused) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  m.mutable_opset_import(0)->set_version(11);
  expect_error(write(d.file("m.onnx"), m), "opset 11 is not supported");
  m.clear_opset_import();
  expect_error(write(d.file("m.onnx"), m), "imports no opset");
}

TEST(OnnxReader, UnknownOpIsNamedWithItsNode) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_node(2)->set_op_type("Frobnicate");
  expect_error(write(d.file("m.onnx"), m), "node 'relu' (Frobnicate): operator Frobnicate is not supported");
  m = tiny_model();
  m.mutable_graph()->mutable_node(2)->set_domain("com.example");
  expect_error(write(d.file("m.onnx"), m), "domain 'com.example'");
}

TEST(OnnxReader, MissingInitializerIsNamed) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);  // W
  expect_error(write(d.file("m.onnx"), m), "value 'W' is neither a graph input, an initializer nor a node output");
}

TEST(OnnxReader, InitializerDataMustMatchItsDims) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_initializer(0)->add_dims(2);  // [3, 2, 2] with 6 values
  expect_error(write(d.file("m.onnx"), m), "initializer 'W': raw_data holds 24 bytes");
}

TEST(OnnxReader, DeclaredOutputShapeMustMatchTheLowering) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(5);
  expect_error(write(d.file("m.onnx"), m), "graph output 'y' is declared [?, 5] but lowers to [1, 2]");
}

// W moved to an external file next to the model.
onnx::ModelProto external_model(const std::string& location, const std::string& offset, const std::string& length) {
  onnx::ModelProto m = tiny_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
  return m;
}

TEST(OnnxReader, ExternalDataIsReadRelativeToTheModel) {
  TempDir d;
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::string blob(8, '\0');  // an offset before the data
  blob.append(reinterpret_cast<const char*>(w.data()), 24);
  write(d.file("weights.bin"), blob);
  const Graph g = formats::load_any_model_file(write(d.file("m.onnx"), external_model("weights.bin", "8", "24"))).graph;
  EXPECT_EQ(g.nodes[1].weights[0].data, w);
}

TEST(OnnxReader, BadExternalDataIsAnError) {
  TempDir d;
  write(d.file("weights.bin"), std::string(24, '\0'));
  expect_error(write(d.file("a.onnx"), external_model("missing.bin", "0", "24")), "cannot open external data file 'missing.bin'");
  expect_error(write(d.file("b.onnx"), external_model("weights.bin", "4096", "24")), "lies outside 'weights.bin'");
  expect_error(write(d.file("c.onnx"), external_model("weights.bin", "8", "24")), "lies outside 'weights.bin'");
  expect_error(write(d.file("d.onnx"), external_model("weights.bin", "0", "20")), "does not match the tensor's 24 bytes");
  expect_error(write(d.file("e.onnx"), external_model("../weights.bin", "0", "24")), "not a path inside the model's directory");
  expect_error(write(d.file("f.onnx"), external_model("/etc/passwd", "0", "24")), "not a path inside the model's directory");
  expect_error(write(d.file("g.onnx"), external_model("weights.bin", "-1", "24")), "is not a decimal number");
  TempDir outside;
  write(outside.file("secret.bin"), std::string(24, '\0'));
  fs::create_symlink(outside.file("secret.bin"), d.file("link.bin"));
  expect_error(write(d.file("h.onnx"), external_model("link.bin", "0", "24")), "resolves outside the model's directory");
}

TEST(OnnxReader, UnsupportedRecurrentOptionsAreNamed) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  g->clear_initializer();
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);  // [b, 3, 3]
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
  add_float_tensor(g->add_initializer(), "W", {1, 8, 3}, std::vector<float>(24, 0.1f));
  add_float_tensor(g->add_initializer(), "R", {1, 8, 2}, std::vector<float>(16, 0.1f));
  add_float_tensor(g->add_initializer(), "h0", {1, 1, 2}, {0.0f, 1.0f});
  auto* lstm = add_node(g, "LSTM", "lstm", {"x", "W", "R", "", "", "h0"}, {"", "y"});
  auto* hs = lstm->add_attribute();
  hs->set_name("hidden_size");
  hs->set_i(2);
  auto* layout = lstm->add_attribute();
  layout->set_name("layout");
  layout->set_i(1);
  expect_error(write(d.file("m.onnx"), m), "initial_h and initial_c must both be computed states");
  lstm->set_input(5, "");
  auto* dir = lstm->add_attribute();
  dir->set_name("direction");
  dir->set_s("bidirectional");  // W and R hold one direction
  expect_error(write(d.file("m.onnx"), m), "W must be a float [2, 4*hidden_size, input] tensor");
  dir->set_s("sideways");
  expect_error(write(d.file("m.onnx"), m), "direction 'sideways' is not one of forward, reverse, bidirectional");
  dir->set_s("reverse");
  lstm->set_input(5, "h0");
  expect_error(write(d.file("m.onnx"), m), "input 5 ('h0') is not a known all-zero initial state; direction 'reverse' starts from zero states only");
  lstm->set_input(5, "");
  lstm->set_output(1, "");
  lstm->add_output("y");  // Y_c
  expect_error(write(d.file("m.onnx"), m), "output 2 (the final cell state) is not supported with direction 'reverse'");
}

TEST(OnnxReader, ReversingPartOfTheWindowIsRefused) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);  // [b, 4, 3]
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
  onnx::TensorProto* lens = g->add_initializer();
  lens->set_name("lens");
  lens->set_data_type(7);
  lens->add_dims(1);
  lens->add_int64_data(3);
  auto* rev = add_node(g, "ReverseSequence", "rev", {"x", "lens"}, {"r"});
  for (auto [name, v] : {std::pair{"batch_axis", 0}, std::pair{"time_axis", 1}}) {
    auto* a = rev->add_attribute();
    a->set_name(name);
    a->set_i(v);
  }
  add_node(g, "MatMul", "matmul", {"r", "W"}, {"y"});
  expect_error(write(d.file("m.onnx"), m), "node 'rev' (ReverseSequence): sequence_lens 3 is not the window length 4; only reversing the whole window is supported");
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("T");
  expect_error(write(d.file("m.onnx"), m), "over a window of free length, sequence_lens must be that length");
  lens->set_int64_data(0, 4);
  rev->mutable_attribute(1)->set_i(0);  // time_axis 0: the batch axis
  expect_error(write(d.file("m.onnx"), m), "time_axis and batch_axis must be 0 and 1 in some order");
}

onnx::ModelProto onnx_fixture(const std::string& name) {
  const std::string src = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/onnx/" + name + "/model.onnx";
  std::ifstream in(src, std::ios::binary);
  onnx::ModelProto m;
  EXPECT_TRUE(in && m.ParseFromIstream(&in)) << src;
  return m;
}

onnx::NodeProto& first_node(onnx::ModelProto& m, const std::string& op) {
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() == op) return n;
  }
  throw std::runtime_error("no " + op + " in the fixture");
}

TEST(OnnxReader, A2DConvOnAChannelsFirstInputIsRefused) {
  // tf2onnx's Conv2D stack with its first Transpose (NHWC -> NCHW) bypassed: the Conv then
  // reads the [N, H, W, C] model input as if it were [N, C, H, W].
  TempDir d;
  onnx::ModelProto m = onnx_fixture("conv2d_stack_k3");
  onnx::NodeProto& t = first_node(m, "Transpose");
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      if (in == t.output(0)) in = t.input(0);
    }
  }
  expect_error(write(d.file("m.onnx"), m), "is not a channels-last [H, W, C] tensor seen through transposes");
}

TEST(OnnxReader, AGroupedConvOtherThanDepthwiseIsRefused) {
  TempDir d;
  onnx::ModelProto m = onnx_fixture("depthwise2d_k3");
  for (auto& a : *first_node(m, "Conv").mutable_attribute()) {
    if (a.name() == "group") a.set_i(2);
  }
  expect_error(write(d.file("m.onnx"), m), "group 2 is neither 1 nor the channel count (depthwise) 3");
}

// Attention as the exporters write it ends as MultiHeadAttention nodes, no MatMul left over.
TEST(OnnxReader, AttentionFixturesFuseIntoMultiHeadAttention) {
  struct Want {
    const char* name;
    int layers;
    bool causal;
  };
  for (const Want& w : {Want{"attention_encoder_k3", 1, false}, Want{"attention_causal_k3", 2, true},
                        Want{"torch_transformer_encoder", 1, false}, Want{"torch_mha_causal", 2, true}}) {
    const std::string file = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/onnx/" + w.name + "/model.onnx";
    const Graph g = formats::load_any_model_file(file).graph;
    int layers = 0;
    for (const Node& n : g.nodes) {
      EXPECT_NE(n.kind, OpKind::MatMul) << w.name << ": " << n.name << " left unfused";
      if (n.kind != OpKind::MultiHeadAttention) continue;
      ++layers;
      EXPECT_EQ(n.causal_mask, w.causal) << w.name << ": " << n.name;
    }
    EXPECT_EQ(layers, w.layers) << w.name;
  }
}

void add_value_info_dims(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::ModelProto empty_model(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

onnx::AttributeProto* add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
  return a;
}

// x [batch, 2, 3] seen transposed as [batch, 3, 2] plus a [3, 2] table: the engine adds a
// Constant laid out over its own [2, 3] tensor.
TEST(OnnxReader, ATableIsLaidOutOverTheEngineTensor) {
  TempDir d;
  onnx::ModelProto m = empty_model(15);
  auto* g = m.mutable_graph();
  add_value_info_dims(g->add_input(), "x", {2, 3});
  add_value_info_dims(g->add_output(), "y", {2, 3});
  add_float_tensor(g->add_initializer(), "T", {3, 2}, {1, 2, 3, 4, 5, 6});
  add_ints(add_node(g, "Transpose", "t1", {"x"}, {"xt"}), "perm", {0, 2, 1});
  add_node(g, "Add", "table", {"xt", "T"}, {"s"});
  add_ints(add_node(g, "Transpose", "t2", {"s"}, {"y"}), "perm", {0, 2, 1});
  const Graph graph = formats::load_any_model_file(write(d.file("m.onnx"), m)).graph;
  const Node* table = nullptr;
  for (const Node& n : graph.nodes) {
    if (n.kind == OpKind::Constant) table = &n;
  }
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->shape, (Shape{2, 3}));
  EXPECT_EQ(table->weights.at(0).data, (std::vector<float>{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(graph.nodes[graph.outputs.at(0)].kind, OpKind::Add);
}

TEST(OnnxReader, AProductOfComputedTensorsWithOtherLeadingAxesIsRefused) {
  TempDir d;
  onnx::ModelProto m = empty_model(15);
  auto* g = m.mutable_graph();
  add_value_info_dims(g->add_input(), "a", {2, 2, 3});
  add_value_info_dims(g->add_input(), "b", {1, 3, 2});
  add_value_info_dims(g->add_output(), "y", {2, 2, 2});
  add_node(g, "MatMul", "qk", {"a", "b"}, {"y"});
  expect_error(write(d.file("m.onnx"), m), "node 'qk' (MatMul): the operands' leading axes differ");
}

TEST(OnnxReader, PaddingTheBatchAxisIsRefused) {
  TempDir d;
  onnx::ModelProto m = tiny_model();
  auto* g = m.mutable_graph();
  onnx::TensorProto* pads = g->add_initializer();
  pads->set_name("pads");
  pads->set_data_type(7);
  pads->add_dims(4);
  for (int64_t v : {1, 0, 0, 0}) pads->add_int64_data(v);
  add_node(g, "Pad", "pad", {"y0", "pads"}, {"y"});
  g->mutable_node(2)->set_output(0, "y0");  // relu now feeds the Pad
  expect_error(write(d.file("m.onnx"), m), "node 'pad' (Pad): padding ONNX axis 0, which the engine tensor does not have");
}

}  // namespace
}  // namespace tickinfer
