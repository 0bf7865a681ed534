// The request log: sampled JSON lines written by the background thread, with the fields the
// docs promise, through a real server.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "serving/model_server.hpp"
#include "serving/request_log.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

TEST(ServingRequestLog, Fnv1a64KnownVectors) {
  // Published FNV-1a 64-bit test vectors.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(ServingRequestLog, SampledLinesWithModelVersionStatusLatencies) {
  TempDir d;
  d.add_version("mlp", "4", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const std::string log = d.path() + "/requests.jsonl";
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 1;
  f.file_system_poll_wait_seconds = -1;
  f.request_log_file = log;
  f.request_log_sample_rate = 0.5;
  const std::string good = "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}";
  const std::string bad = "{\"instances\": [[1]]}";
  {
    ModelServer server(f);
    server.start();
    HttpClient c(server.rest_port());
    for (int i = 0; i < 10; ++i) ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", good).status, 200);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", bad).status, 400);
  }  // the server's destructor drains the log
  std::ifstream in(log);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 6u);  // every 2nd of 12 requests
  for (size_t i = 0; i < 5; ++i) {
    const auto& j = lines[i];
    EXPECT_EQ(j["model"], "mlp");
    EXPECT_EQ(j["version"], 4);
    EXPECT_EQ(j["status"], "OK");
    EXPECT_GE(j["total_us"].get<double>(), j["compute_us"].get<double>());
    EXPECT_GT(j["compute_us"].get<double>(), 0.0);
    char fp[17];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(fnv1a64(good)));
    EXPECT_EQ(j["input_fingerprint"], fp);
    EXPECT_EQ(j["time"].get<std::string>().size(), 27u);  // 2026-11-30T04:44:01.123456Z
  }
  EXPECT_EQ(lines[5]["status"], "INVALID_ARGUMENT");
}

}  // namespace
