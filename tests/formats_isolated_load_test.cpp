// The isolated load (formats/isolated_load.hpp): a parser runs in a child process, and its
// result, its exception, its crash or its time-out comes back as a Graph or a clear Error. Both
// ways of making the child are checked: a fork of the caller, and the loader process started
// while the caller had one thread (what `tickinfer serve` uses, so that reloads on its threads
// never fork a multithreaded process). The counts say which way each load went.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "formats/isolated_load.hpp"
#include "formats/model_file.hpp"
#include "model/graph_wire.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::formats {
namespace {

std::string fixture(const std::string& rel) {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return std::string(env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures") + "/" + rel;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Parsers that misbehave in the child, each in its own way.
Graph throwing_parser(const void*, size_t, const std::string& label) { throw Error(label + ": refused on purpose"); }
Graph crashing_parser(const void*, size_t, const std::string&) {
  ::raise(SIGSEGV);
  return {};
}
Graph hanging_parser(const void*, size_t, const std::string&) {
  for (;;) ::pause();
}
Graph echo_parser(const void* data, size_t size, const std::string& label) {  // the bytes, as a node name
  Graph g;
  g.nodes.emplace_back();
  g.nodes.back().name = label + ":" + std::string(static_cast<const char*>(data), size);
  return g;
}

// The graph as comparable text: every node's identity, configuration that decides its math, and
// weights to the bit; and its whole wire form, which is deterministic (formats_graph_wire_test).
std::string canonical(const Graph& g) {
  std::ostringstream o;
  o << g.name << '|' << g.source_format << '|' << g.inputs.size() << '|' << g.outputs.size() << '\n';
  for (const auto& n : g.nodes) {
    o << n.name << '|' << n.keras_class << '|' << n.origin << '|' << static_cast<int>(n.kind) << '|' << n.units;
    for (auto d : n.shape) o << ',' << d;
    for (const auto& w : n.weights) {
      o << "|w";
      for (auto d : w.shape) o << ',' << d;
      o << ':' << std::string(reinterpret_cast<const char*>(w.data.data()), w.data.size() * sizeof(w.data[0]));
    }
    o << '\n';
  }
  return o.str() + encode_graph(g);
}

void expect_error(IsolatedParser parse, const std::string& want) {
  try {
    parse_isolated(parse, "x", 1, "file.bin");
    ADD_FAILURE() << "no error; wanted one containing: " << want;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

void expect_every_outcome() {
  const Graph g = parse_isolated(&echo_parser, "bytes", 5, "label");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "label:bytes");
  expect_error(&throwing_parser, "file.bin: refused on purpose");
  expect_error(&crashing_parser, "file.bin: malformed file: the parser crashed on it (signal 11)");
  ::setenv("TICKINFER_LOAD_TIMEOUT_S", "1", 1);
  expect_error(&hanging_parser, "file.bin: malformed file: parsing did not finish within 1 s");
  ::unsetenv("TICKINFER_LOAD_TIMEOUT_S");
}

// One process, in order: the fork path, a refused start while a second thread runs, the loader
// process, and Keras files loaded on several threads at once through it.
TEST(IsolatedLoad, EveryOutcomeComesBackByForkAndThroughTheLoaderProcess) {
  const IsolatedLoadCounts before = isolated_load_counts();
  expect_every_outcome();
  EXPECT_EQ(isolated_load_counts().via_fork - before.via_fork, 4u);
  EXPECT_EQ(isolated_load_counts().via_loader_process, before.via_loader_process);

  std::atomic<bool> release{false};
  std::thread other([&] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_FALSE(start_loader_process()) << "started while a second thread ran";
  release = true;
  other.join();

  ASSERT_TRUE(start_loader_process()) << "this test must start with one thread";
  EXPECT_TRUE(start_loader_process());  // already running
  const IsolatedLoadCounts mid = isolated_load_counts();
  expect_every_outcome();
  EXPECT_EQ(isolated_load_counts().via_loader_process - mid.via_loader_process, 4u);
  EXPECT_EQ(isolated_load_counts().via_fork, mid.via_fork);
}

TEST(IsolatedLoad, KerasFilesOnSeveralThreadsThroughTheLoaderProcessMatchAForkedLoad) {
  const std::vector<std::string> files = {fixture("dense_act_k3/model.keras"), fixture("dense_act_k2/model.h5"),
                                          fixture("lstm_last_k3/model.keras")};
  std::vector<std::string> forked;
  // Forked loads when this test has its own process (as ctest runs it); the loader is started next.
  for (const auto& f : files) forked.push_back(canonical(load_model_file(f)));
  ASSERT_TRUE(start_loader_process()) << "this test must start with one thread";
  const IsolatedLoadCounts before = isolated_load_counts();
  constexpr int kThreads = 4, kRounds = 3;
  std::atomic<int> same{0}, different{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        for (size_t i = 0; i < files.size(); ++i) {
          (canonical(load_model_file(files[i])) == forked[i] ? same : different)++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(same.load(), kThreads * kRounds * static_cast<int>(files.size()));
  EXPECT_EQ(different.load(), 0);
  const IsolatedLoadCounts after = isolated_load_counts();
  EXPECT_EQ(after.via_loader_process - before.via_loader_process, uint64_t{kThreads * kRounds * files.size()});
  EXPECT_EQ(after.via_fork, before.via_fork);
  // A half-written file through the loader: the parser's own error, nothing else.
  const std::string half = read_file(files[0]).substr(0, 200);
  EXPECT_THROW(load_model_bytes(half.data(), half.size(), "half.keras"), Error);
  EXPECT_EQ(isolated_load_counts().via_loader_process - after.via_loader_process, 1u);
}

}  // namespace
}  // namespace tickinfer::formats
