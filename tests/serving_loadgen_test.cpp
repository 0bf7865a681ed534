// `tickinfer loadgen` against a real `tickinfer serve` (processes on loopback): closed loop over
// REST and gRPC answers every request it sends (counted against what it was told to send), an
// unknown model makes every request an error (counted, exit status 1), the open loop keeps its
// rate with queue + service adding up to the total, and --json / --hgrm / --compare read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pipeline_test_support.hpp"
#include "support/source_paths.hpp"

using namespace pipeline_test;

namespace {

struct Server {
  Server() {
    const std::string base = temp("loadgen-models/mlp");
    std::filesystem::create_directories(base + "/1");
    std::filesystem::copy_file(std::string(::tickinfer::test::source_dir()) + "/bench/models/mlp_small/model.keras", base + "/1/model.keras",
                               std::filesystem::copy_options::overwrite_existing);
    rest = base_port() + 6;
    grpc = base_port() + 7;
    proc = start({"serve", "--rest_api_port=" + std::to_string(rest), "--port=" + std::to_string(grpc),
                  "--rest_api_bind_address=127.0.0.1", "--model_name=mlp", "--model_base_path=" + base,
                  "--file_system_poll_wait_seconds=-1", "--rest_api_num_threads=2"},
                 temp("loadgen-serve.out"));
    std::string out;
    for (int i = 0; i < 300; ++i) {
      if (run_cli({"loadgen", "rest://127.0.0.1:" + std::to_string(rest) + "/mlp", "--input", kInput, "--workers", "1",
                   "--requests", "1"},
                  out, 10) == 0)
        return;
      usleep(100000);
    }
    ADD_FAILURE() << "server not ready: " << slurp(proc.out_path);
  }
  ~Server() {
    kill(proc.pid, SIGTERM);
    wait_for(proc, 20);
  }
  const std::string kInput = std::string(::tickinfer::test::source_dir()) + "/bench/models/mlp_small/in0.npy";
  int rest = 0, grpc = 0;
  Process proc;
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(ServingLoadgen, ClosedLoopRestAndGrpcCountEveryRequest) {
  Server s;
  for (const std::string scheme : {"rest", "grpc"}) {
    const int port = scheme == "rest" ? s.rest : s.grpc;
    const std::string json = temp("loadgen-" + scheme + ".json"), hgrm = temp("loadgen-" + scheme + ".hgrm");
    std::string out;
    ASSERT_EQ(run_cli({"loadgen", scheme + "://127.0.0.1:" + std::to_string(port) + "/mlp", "--input", s.kInput,
                       "--workers", "4", "--requests", "50", "--json", json, "--hgrm", hgrm, "--html",
                       temp("loadgen-" + scheme + ".html")},
                      out, 60),
              0)
        << out;
    EXPECT_NE(out.find("200 ok, 0 errors, 0 connections broken"), std::string::npos) << out;
    const auto j = read_json(json);
    EXPECT_EQ(j["ok"].get<int>(), 200);
    EXPECT_EQ(j["mode"], "closed");
    EXPECT_EQ(j["service"]["count"].get<int>(), 200);
    EXPECT_LE(j["service"]["p50_us"].get<double>(), j["service"]["p99_us"].get<double>());
    EXPECT_LE(j["service"]["p99_us"].get<double>(), j["service"]["max_us"].get<double>());
    const std::string h = slurp(hgrm);
    EXPECT_EQ(h.rfind("       Value     Percentile TotalCount 1/(1-Percentile)", 0), 0u) << h;
    EXPECT_NE(h.find("Total count    =          200]"), std::string::npos) << h;
  }
  // The page: the table and the percentile plot, self-contained (no script, no external asset).
  const std::string page = slurp(temp("loadgen-rest.html"));
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("<polyline"), std::string::npos);
  EXPECT_NE(page.find("service (sent -&gt; answer)"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));
  std::string cmp;
  ASSERT_EQ(run_cli({"loadgen", temp("loadgen-rest.json"), "--compare", temp("loadgen-grpc.json"), "--html",
                     temp("loadgen-compare.html")},
                    cmp),
            0)
      << cmp;
  const std::string both = slurp(temp("loadgen-compare.html"));
  EXPECT_NE(both.find(">A service"), std::string::npos) << both.substr(0, 400);
  EXPECT_NE(both.find(">B service"), std::string::npos);
  EXPECT_NE(cmp.find("service"), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("B / A"), std::string::npos) << cmp;
  EXPECT_EQ(cmp.find("queue"), std::string::npos) << cmp;  // closed loop: no queue to compare
}

TEST(ServingLoadgen, ErrorsAreCountedAndFailTheRun) {
  Server s;
  std::string out;
  EXPECT_EQ(run_cli({"loadgen", "rest://127.0.0.1:" + std::to_string(s.rest) + "/nosuchmodel", "--input", s.kInput,
                     "--workers", "2", "--requests", "25"},
                    out, 60),
            1)
      << out;
  EXPECT_NE(out.find("0 ok, 50 errors"), std::string::npos) << out;
  EXPECT_NE(run_cli({"loadgen", "rest://127.0.0.1:1/mlp", "--input", s.kInput}, out, 20), 0);
  EXPECT_NE(out.find("cannot connect"), std::string::npos) << out;
  EXPECT_NE(run_cli({"loadgen", "http://x/mlp"}, out, 20), 0);
  EXPECT_NE(out.find("expected rest://HOST:PORT/MODEL"), std::string::npos) << out;
}

TEST(ServingLoadgen, OpenLoopKeepsItsRateAndSplitsQueueFromService) {
  Server s;
  const std::string json = temp("loadgen-open.json");
  std::string out;
  ASSERT_EQ(run_cli({"loadgen", "rest://127.0.0.1:" + std::to_string(s.rest) + "/mlp", "--input", s.kInput, "--workers",
                     "4", "--rate", "400", "--seconds", "1.5", "--warmup-seconds", "0.5", "--json", json},
                    out, 60),
            0)
      << out;
  const auto j = read_json(json);
  EXPECT_EQ(j["mode"], "open");
  EXPECT_EQ(j["ok"].get<int>(), 600);  // 400/s for 1.5 s after the unmeasured half second
  for (const char* p : {"p50_us", "p99_us", "max_us"}) {
    EXPECT_GE(j["total"][p].get<double>() + 1, j["service"][p].get<double>()) << p;  // due -> answer >= sent -> answer
  }
  EXPECT_NEAR(j["total"]["mean_us"].get<double>(), j["service"]["mean_us"].get<double>() + j["queue"]["mean_us"].get<double>(),
              1.0);  // means add up exactly (up to the bucket rounding of none: means are exact)
}

}  // namespace
