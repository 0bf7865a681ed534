// Safety options of the REST server through real sockets: bearer token, CORS, connection
// limit, NaN/Inf policy.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <vector>

#include "serving/model_server.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

const std::string kBody = "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}";

std::unique_ptr<ModelServer> start(const TempDir& d, void (*tweak)(ServerFlags&)) {
  if (!std::filesystem::exists(d.model_path("mlp"))) {
    d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  }
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 1;
  f.file_system_poll_wait_seconds = -1;
  tweak(f);
  auto s = std::make_unique<ModelServer>(f);
  s->start();
  return s;
}

TEST(ServingLimits, BearerToken) {
  TempDir d;
  std::ofstream(d.path() + "/token") << "s3cret\n";
  static std::string token_file;
  token_file = d.path() + "/token";
  auto s = start(d, [](ServerFlags& f) { f.bearer_token_file = token_file; });
  HttpClient c(s->rest_port());
  auto r = c.request("POST", "/v1/models/mlp:predict", kBody);
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.headers.find("WWW-Authenticate: Bearer"), std::string::npos);
  EXPECT_NE(r.body.find("bearer token"), std::string::npos);
  EXPECT_EQ(c.request("POST", "/v1/models/mlp:predict", kBody, "Authorization: Bearer wrong\r\n").status, 401);
  EXPECT_EQ(c.request("POST", "/v1/models/mlp:predict", kBody, "Authorization: Bearer s3cret\r\n").status, 200);
  EXPECT_EQ(c.request("GET", "/v1/models/mlp", "", "Authorization: Bearer s3cret\r\n").status, 200);
  EXPECT_EQ(c.request("GET", "/healthz").status, 200);  // probes need no token
  EXPECT_EQ(c.request("GET", "/readyz").status, 200);
}

TEST(ServingLimits, CorsHeadersAndPreflight) {
  TempDir d;
  auto s = start(d, [](ServerFlags& f) { f.rest_api_enable_cors_support = true; });
  HttpClient c(s->rest_port());
  auto r = c.request("POST", "/v1/models/mlp:predict", kBody);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.headers.find("Access-Control-Allow-Origin: *"), std::string::npos);
  EXPECT_NE(r.headers.find("Access-Control-Allow-Methods: POST, GET"), std::string::npos);
  r = c.request("OPTIONS", "/v1/models/mlp:predict", "", "Origin: https://example.com\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.headers.find("Access-Control-Allow-Headers: Content-Type"), std::string::npos);
  r = c.request("OPTIONS", "/v1/models/mlp:predict");
  EXPECT_EQ(r.status, 400);
}

TEST(ServingLimits, ConnectionLimit) {
  TempDir d;
  auto s = start(d, [](ServerFlags& f) { f.max_connections = 2; });
  HttpClient a(s->rest_port()), b(s->rest_port());
  EXPECT_EQ(a.request("GET", "/healthz").status, 200);
  EXPECT_EQ(b.request("GET", "/healthz").status, 200);
  HttpClient third(s->rest_port());
  const auto r = third.read_reply();  // answered without sending anything
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("too many connections"), std::string::npos);
  EXPECT_TRUE(third.peer_closed());
  EXPECT_EQ(a.request("GET", "/healthz").status, 200);  // the others are unaffected
}

// Each new connection goes to the worker with the fewest: 8 connections on 4 workers, 2 each
// (the kernel's wake-ups alone put most of them on one worker, where a batched request of one
// connection would stall the others).
TEST(ServingLimits, ConnectionsSpreadEvenlyOverTheWorkers) {
  HttpServer::Options o;
  o.bind_address = "127.0.0.1";
  o.threads = 4;
  std::atomic<int> served[4] = {};
  HttpServer server(o, [&](const HttpRequest&, uint64_t, size_t worker, HttpResponse& resp) {
    served[worker].fetch_add(1);
    resp.status = 200;
    resp.body = "ok";
  });
  server.start();
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(std::make_unique<HttpClient>(server.port()));
    ASSERT_EQ(clients.back()->request("GET", "/x").status, 200);  // accepted and placed before the next
  }
  for (int k = 0; k < 4; ++k) EXPECT_EQ(served[k].load(), 2) << "worker " << k;
  for (auto& c : clients) EXPECT_EQ(c->request("GET", "/x").status, 200);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(served[k].load(), 4) << "worker " << k;  // each stays where it was placed
  server.stop();
}

TEST(ServingLimits, NonFinitePolicyAllowPassesNaNThrough) {
  TempDir d;
  auto s = start(d, [](ServerFlags& f) { f.reject_nonfinite = false; });
  HttpClient c(s->rest_port());
  const auto r = c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[NaN,2,3,4,5,6,7,8,9,-Infinity]]}");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("predictions"), std::string::npos);
}

}  // namespace
