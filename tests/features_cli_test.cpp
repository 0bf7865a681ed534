// `tickinfer features` end to end: the real binary over the reference ticks, its .npy output
// checked against the pandas reference, its CSV output readable, and its errors (bad spec line,
// malformed ticks, signature mismatch) reported with exit code 1 and a message naming the input.
// Then `features --watch shm:NAME` over a store this test writes: labels from the store, fresh
// and stale entries told apart, and a store that is absent or not a store refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "features/shm_feature_store.hpp"
#include "stats/clock.hpp"
#include "support/features_test_support.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::features {
namespace {

const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";

struct Result {
  int code;
  std::string out;
};

class FeaturesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tickinfer_features_cli_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result run(const std::string& args) const {
    const std::string log = (dir_ / "log.txt").string();
    const int status = std::system((kBinary + " " + args + " >" + log + " 2>&1").c_str());
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(FeaturesCli, WritesTheReferenceMatrix) {
  const std::string fx = test::fixture_dir();
  const Result r = run("features " + fx + "/spec_drop.toml --input " + fx + "/ticks.csv --output " + path("out.npy") +
                       " --raw --counters");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rows: observed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("invalid_crossed_book"), std::string::npos) << r.out;
  const auto got = test::read_npy_f8(path("out.npy"));
  const auto want = test::read_npy_f8(fx + "/expected_drop.npy");
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  for (std::size_t i = 0; i < got.data.size(); ++i)
    ASSERT_TRUE(test::close(got.data[i], want.data[i], 1e-9, 1e-12)) << "element " << i;
  ASSERT_EQ(run("features " + fx + "/spec_drop.toml --input " + fx + "/ticks.csv --output " + path("out.csv")).code, 0);
  std::ifstream csv(path("out.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("instrument,bar,state,warm,mid,microprice,", 0), 0u) << header;
}

TEST_F(FeaturesCli, BadInputsAreReportedWithTheirLocation) {
  const std::string fx = test::fixture_dir();
  std::ofstream(path("bad.toml")) << "[feature_set]\ninstruments = [7]\n[[feature]]\nkind = \"nope\"\n";
  Result r = run("features " + path("bad.toml") + " --input " + fx + "/ticks.csv --output " + path("o.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("line 4: unknown feature kind 'nope'"), std::string::npos) << r.out;
  std::ofstream(path("bad.csv")) << "ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n1,7,Q,1,2,3\n";
  r = run("features " + fx + "/spec_drop.toml --input " + path("bad.csv") + " --output " + path("o.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("bad.csv': line 2: expected 10 fields, got 6"), std::string::npos) << r.out;
  r = run("features " + fx + "/spec_drop.toml --input " + fx + "/ticks.csv");
  EXPECT_EQ(r.code, 2);  // usage
  r = run("features " + fx + "/spec_drop.toml --input " + fx + "/ticks.csv --output " + path("o.txt"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("expected a .npy or .csv"), std::string::npos) << r.out;
}

TEST_F(FeaturesCli, RefusesAModelTrainedOnOtherFeatures) {
  const std::string fx = test::fixture_dir();
  std::filesystem::create_directories(dir_ / "model");
  std::filesystem::copy_file(std::string(::tickinfer::test::source_dir()) + "/bench/models/mlp_small/model.keras", dir_ / "model" / "model.keras");
  std::ofstream(dir_ / "model" / "features.toml") << "[feature_set]\ninstruments = [7]\n[[feature]]\nkind = \"spread_bps\"\n";
  const Result r = run("features " + fx + "/spec_drop.toml --input " + fx + "/ticks.csv --output " + path("o.npy") +
                       " --model " + (dir_ / "model" / "model.keras").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("feature signature mismatch at position 0"), std::string::npos) << r.out;
}

TEST_F(FeaturesCli, WatchShowsAStoreWithItsOwnNamesAndTellsFreshFromStale) {
  const FeatureSpec spec = parse_feature_spec(
      "[feature_set]\nname = \"watched\"\ninstruments = [5, 9, 12]\n[[feature]]\nkind = \"mid\"\n"
      "[[feature]]\nkind = \"spread_bps\"\nname = \"spread_now\"\n");
  const std::string name = "tickinfer-watch-" + std::to_string(getpid());
  ShmFeatureWriter::unlink("/" + name);
  ShmFeatureWriter w("/" + name, spec, 60'000'000'000LL);  // 60 s
  const std::int64_t now = stats::realtime_ns();
  w.heartbeat(now);
  const double fresh[2] = {101.25, 3.5}, old[2] = {99.5, 7.25};
  ShmRowMeta m;
  m.flags = kShmAllWarm;
  m.tick_seq = 777;
  m.published_ns = now;
  w.publish(0, fresh, m);               // instrument 5: fresh
  m.tick_seq = 12;
  m.published_ns = now - 120'000'000'000LL;  // two minutes ago: past the TTL
  w.publish(2, old, m);                 // instrument 12: stale; 9 never written
  const Result r = run("features --watch shm:" + name + " --count 2 --interval-ms 10");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("set 'watched', 3 instruments x 2 features, ttl 60000 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spread_now"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("101.25"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("777"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" stale "), std::string::npos) << r.out;
  // Two snapshots, each with one fresh, one stale and one never written.
  const std::string summary = "1 fresh, 1 stale, 1 never written, 0 busy";
  const auto first = r.out.find(summary);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(summary, first + 1), std::string::npos) << r.out;

  const Result absent = run("features --watch shm:tickinfer-watch-absent-" + std::to_string(getpid()) + " --count 1");
  EXPECT_EQ(absent.code, 1);
  EXPECT_NE(absent.out.find("is the writer running?"), std::string::npos) << absent.out;
  const Result bad = run("features --watch tcp:1.2.3.4:5");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--watch expects shm:NAME, ring:NAME or udp:HOST:PORT"), std::string::npos) << bad.out;
  ShmFeatureWriter::unlink("/" + name);
}

}  // namespace
}  // namespace tickinfer::features
