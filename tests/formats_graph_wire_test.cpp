// The Graph's wire form (model/graph_wire.hpp: what the isolated loader hands back from its child
// process) on every fixture model that loads: decode(encode(g)) equals g in every field of
// model/graph_fields.hpp, floats to the bit (the encoding walks the same lists; their size
// checks catch a field added to the structs and not to the lists), and node origins and served
// output names, compared directly, survive (the hand-written encoding once dropped both).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "formats/model_file.hpp"
#include "model/graph_fields.hpp"
#include "model/graph_wire.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer {
namespace {

namespace fs = std::filesystem;

// Each field as exact bytes (floats by their bit patterns), nested structs field by field.
struct Render {
  std::vector<std::string>* out;
  static std::string bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }
  static std::string one(const std::string& s) {
    std::string r = "s";
    r += s;
    return r;
  }
  static std::string one(const ActivationSpec& a) {
    return bytes(&a.kind, sizeof a.kind) + bytes(&a.alpha, 4) + bytes(&a.beta, 4) + bytes(&a.max_value, 4) +
           bytes(&a.threshold, 4);
  }
  static std::string one(const Weight& w) {
    std::vector<std::string> parts;
    visit_weight_fields(w, Render{&parts});
    std::string s;
    for (const std::string& p : parts) s += p + "|";
    return s;
  }
  static std::string one(const Node& n) {
    std::vector<std::string> parts;
    visit_node_fields(n, Render{&parts});
    std::string s;
    for (const std::string& p : parts) s += p + "|";
    return s;
  }
  template <class T>
    requires std::is_trivially_copyable_v<T>
  static std::string one(const T& v) {
    return bytes(&v, sizeof v);
  }
  template <class T>
  static std::string one(const std::vector<T>& v) {
    std::string s = "n";
    s += std::to_string(v.size());
    for (const T& x : v) {
      s += ',';
      s += one(x);
    }
    return s;
  }
  template <class T>
  void operator()(const T& v) const {
    out->push_back(one(v));
  }
};

std::vector<std::string> fields_of(const Graph& g) {
  std::vector<std::string> out;
  visit_graph_fields(g, Render{&out});
  return out;
}

std::vector<std::string> fixture_models() {
  std::vector<std::string> out;
  const fs::path root = fs::path(::tickinfer::test::source_dir()) / "tests" / "fixtures";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const fs::path& p = e.path();
    if (p.string().find("/hostile") != std::string::npos || p.string().find("/unsupported") != std::string::npos) continue;
    if (e.is_regular_file()) {
      const std::string ext = p.extension().string();
      if (ext == ".keras" || ext == ".h5" || ext == ".onnx" || ext == ".tflite") out.push_back(p.string());
      if (p.filename() == "saved_model.pb") out.push_back(p.parent_path().string());
    }
  }
  return out;
}

TEST(GraphWire, EveryFixtureModelRoundTripsInEveryField) {
  int loaded = 0, with_origin = 0, with_output_names = 0;
  for (const std::string& path : fixture_models()) {
    Graph g;
    try {
      g = formats::load_model_file(path);
    } catch (const Error&) {
      continue;  // refused files (int8 TFLite programs, deliberate errors) have no Graph to send
    }
    ++loaded;
    for (const Node& n : g.nodes) {
      if (!n.origin.empty()) {
        ++with_origin;
        break;
      }
    }
    with_output_names += !g.output_names.empty();
    const std::string wire = encode_graph(g);
    const Graph back = decode_graph(wire);
    // One graph, one encoding: a second load (a Keras file: another child process, other memory
    // behind any struct padding) encodes to the same bytes. Padded structs once leaked their
    // padding into the wire (ActivationSpec); graph_wire.cpp now refuses to copy one raw.
    EXPECT_TRUE(encode_graph(formats::load_model_file(path)) == wire) << path << ": the encoding depends on more than the fields";
    EXPECT_TRUE(encode_graph(back) == wire) << path;
    // The two fields the hand-written encoding dropped, compared outside the shared field list.
    EXPECT_EQ(back.output_names, g.output_names) << path;
    ASSERT_EQ(back.nodes.size(), g.nodes.size()) << path;
    for (size_t i = 0; i < g.nodes.size(); ++i) EXPECT_EQ(back.nodes[i].origin, g.nodes[i].origin) << path;
    const std::vector<std::string> want = fields_of(g);
    const std::vector<std::string> got = fields_of(back);
    ASSERT_EQ(got.size(), want.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << path << ": graph field " << i << " differs";
  }
  RecordProperty("loaded", loaded);
  std::cout << "[graph wire] " << loaded << " fixture models, " << with_origin << " with node origins, "
            << with_output_names << " with served output names\n";
  EXPECT_GE(loaded, 100) << "fixture models that load";
  EXPECT_GE(with_origin, 10) << "SavedModel / ONNX graphs with node origins";
  EXPECT_GE(with_output_names, 5) << "graphs with served output names";
}

TEST(GraphWire, TruncatedAndTrailingBytesAreRefused) {
  Graph g;
  g.name = "m";
  g.output_names = {"output_0"};
  Node in;
  in.kind = OpKind::Input;
  in.name = "x";
  in.origin = "Placeholder 'x'";
  in.shape = {4};
  g.nodes.push_back(in);
  g.inputs = {0};
  g.outputs = {0};
  const std::string bytes = encode_graph(g);
  const Graph back = decode_graph(bytes);
  EXPECT_EQ(back.output_names, g.output_names);
  EXPECT_EQ(back.nodes.at(0).origin, "Placeholder 'x'");
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(decode_graph(bytes.substr(0, cut)), Error) << cut;
  }
  EXPECT_THROW(decode_graph(bytes + "x"), Error);
}

}  // namespace
}  // namespace tickinfer
