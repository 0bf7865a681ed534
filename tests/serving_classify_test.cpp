// Classify, Regress and MultiInference end to end: real ModelServers on loopback ports serving the
// committed SavedModel tests/fixtures/serving/classify/1 (classify / regress signatures that
// tf.io.parse_example their tf.Examples, tools/make_classify_fixtures.py). Expected outputs are
// the ones TensorFlow computed for the same examples (expected.json); the examples sent over gRPC
// are the bytes tf.train.Example serialized. Tolerance: |got - want| <= 1e-6 + 1e-5 * |want|
// (float32; the engine sums in another order than TensorFlow). REST answers are read back with
// nlohmann::json; gRPC runs on both server implementations (tickinfer's HTTP/2 and grpc++'s).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serving/model_server.hpp"
#include "serving/request_log_format.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

using nlohmann::json;
using tickinfer::serving::ModelServer;
using tickinfer::serving::ServerFlags;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;
namespace tfs = tensorflow::serving;

namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;

void expect_near(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), kAtol + kRtol * std::fabs(want)) << what << ": got " << got << ", want " << want;
}

std::string base64_decode(const std::string& in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* p = std::strchr(digits, c);
    if (c == '=' || !p) continue;
    acc = (acc << 6) | static_cast<uint32_t>(p - digits);
    bits += 6;
    if (bits >= 8) out += static_cast<char>((acc >> (bits -= 8)) & 0xff);
  }
  return out;
}

const json& expected() {
  static const json e = json::parse(std::ifstream(tickinfer::testing::fixture_path("serving/classify/expected.json")));
  return e;
}

class ClassifyServer {
 public:
  // REST only (grpc = false) or gRPC only, on any free port.
  ClassifyServer(bool grpc, bool native, bool method_name_check, const std::string& request_log = "") {
    std::filesystem::create_directories(dir_.path() + "/cls");
    std::filesystem::copy(tickinfer::testing::fixture_path("serving/classify/1"), dir_.path() + "/cls/1",
                          std::filesystem::copy_options::recursive);
    ServerFlags f;
    f.model_name = "cls";
    f.model_base_path = dir_.model_path("cls");
    f.rest_api_bind_address = "127.0.0.1";
    f.grpc = grpc;
    f.grpc_native = native;
    f.grpc_port = 0;
    f.grpc_max_threads = 2;
    f.rest_api_num_threads = 2;
    f.max_batch_size = 16;
    f.file_system_poll_wait_seconds = -1;
    f.enable_signature_method_name_check = method_name_check;
    f.request_log_file = request_log;
    if (!grpc) {
      f.monitoring_config_file = dir_.path() + "/monitoring.config";
      std::ofstream(f.monitoring_config_file) << "prometheus_config { enable: true path: \"/metrics\" }\n";
    }
    server_ = std::make_unique<ModelServer>(f);
    server_->start();
  }
  int rest_port() const { return server_->rest_port(); }
  void stop() { server_.reset(); }  // drains the request log
  std::unique_ptr<tfs::PredictionService::Stub> stub() const {
    return tfs::PredictionService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()), grpc::InsecureChannelCredentials()));
  }

 private:
  TempDir dir_;
  std::unique_ptr<ModelServer> server_;
};

tickinfer::testing::HttpReply post(int port, const std::string& verb, const json& body) {
  HttpClient c(port);
  return c.request("POST", "/v1/models/cls:" + verb, body.dump());
}

void expect_classifications(const json& results, size_t first, size_t count) {
  const json& e = expected()["classify"];
  ASSERT_EQ(results.size(), count);
  for (size_t r = 0; r < count; ++r) {
    ASSERT_EQ(results[r].size(), 3u);
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(results[r][c][0].get<std::string>(), e["classes"][first + r][c].get<std::string>());
      expect_near(results[r][c][1].get<double>(), e["scores"][first + r][c].get<double>(), "score " + std::to_string(r));
    }
  }
}

TEST(ServingClassifyRest, ClassifyAndRegressMatchTensorFlow) {
  ClassifyServer s(false, true, false);
  const json examples = expected()["examples"];
  auto r = post(s.rest_port(), "classify", {{"signature_name", "classify"}, {"examples", examples}});
  ASSERT_EQ(r.status, 200) << r.body;
  expect_classifications(json::parse(r.body)["results"], 0, examples.size());
  r = post(s.rest_port(), "regress", {{"signature_name", "regress"}, {"examples", examples}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json values = json::parse(r.body)["results"];
  ASSERT_EQ(values.size(), examples.size());
  for (size_t i = 0; i < values.size(); ++i) {
    expect_near(values[i].get<double>(), expected()["regress"]["outputs"][i].get<double>(), "regression " + std::to_string(i));
  }
  // The context is merged into every example: example 0's w given once for two copies of its x.
  const json ctx = {{"w", examples[0]["w"]}};
  const json xs = json::array({{{"x", examples[0]["x"]}}, {{"x", examples[0]["x"]}}});
  r = post(s.rest_port(), "classify", {{"signature_name", "classify"}, {"context", ctx}, {"examples", xs}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json both = json::parse(r.body)["results"];
  expect_classifications(json::array({both[0]}), 0, 1);
  expect_classifications(json::array({both[1]}), 0, 1);
  // Counted as Predict is: request_count, and request_latency under the REST verb's API label.
  HttpClient m(s.rest_port());
  const std::string metrics = m.request("GET", "/metrics").body;
  EXPECT_NE(metrics.find(":tensorflow:serving:request_latency_count{model_name=\"cls\",API=\"classify\",entrypoint=\"REST\"} 2"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find(":tensorflow:serving:request_latency_count{model_name=\"cls\",API=\"regress\",entrypoint=\"REST\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find(":tensorflow:serving:request_count{model_name=\"cls\",status=\"OK\"} 3"), std::string::npos);
  // Predict on serving_default, as before, from the dense features TF saw.
  json inst = json::array();
  for (size_t i = 0; i < examples.size(); ++i) inst.push_back({{"x", expected()["predict"]["x"][i]}, {"w", expected()["predict"]["w"][i]}});
  r = post(s.rest_port(), "predict", {{"instances", inst}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json p = json::parse(r.body)["predictions"];
  for (size_t i = 0; i < examples.size(); ++i) {
    expect_near(p[i]["value"][0].get<double>(), expected()["predict"]["value"][i][0].get<double>(), "predict value");
  }
}

TEST(ServingClassifyRest, ErrorsAreTfServings) {
  ClassifyServer s(false, true, false);
  const json x = expected()["examples"][0]["x"];
  struct Case {
    json body;
    const char* verb;
    int http;
    const char* message;
  };
  const Case cases[] = {
      {{{"signature_name", "classify"}, {"examples", {{{"w", {1.5, 2.5}}}}}}, "classify", 400,
       "Feature: x (data type: float) is required but could not be found."},
      {{{"signature_name", "classify"}, {"examples", {{{"x", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}}}}}, "classify", 400,
       "Data types don't match. Data type: int64 but expected type: float"},
      {{{"signature_name", "regress"}, {"examples", {{{"x", {1.5}}}}}}, "regress", 400, "Values size: 1 but output shape: [10]"},
      {{{"examples", {{{"x", x}}}}}, "classify", 400, "Expected one input Tensor."},  // serving_default: x and w
      {{{"signature_name", "classify"}, {"examples", {{{"x", x}}}}}, "regress", 400, "Expected one output Tensor."},
      {{{"signature_name", "regress"}, {"examples", {{{"x", x}}}}}, "classify", 400, "Expected classification signature outputs"},
      {{{"signature_name", "nope"}, {"examples", {{{"x", x}}}}}, "classify", 400, "No signature was found with the name: nope"},
      {{{"signature_name", "sparse"}, {"examples", {{{"x", x}}}}}, "classify", 501, "sparse feature(s) 'x'"},
      {{{"signature_name", "classify"}, {"examples", json::array()}}, "classify", 400, "'examples' value is an empty array"},
  };
  for (const Case& c : cases) {
    const auto r = post(s.rest_port(), c.verb, c.body);
    EXPECT_EQ(r.status, c.http) << c.body.dump() << " -> " << r.body;
    EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find(c.message), std::string::npos) << r.body;
  }
  HttpClient m(s.rest_port());
  const auto meta = json::parse(m.request("GET", "/v1/models/cls/metadata").body);
  const json& defs = meta["metadata"]["signature_def"]["signature_def"];
  for (const char* k : {"serving_default", "classify", "regress", "sparse"}) EXPECT_TRUE(defs.contains(k)) << k;
  EXPECT_EQ(defs["classify"]["method_name"], "tensorflow/serving/classify");
}

TEST(ServingClassifyRest, MethodNameCheckRefusesPredictSignatures) {
  ClassifyServer s(false, true, true);
  const json x = expected()["examples"][0]["x"];
  auto r = post(s.rest_port(), "classify", {{"signature_name", "classify"}, {"examples", {{{"x", x}}}}});
  EXPECT_EQ(r.status, 200) << r.body;
  r = post(s.rest_port(), "classify", {{"signature_name", "sparse"}, {"examples", {{{"x", x}}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("Expected classification signature method_name to be tensorflow/serving/classify. Was: "
                        "tensorflow/serving/predict"),
            std::string::npos)
      << r.body;
  r = post(s.rest_port(), "regress", {{"signature_name", "classify"}, {"examples", {{{"x", x}}}}});
  EXPECT_NE(r.body.find("Expected regression signature method_name to be tensorflow/serving/regress"), std::string::npos) << r.body;
}

// ---- gRPC, on both implementations ----

class ServingClassifyGrpc : public ::testing::TestWithParam<bool> {
 protected:
  static void add_examples(tfs::Input& in, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      in.mutable_example_list()->add_examples(base64_decode(expected()["serialized_b64"][i].get<std::string>()));
    }
  }
  // A Classify or Regress request for model "cls", signature `sig`, the first `count` examples.
  template <class Request>
  static Request request(const char* sig, size_t count) {
    Request r;
    r.mutable_model_spec()->set_name("cls");
    r.mutable_model_spec()->set_signature_name(sig);
    add_examples(*r.mutable_input(), count);
    return r;
  }
  // MultiInference: a regress task, then a classify task, over the first `count` examples.
  static tfs::MultiInferenceRequest multi_request(size_t count) {
    tfs::MultiInferenceRequest r;
    for (const char* sig : {"regress", "classify"}) {
      auto* t = r.add_tasks();
      t->mutable_model_spec()->set_name("cls");
      t->mutable_model_spec()->set_signature_name(sig);
      t->set_method_name(std::string("tensorflow/serving/") + (sig[0] == 'r' ? "regress" : "classify"));
    }
    add_examples(*r.mutable_input(), count);
    return r;
  }
  static grpc::ClientContext* context(std::unique_ptr<grpc::ClientContext>& holder) {
    holder = std::make_unique<grpc::ClientContext>();
    holder->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return holder.get();
  }
};

void expect_results(const tfs::ClassificationResult& got, size_t count) {
  const json& e = expected()["classify"];
  ASSERT_EQ(got.classifications_size(), static_cast<int>(count));
  for (size_t r = 0; r < count; ++r) {
    const auto& c = got.classifications(static_cast<int>(r));
    ASSERT_EQ(c.classes_size(), 3);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(c.classes(k).label(), e["classes"][r][k].get<std::string>());
      expect_near(c.classes(k).score(), e["scores"][r][k].get<double>(), "score");
    }
  }
}

void expect_results(const tfs::RegressionResult& got, size_t count) {
  ASSERT_EQ(got.regressions_size(), static_cast<int>(count));
  for (size_t r = 0; r < count; ++r) {
    expect_near(got.regressions(static_cast<int>(r)).value(), expected()["regress"]["outputs"][r].get<double>(), "value");
  }
}

TEST_P(ServingClassifyGrpc, ClassifyRegressAndMultiInferenceMatchTensorFlow) {
  ClassifyServer s(true, GetParam(), false);
  auto stub = s.stub();
  const size_t n = expected()["examples"].size();
  std::unique_ptr<grpc::ClientContext> ctx;
  tfs::ClassificationRequest creq = request<tfs::ClassificationRequest>("classify", n);
  tfs::ClassificationResponse cresp;
  grpc::Status st = stub->Classify(context(ctx), creq, &cresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  expect_results(cresp.result(), n);
  EXPECT_EQ(cresp.model_spec().name(), "cls");
  EXPECT_EQ(cresp.model_spec().version().value(), 1);
  EXPECT_EQ(cresp.model_spec().signature_name(), "classify");

  tfs::RegressionRequest rreq = request<tfs::RegressionRequest>("regress", n);
  tfs::RegressionResponse rresp;
  st = stub->Regress(context(ctx), rreq, &rresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  expect_results(rresp.result(), n);

  tfs::MultiInferenceRequest mreq = multi_request(n);
  tfs::MultiInferenceResponse mresp;
  st = stub->MultiInference(context(ctx), mreq, &mresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(mresp.results_size(), 2);
  expect_results(mresp.results(0).regression_result(), n);
  expect_results(mresp.results(1).classification_result(), n);
  EXPECT_EQ(mresp.results(1).model_spec().signature_name(), "classify");
  EXPECT_EQ(mresp.results(1).model_spec().version().value(), 1);

  // Context: example 0's bytes as the context, an empty example merged over it.
  tfs::ClassificationRequest wreq = creq;
  auto* l = wreq.mutable_input()->mutable_example_list_with_context();
  l->set_context(base64_decode(expected()["serialized_b64"][0].get<std::string>()));
  l->add_examples("");
  st = stub->Classify(context(ctx), wreq, &cresp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  expect_results(cresp.result(), 1);
}

// The request log records example calls as it records Predict: one record per call (per task of
// a MultiInference), with the decoded features (the dense floats TensorFlow parsed) and the outputs.
TEST_P(ServingClassifyGrpc, CallsAreLoggedWithTheirDecodedFeaturesAndOutputs) {
  TempDir logs;
  const std::string log = logs.path() + "/requests.tkrlog";
  ClassifyServer s(true, GetParam(), false, log);
  auto stub = s.stub();
  const size_t n = expected()["examples"].size();
  std::unique_ptr<grpc::ClientContext> ctx;
  tfs::ClassificationRequest creq = request<tfs::ClassificationRequest>("classify", n);
  tfs::ClassificationResponse cresp;
  ASSERT_TRUE(stub->Classify(context(ctx), creq, &cresp).ok());
  tfs::RegressionRequest rreq = request<tfs::RegressionRequest>("regress", n);
  tfs::RegressionResponse rresp;
  ASSERT_TRUE(stub->Regress(context(ctx), rreq, &rresp).ok());
  tfs::MultiInferenceRequest mreq = multi_request(n);
  tfs::MultiInferenceResponse mresp;
  ASSERT_TRUE(stub->MultiInference(context(ctx), mreq, &mresp).ok());
  creq.mutable_model_spec()->set_signature_name("nope");
  EXPECT_EQ(stub->Classify(context(ctx), creq, &cresp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  s.stop();

  using tickinfer::serving::LoggedMethod;
  const auto c = tickinfer::serving::read_request_log(log);
  ASSERT_FALSE(c.torn_tail) << c.tail_problem;
  ASSERT_EQ(c.requests.size(), 5u);
  const LoggedMethod methods[] = {LoggedMethod::Classify, LoggedMethod::Regress, LoggedMethod::Regress,
                                  LoggedMethod::Classify, LoggedMethod::Classify};
  const char* sigs[] = {"classify", "regress", "regress", "classify", "nope"};
  for (size_t i = 0; i < 5; ++i) {
    const auto& r = c.requests[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(r.method, methods[i]);
    EXPECT_EQ(r.signature, sigs[i]);
    EXPECT_EQ(r.model, "cls");
    EXPECT_EQ(r.version, 1);
    if (i == 4) {
      EXPECT_EQ(r.status, tickinfer::serving::StatusCode::InvalidArgument);
      EXPECT_FALSE(r.has_inputs);
      EXPECT_NE(r.message.find("nope"), std::string::npos) << r.message;
      continue;
    }
    ASSERT_TRUE(r.has_inputs && r.has_outputs);
    ASSERT_EQ(r.batch, n);
    // The features as TensorFlow parsed them (the predict signature's dense inputs).
    for (const auto& t : r.inputs) {
      const json& want = expected()["predict"][t.name];
      ASSERT_EQ(t.values.size(), n * t.floats_per_row) << t.name;
      for (size_t k = 0; k < t.values.size(); ++k) {
        const json& row = want[k / t.floats_per_row];
        const double w = row.is_array() ? row[k % t.floats_per_row].get<double>() : row.get<double>();
        expect_near(t.values[k], w, t.name);
      }
    }
    EXPECT_GT(r.compute_ns, 0u);
  }
  // Classify's scores output is what the client got.
  const auto* scores = &c.requests[0].outputs[0];
  for (const auto& t : c.requests[0].outputs) {
    if (t.name == "scores") scores = &t;
  }
  ASSERT_EQ(scores->values.size(), n * 3);
  for (size_t r = 0; r < n; ++r) {
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(scores->values[r * 3 + k], cresp.result().classifications(static_cast<int>(r)).classes(static_cast<int>(k)).score());
  }
}

TEST_P(ServingClassifyGrpc, ErrorsAreTfServings) {
  ClassifyServer s(true, GetParam(), false);
  auto stub = s.stub();
  std::unique_ptr<grpc::ClientContext> ctx;
  auto classify = [&](const std::string& model, const std::string& sig, size_t examples) {
    tfs::ClassificationRequest req;
    req.mutable_model_spec()->set_name(model);
    req.mutable_model_spec()->set_signature_name(sig);
    add_examples(*req.mutable_input(), examples);
    tfs::ClassificationResponse resp;
    return stub->Classify(context(ctx), req, &resp);
  };
  grpc::Status st = classify("cls", "classify", 0);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "Input is empty.");
  st = classify("nope", "classify", 1);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "Servable not found for request: Latest(nope)");
  st = classify("cls", "", 1);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "Expected one input Tensor.");
  st = classify("cls", "sparse", 1);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  tfs::ClassificationRequest bad;
  bad.mutable_model_spec()->set_name("cls");
  bad.mutable_model_spec()->set_signature_name("classify");
  bad.mutable_input()->mutable_example_list()->add_examples("\x0a\x05");
  tfs::ClassificationResponse resp;
  st = stub->Classify(context(ctx), bad, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("tf.Example: truncated"), std::string::npos) << st.error_message();

  struct Task {
    const char* model;
    const char* sig;
    const char* method;
  };
  auto multi = [&](std::vector<Task> tasks) {
    tfs::MultiInferenceRequest req;
    for (const Task& t : tasks) {
      auto* k = req.add_tasks();
      k->mutable_model_spec()->set_name(t.model);
      k->mutable_model_spec()->set_signature_name(t.sig);
      k->set_method_name(t.method);
    }
    add_examples(*req.mutable_input(), 1);
    tfs::MultiInferenceResponse r;
    return stub->MultiInference(context(ctx), req, &r);
  };
  const char* cm = "tensorflow/serving/classify";
  const char* rm = "tensorflow/serving/regress";
  const struct {
    std::vector<Task> tasks;
    grpc::StatusCode code;
    const char* message;
  } cases[] = {
      {{{"cls", "classify", cm}, {"other", "regress", rm}}, grpc::StatusCode::INVALID_ARGUMENT,
       "All ModelSpecs in a MultiInferenceRequest must access the same model name."},
      {{{"cls", "classify", cm}, {"cls", "classify", cm}}, grpc::StatusCode::INVALID_ARGUMENT, "Duplicate evaluation of signature: classify"},
      {{{"cls", "classify", cm}, {"cls", "nope", rm}}, grpc::StatusCode::INVALID_ARGUMENT, "Requested signature not found in model graph: nope"},
      {{{"cls", "classify", "tensorflow/serving/predict"}}, grpc::StatusCode::UNIMPLEMENTED,
       "Unsupported signature method_name: tensorflow/serving/predict"},
      {{{"cls", "classify", cm}, {"cls", "sparse", cm}}, grpc::StatusCode::INVALID_ARGUMENT, "Input tensor must be the same for all Signatures."},
      {{{"cls", "classify", rm}}, grpc::StatusCode::INVALID_ARGUMENT, "Expected one output Tensor."},
      {{{"", "classify", cm}}, grpc::StatusCode::NOT_FOUND, "Servable not found"},
  };
  for (const auto& c : cases) {
    st = multi(c.tasks);
    EXPECT_EQ(st.error_code(), c.code) << c.message << " -> " << st.error_message();
    EXPECT_NE(st.error_message().find(c.message), std::string::npos) << st.error_message();
  }
}

INSTANTIATE_TEST_SUITE_P(Implementations, ServingClassifyGrpc, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? std::string("native") : std::string("grpcpp"); });

}  // namespace
