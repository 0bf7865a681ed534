// Every answer to an inference call goes through the request log, errors included: one line per
// sampled REST POST (predict, classify, regress, and the POSTs rejected before a route: bad
// token, malformed path) and per gRPC Predict, on both gRPC implementations. Status, metadata
// and probes are not inference calls and are not logged.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>

#include "serving/model_server.hpp"
#include "serving/request_log_format.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

const std::string kGood = "{\"instances\": [[1,2,3,4,5,6,7,8,9,10]]}";

std::vector<LoggedRequest> read_records(const std::string& path) {
  RequestLogContents c = read_request_log(path);
  EXPECT_FALSE(c.torn_tail) << c.tail_problem;
  return std::move(c.requests);
}

// The fingerprint of kGood's decoded row.
uint64_t good_fingerprint() {
  const float row[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(row), sizeof row));
}

ServerFlags rest_flags(const TempDir& d, const std::string& log, double rate) {
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 1;  // one worker: the lines come in request order
  f.file_system_poll_wait_seconds = -1;
  f.request_log_file = log;
  f.request_log_sample_rate = rate;
  return f;
}

TEST(ServingRequestLogErrors, RestLogsEveryInferenceAnswerErrorsIncluded) {
  TempDir d;
  d.add_version("mlp", "4", tickinfer::testing::bench_model("mlp_small/model.keras"));
  std::ofstream(d.path() + "/token") << "s3cret\n";
  const std::string log = d.path() + "/requests.tkrlog";
  ServerFlags f = rest_flags(d, log, 1.0);
  f.bearer_token_file = d.path() + "/token";
  const std::string auth = "Authorization: Bearer s3cret\r\n";
  struct Sent {
    const char* method;
    std::string path, body, headers;
    int http;
    const char* model;  // in the log line; nullptr: not logged
    int version;
    const char* status;
  };
  const std::vector<Sent> sent = {
      {"POST", "/v1/models/mlp:predict", kGood, auth, 200, "mlp", 4, "OK"},
      {"POST", "/v1/models/mlp:predict", "{not json", auth, 400, "mlp", 4, "INVALID_ARGUMENT"},
      {"POST", "/v1/models/nope:predict", kGood, auth, 404, "", -1, "NOT_FOUND"},
      {"POST", "/v1/models/mlp/versions/9:predict", kGood, auth, 404, "mlp", -1, "NOT_FOUND"},
      {"POST", "/v1/models/mlp:predict", "{\"signature_name\": \"x\", \"instances\": [[1,2,3,4,5,6,7,8,9,10]]}",
       auth, 400, "mlp", 4, "INVALID_ARGUMENT"},
      {"POST", "/v1/models/mlp:predict", kGood, "", 401, "mlp", -1, "UNAUTHENTICATED"},
      {"POST", "/v1/models/mlp:predict", kGood, "Authorization: Bearer wrong\r\n", 401, "mlp", -1,
       "UNAUTHENTICATED"},
      {"POST", "/v1/models/mlp:classify", kGood, auth, 400, "mlp", -1, "INVALID_ARGUMENT"},  // no "examples"
      {"POST", "/v1/models/mlp", kGood, auth, 404, "", -1, "NOT_FOUND"},
      {"POST", "/v1/elsewhere", kGood, auth, 404, "", -1, "NOT_FOUND"},
      {"GET", "/v1/models/mlp", "", auth, 200, nullptr, 0, nullptr},
      {"GET", "/v1/models/nope", "", auth, 404, nullptr, 0, nullptr},
      {"GET", "/v1/models/mlp/metadata", "", auth, 200, nullptr, 0, nullptr},
      {"GET", "/v1/models/mlp", "", "", 401, nullptr, 0, nullptr},
      {"GET", "/healthz", "", "", 200, nullptr, 0, nullptr},
      {"POST", "/v1/models/mlp:predict", kGood, auth, 200, "mlp", 4, "OK"},
  };
  {
    ModelServer server(f);
    server.start();
    HttpClient c(server.rest_port());
    for (const Sent& s : sent) {
      ASSERT_EQ(c.request(s.method, s.path, s.body, s.headers).status, s.http) << s.method << " " << s.path;
    }
  }  // the server's destructor drains the log
  const auto lines = read_records(log);
  std::vector<const Sent*> logged;
  for (const Sent& s : sent) {
    if (s.model) logged.push_back(&s);
  }
  ASSERT_EQ(lines.size(), logged.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const Sent& s = *logged[i];
    SCOPED_TRACE(s.path + " " + s.headers);
    EXPECT_EQ(lines[i].model, s.model);
    EXPECT_EQ(lines[i].version, s.version);
    EXPECT_STREQ(status_code_name(lines[i].status), s.status);
    EXPECT_EQ(lines[i].api, LoggedApi::Rest);
    const bool ok = lines[i].status == StatusCode::Ok;
    EXPECT_EQ(lines[i].input_fingerprint, ok ? good_fingerprint() : 0u);  // errors here come before decoding
    EXPECT_EQ(lines[i].message.empty(), ok);
  }
  EXPECT_GT(lines.front().compute_ns, 0u);
  EXPECT_EQ(lines[1].compute_ns, 0u);  // refused before compute
  EXPECT_NE(lines[1].message.find("JSON Parse error"), std::string::npos) << lines[1].message;
}

TEST(ServingRequestLogErrors, RestSamplingCountsErrorsLikeSuccesses) {
  TempDir d;
  d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const std::string log = d.path() + "/requests.tkrlog";
  {
    ModelServer server(rest_flags(d, log, 0.25));
    server.start();
    HttpClient c(server.rest_port());
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(c.request("POST", "/v1/models/mlp:predict", kGood).status, 200);
      ASSERT_EQ(c.request("POST", "/v1/models/nope:predict", kGood).status, 404);
      ASSERT_EQ(c.request("GET", "/v1/models/mlp").status, 200);  // not an inference call
    }
  }
  const auto lines = read_records(log);
  ASSERT_EQ(lines.size(), 4u);  // one in 4 of the 16 POSTs, the GETs not counted
  for (const auto& r : lines) EXPECT_EQ(r.status, StatusCode::Ok);  // the 1st, 5th, 9th, 13th POST
}

class ServingRequestLogGrpc : public ::testing::TestWithParam<bool> {};

TEST_P(ServingRequestLogGrpc, EveryPredictAnswerIsLogged) {
  TempDir d;
  d.add_version("mlp", "2", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const std::string log = d.path() + "/requests.tkrlog";
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc_port = 0;
  f.grpc_max_threads = 1;
  f.grpc_native = GetParam();
  f.file_system_poll_wait_seconds = -1;
  f.request_log_file = log;
  namespace tfs = tensorflow::serving;
  auto predict = [](tfs::PredictionService::Stub& stub, const std::string& model, int width, const char* sig) {
    tfs::PredictRequest req;
    req.mutable_model_spec()->set_name(model);
    if (sig) req.mutable_model_spec()->set_signature_name(sig);
    auto& t = (*req.mutable_inputs())["input_layer"];
    t.set_dtype(tensorflow::DT_FLOAT);
    t.mutable_tensor_shape()->add_dim()->set_size(1);
    t.mutable_tensor_shape()->add_dim()->set_size(width);
    for (int i = 0; i < width; ++i) t.add_float_val(static_cast<float>(i));
    tfs::PredictResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub.Predict(&ctx, req, &resp).error_code();
  };
  {
    ModelServer server(f);
    server.start();
    auto stub = tfs::PredictionService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server.grpc_port()), grpc::InsecureChannelCredentials()));
    EXPECT_EQ(predict(*stub, "mlp", 10, nullptr), grpc::StatusCode::OK);
    EXPECT_EQ(predict(*stub, "nope", 10, nullptr), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(predict(*stub, "mlp", 3, nullptr), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(predict(*stub, "mlp", 10, "other"), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(predict(*stub, "mlp", 10, nullptr), grpc::StatusCode::OK);
  }
  const auto lines = read_records(log);
  ASSERT_EQ(lines.size(), 5u);
  const StatusCode status[] = {StatusCode::Ok, StatusCode::NotFound, StatusCode::InvalidArgument,
                               StatusCode::InvalidArgument, StatusCode::Ok};
  const int version[] = {2, -1, 2, 2, 2};
  const char* model[] = {"mlp", "", "mlp", "mlp", "mlp"};
  const char* signature[] = {"serving_default", "", "serving_default", "other", "serving_default"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lines[i].status, status[i]) << i;
    EXPECT_EQ(lines[i].version, version[i]) << i;
    EXPECT_EQ(lines[i].model, model[i]) << i;
    EXPECT_EQ(lines[i].signature, signature[i]) << i;
    EXPECT_EQ(lines[i].api, LoggedApi::Grpc) << i;
    EXPECT_EQ(lines[i].has_outputs, status[i] == StatusCode::Ok) << i;
  }
  EXPECT_GT(lines[0].compute_ns, 0u);
  // The gRPC input was 0..9: its decoded floats are the fingerprint.
  float row[10];
  for (int k = 0; k < 10; ++k) row[k] = static_cast<float>(k);
  EXPECT_EQ(lines[0].input_fingerprint, fnv1a64(std::string_view(reinterpret_cast<const char*>(row), sizeof row)));
  EXPECT_EQ(lines[4].input_fingerprint, lines[0].input_fingerprint);
  EXPECT_NE(lines[2].message.find("must have shape"), std::string::npos) << lines[2].message;
}

INSTANTIATE_TEST_SUITE_P(Implementations, ServingRequestLogGrpc, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "native" : "grpcpp"; });

}  // namespace
