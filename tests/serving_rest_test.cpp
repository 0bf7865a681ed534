// The REST API of `tickinfer serve`, end to end: a real ModelServer on a loopback port, real
// sockets, the committed Keras fixtures; expected outputs are the ones Keras itself produced
// (in*.npy -> out*.npy). Responses are read back with nlohmann::json, an independent parser.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/npy.hpp"
#include "serving/model_server.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"

using nlohmann::json;
using tickinfer::formats::NpyArray;
using tickinfer::formats::read_npy;
using tickinfer::serving::ModelServer;
using tickinfer::serving::ServerFlags;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;

class RestTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    dir_->add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
    dir_->add_version("two", "3", tickinfer::testing::fixture_path("merge_two_in_two_out_k3/model.keras"));
    dir_->add_version("two", "7", tickinfer::testing::fixture_path("merge_two_in_two_out_k3/model.keras"));
    const std::string config = dir_->path() + "/models.config";
    std::ofstream(config) << "model_config_list {\n"
                             "  config { name: 'mlp' base_path: '" << dir_->model_path("mlp") << "'\n"
                             "           model_platform: \"tensorflow\" }\n"
                             "  config { name: 'two' base_path: '" << dir_->model_path("two") << "'\n"
                             "           model_version_policy { all {} }\n"
                             "           version_labels { key: 'stable' value: 3 }\n"
                             "           version_labels { key: 'canary' value: 7 } }\n"
                             "}\n";
    const std::string monitoring = dir_->path() + "/monitoring.config";
    std::ofstream(monitoring) << "prometheus_config { enable: true path: \"/monitoring/prometheus/metrics\" }\n";
    ServerFlags f;
    f.model_config_file = config;
    f.monitoring_config_file = monitoring;
    f.rest_api_bind_address = "127.0.0.1";
    f.grpc = false;
    f.rest_api_port = 0;
    f.rest_api_num_threads = 2;
    f.max_body_bytes = 64 * 1024;
    f.max_batch_size = 64;
    f.file_system_poll_wait_seconds = -1;
    server_ = new ModelServer(f);
    server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  static int port() { return server_->rest_port(); }

  static json instances_of(const NpyArray& a, size_t rows) {
    json inst = json::array();
    const size_t width = a.data.size() / static_cast<size_t>(a.shape[0]);
    for (size_t r = 0; r < rows; ++r) {
      json row = json::array();
      for (size_t c = 0; c < width; ++c) row.push_back(a.data[r * width + c]);
      inst.push_back(row);
    }
    return inst;
  }
  static void expect_rows_near(const json& got, const NpyArray& ref, size_t rows) {
    const size_t width = ref.data.size() / static_cast<size_t>(ref.shape[0]);
    ASSERT_TRUE(got.is_array());
    ASSERT_EQ(got.size(), rows);
    for (size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(got[r].size(), width);
      for (size_t c = 0; c < width; ++c) {
        const double want = ref.data[r * width + c];
        const double have = got[r][c].get<double>();
        EXPECT_LE(std::fabs(have - want), kAtol + kRtol * std::fabs(want)) << "row " << r << " col " << c;
      }
    }
  }

  static TempDir* dir_;
  static ModelServer* server_;
};
TempDir* RestTest::dir_ = nullptr;
ModelServer* RestTest::server_ = nullptr;

json body_of(const tickinfer::testing::HttpReply& r) { return json::parse(r.body); }

TEST_F(RestTest, StatusListsEveryVersionAsTfServingPrintsIt) {
  HttpClient c(port());
  auto r = c.request("GET", "/v1/models/two");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos);
  const json j = body_of(r);
  ASSERT_EQ(j["model_version_status"].size(), 2u);
  std::set<std::string> versions;
  for (const auto& v : j["model_version_status"]) {
    versions.insert(v["version"].get<std::string>());  // int64 as a JSON string
    EXPECT_EQ(v["state"], "AVAILABLE");
    EXPECT_EQ(v["status"]["error_code"], "OK");
    EXPECT_EQ(v["status"]["error_message"], "");
  }
  EXPECT_EQ(versions, (std::set<std::string>{"3", "7"}));
  r = c.request("GET", "/v1/models/two/versions/3");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(body_of(r)["model_version_status"].size(), 1u);
  r = c.request("GET", "/v1/models/two/labels/canary");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(body_of(r)["model_version_status"][0]["version"], "7");
  r = c.request("GET", "/V1/Models/two");  // matching is case-insensitive
  EXPECT_EQ(r.status, 200);
}

TEST_F(RestTest, MetadataHasTheSignatureDefTwiceAndTheModelsTensors) {
  HttpClient c(port());
  const auto r = c.request("GET", "/v1/models/two/labels/stable/metadata");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = body_of(r);
  EXPECT_EQ(j["model_spec"]["name"], "two");
  EXPECT_EQ(j["model_spec"]["version"], "3");
  EXPECT_EQ(j["model_spec"]["signature_name"], "");
  const json& sig = j["metadata"]["signature_def"]["signature_def"]["serving_default"];
  EXPECT_EQ(sig["method_name"], "tensorflow/serving/predict");
  ASSERT_EQ(sig["inputs"].size(), 2u);
  const json& in = sig["inputs"]["input_layer"];
  EXPECT_EQ(in["dtype"], "DT_FLOAT");
  EXPECT_EQ(in["tensor_shape"]["dim"][0]["size"], "-1");
  EXPECT_EQ(in["tensor_shape"]["dim"][1]["size"], "8");
  EXPECT_EQ(in["tensor_shape"]["unknown_rank"], false);
  EXPECT_EQ(sig["inputs"]["input_layer_1"]["tensor_shape"]["dim"][1]["size"], "5");
  EXPECT_EQ(sig["outputs"]["dense_3"]["tensor_shape"]["dim"][1]["size"], "4");
  EXPECT_EQ(sig["outputs"]["dense_4"]["tensor_shape"]["dim"][1]["size"], "2");
}

TEST_F(RestTest, RowFormatPredictMatchesKeras) {
  const NpyArray x = read_npy(tickinfer::testing::bench_model("mlp_small/in0.npy"));
  const NpyArray y = read_npy(tickinfer::testing::bench_model("mlp_small/out0.npy"));
  const size_t rows = static_cast<size_t>(x.shape[0]);
  HttpClient c(port());
  const auto r = c.request("POST", "/v1/models/mlp:predict", json{{"instances", instances_of(x, rows)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos);
  expect_rows_near(body_of(r)["predictions"], y, rows);
  // The same through the version path, a signature name, and with NaN-free numbers in
  // exponent form.
  const auto r2 = c.request("POST", "/v1/models/mlp/versions/1:predict",
                            json{{"signature_name", "serving_default"}, {"instances", instances_of(x, 1)}}.dump());
  ASSERT_EQ(r2.status, 200) << r2.body;
  expect_rows_near(body_of(r2)["predictions"], y, 1);
}

TEST_F(RestTest, ColumnarFormatPredictMatchesKeras) {
  const NpyArray x = read_npy(tickinfer::testing::bench_model("mlp_small/in0.npy"));
  const NpyArray y = read_npy(tickinfer::testing::bench_model("mlp_small/out0.npy"));
  HttpClient c(port());
  // Bare value for a one-input model ...
  auto r = c.request("POST", "/v1/models/mlp:predict", json{{"inputs", instances_of(x, 3)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  expect_rows_near(body_of(r)["outputs"], y, 3);
  // ... or keyed by the input name.
  r = c.request("POST", "/v1/models/mlp:predict", json{{"inputs", {{"input_layer", instances_of(x, 2)}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  expect_rows_near(body_of(r)["outputs"], y, 2);
}

TEST_F(RestTest, MultiInputMultiOutputInBothFormats) {
  const std::string f = "merge_two_in_two_out_k3/";
  const NpyArray x0 = read_npy(tickinfer::testing::fixture_path(f + "in0.npy"));
  const NpyArray x1 = read_npy(tickinfer::testing::fixture_path(f + "in1.npy"));
  const NpyArray y0 = read_npy(tickinfer::testing::fixture_path(f + "out0.npy"));
  const NpyArray y1 = read_npy(tickinfer::testing::fixture_path(f + "out1.npy"));
  const size_t rows = static_cast<size_t>(x0.shape[0]);
  HttpClient c(port());
  json inst = json::array();
  const json a = instances_of(x0, rows), b = instances_of(x1, rows);
  for (size_t r = 0; r < rows; ++r) inst.push_back({{"input_layer", a[r]}, {"input_layer_1", b[r]}});
  auto r = c.request("POST", "/v1/models/two:predict", json{{"instances", inst}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json preds = body_of(r)["predictions"];
  ASSERT_EQ(preds.size(), rows);
  json col0 = json::array(), col1 = json::array();
  for (const auto& p : preds) {
    ASSERT_EQ(p.size(), 2u);  // one object per row: {output name: value}
    col0.push_back(p["dense_3"]);
    col1.push_back(p["dense_4"]);
  }
  expect_rows_near(col0, y0, rows);
  expect_rows_near(col1, y1, rows);

  r = c.request("POST", "/v1/models/two/labels/canary:predict",
                json{{"inputs", {{"input_layer", a}, {"input_layer_1", b}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json outs = body_of(r)["outputs"];
  expect_rows_near(outs["dense_3"], y0, rows);
  expect_rows_near(outs["dense_4"], y1, rows);

  // A row missing an input, or with an extra key, is refused.
  r = c.request("POST", "/v1/models/two:predict", json{{"instances", {{{"input_layer", a[0]}}}}}.dump());
  EXPECT_EQ(r.status, 400);
  r = c.request("POST", "/v1/models/two:predict",
                json{{"inputs", {{"input_layer", a}}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(body_of(r)["error"].get<std::string>().find("Missing named input"), std::string::npos);
}

struct ErrorCase {
  const char* method;
  const char* path;
  const char* body;
  int status;
  const char* message_part;
};

TEST_F(RestTest, ErrorsHaveTfServingCodesAndJsonBodies) {
  const std::string big(70 * 1024, ' ');
  const ErrorCase cases[] = {
      {"POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3", 400, "JSON Parse error"},
      {"POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]], \"inputs\": []}", 400, "only one of"},
      {"POST", "/v1/models/mlp:predict", "{\"signature_name\": \"nope\", \"instances\": [[1,2,3,4,5,6,7,8,9,10]]}", 400, "nope"},
      {"POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3]]}", 400, "shape [-1,10]"},
      {"POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3,4,5,6,7,8,9,\"x\"]]}", 400, "DT_FLOAT"},
      {"POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3,4,5,6,7,8,9,NaN]]}", 400, "NaN"},
      {"POST", "/v1/models/mlp:predict", "{\"instances\": []}", 400, "non-empty"},
      {"POST", "/v1/models/mlp:predict", "{}", 400, "Missing 'inputs' or 'instances'"},
      {"POST", "/v1/models/half:predict", "{\"instances\": [1]}", 404, "Servable not found for request: Latest(half)"},
      {"POST", "/v1/models/mlp/versions/9:predict", "{\"instances\": [1]}", 404, "Servable not found"},
      {"POST", "/v1/models/mlp/labels/none:predict", "{\"instances\": [1]}", 404, "label"},
      {"POST", "/v1/models/mlp/versions/1/labels/x:predict", "{}", 400, "not both"},
      {"POST", "/v1/models/mlp:classify", "{\"examples\": []}", 400, "'examples' value is an empty array"},
      {"POST", "/v1/models/mlp:regress", "{\"instances\": [[1]]}", 400, "key 'examples' is expected"},
      // A Keras model's one signature is a predict signature: TF Serving's checks of its shape.
      {"POST", "/v1/models/mlp:classify", "{\"examples\": [{\"x\": 1.5}]}", 400, "No classification inputs found"},
      {"POST", "/v1/models/two:regress", "{\"examples\": [{\"x\": 1.5}]}", 400, "Expected one input Tensor."},
      {"POST", "/v1/models/mlp:classify", "{\"signature_name\": \"tensorflow/serving/classify\", \"examples\": [{}]}", 400,
       "No signature was found with the name: tensorflow/serving/classify"},
      {"POST", "/v1/models/mlp:explain", "{}", 404, "Malformed request"},
      {"GET", "/v1/models", "", 400, "Missing model name in request."},
      {"GET", "/v1/models/nope", "", 404, "nope"},
      {"GET", "/v1/models/mlp/versions/5", "", 404, "version 5"},
      {"GET", "/v2/health", "", 404, "Malformed request"},
      {"DELETE", "/v1/models/mlp", "", 404, "Malformed request"},
  };
  HttpClient c(port());
  for (const auto& e : cases) {
    SCOPED_TRACE(std::string(e.method) + " " + e.path + " " + e.body);
    const auto r = c.request(e.method, e.path, e.body);
    EXPECT_EQ(r.status, e.status) << r.body;
    EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos);
    const json j = body_of(r);
    ASSERT_TRUE(j.contains("error"));
    EXPECT_NE(j["error"].get<std::string>().find(e.message_part), std::string::npos) << j["error"];
  }
  // A batch over --max_batch_size (64 here).
  std::string many = "{\"instances\": [";
  for (int i = 0; i < 65; ++i) many += std::string(i ? "," : "") + "[1,2,3,4,5,6,7,8,9,10]";
  many += "]}";
  auto r = c.request("POST", "/v1/models/mlp:predict", many);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("limit of 64"), std::string::npos);
  // A body over --max_body_bytes: 413, and the connection is closed.
  HttpClient c2(port());
  r = c2.request("POST", "/v1/models/mlp:predict", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(r.closed);
}

TEST_F(RestTest, KeepAlivePipeliningAndExpectContinue) {
  HttpClient c(port());
  const std::string body = "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}";
  const std::string one = "POST /v1/models/mlp:predict HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
  c.send_raw(one + one + one);  // three requests in one segment
  std::string first;
  for (int i = 0; i < 3; ++i) {
    const auto r = c.read_reply();
    ASSERT_EQ(r.status, 200);
    if (i == 0) first = r.body;
    EXPECT_EQ(r.body, first);  // same input, same answer
  }
  for (int i = 0; i < 200; ++i) ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", body).status, 200);
  // curl sends Expect: 100-continue for larger bodies and waits for the interim answer.
  c.send_raw("POST /v1/models/mlp:predict HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n");
  auto r = c.read_reply();
  EXPECT_EQ(r.status, 100);
  c.send_raw(body);
  r = c.read_reply();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, first);
  // HTTP/1.0 without keep-alive closes after the answer.
  c.send_raw("GET /healthz HTTP/1.0\r\n\r\n");
  r = c.read_reply();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.closed);
}

TEST_F(RestTest, MalformedHttpGetsAnAnswerAndAClose) {
  const char* bad[] = {
      "GET /v1/models/mlp HTTP/1.1\nHost: x\n\n",                 // bare LF
      "GET v1/models/mlp HTTP/1.1\r\n\r\n",                        // not a path
      "GET /v1/models/mlp HTTP/2.0\r\n\r\n",                       // version
      "POST /v1/models/mlp:predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "G(T / HTTP/1.1\r\n\r\n",
  };
  const int want[] = {400, 400, 505, 501, 400, 400};
  for (size_t i = 0; i < std::size(bad); ++i) {
    HttpClient c(port());
    c.send_raw(bad[i]);
    const auto r = c.read_reply();
    EXPECT_EQ(r.status, want[i]) << bad[i];
    EXPECT_NE(r.headers.find("Content-Type: application/json"), std::string::npos);
    EXPECT_TRUE(r.closed);
  }
}

TEST_F(RestTest, HealthAndReadiness) {
  HttpClient c(port());
  EXPECT_EQ(c.request("GET", "/healthz").status, 200);
  const auto r = c.request("GET", "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(body_of(r)["status"], "ready");
}

TEST_F(RestTest, PrometheusMetricsCountRequestsAndPassPromtool) {
  HttpClient c(port());
  ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}").status, 200);
  ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", "{\"instances\": [[1]]}").status, 400);
  const auto r = c.request("GET", "/monitoring/prometheus/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.headers.find("Content-Type: text/plain"), std::string::npos);
  EXPECT_NE(r.body.find(":tensorflow:serving:request_count{model_name=\"mlp\",status=\"OK\"}"), std::string::npos);
  EXPECT_NE(r.body.find(":tensorflow:serving:request_count{model_name=\"mlp\",status=\"INVALID_ARGUMENT\"}"),
            std::string::npos);
  EXPECT_NE(r.body.find(":tensorflow:serving:request_latency_bucket{model_name=\"mlp\",API=\"predict\",entrypoint=\"REST\",le=\"10\"}"),
            std::string::npos);
  EXPECT_NE(r.body.find(":tickinfer:serving:compute_latency_count{model_name=\"mlp\",entrypoint=\"REST\"}"),
            std::string::npos);
  // promtool (Debian package prometheus) is the independent judge of the exposition format.
  const bool have = std::system("command -v promtool >/dev/null 2>&1") == 0;
  if (!have) {
    if (std::getenv("TICKINFER_REQUIRE_PROMTOOL")) FAIL() << "promtool not installed";
    GTEST_SKIP() << "promtool not installed (make serving-test installs it)";
  }
  TempDir d;
  const std::string file = d.path() + "/metrics.txt";
  std::ofstream(file) << r.body;
  const std::string cmd = "promtool check metrics < " + file + " > " + d.path() + "/out.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream out(d.path() + "/out.txt");
  const std::string report((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  // promtool exits 3 for lint warnings only (e.g. naming advice), 1 for format errors.
  EXPECT_TRUE(rc == 0 || WEXITSTATUS(rc) == 3) << report;
  EXPECT_EQ(report.find("error"), std::string::npos) << report;
}

}  // namespace
