// The request log's purpose, end to end: a gRPC session against a real `tickinfer serve` is
// logged, and `tickinfer replay` re-runs it. Against the version that served it: 0 differences.
// Against another version (the int8 build of the same model, made by `tickinfer quantize`): the
// requests whose outputs change, counted independently here by running both models directly.
// A torn tail (a crash mid-write) is reported and skipped.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "serving/model_server.hpp"
#include "serving/request_log.hpp"
#include "support/serving_repo.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"
#include "tickinfer/tickinfer.hpp"
#include "support/source_paths.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::TempDir;
namespace tfs = tensorflow::serving;

namespace {

const std::string kBinary = std::string(::tickinfer::test::binary_dir()) + "/tickinfer";

std::string run_cli(const std::string& args, int* rc) {
  std::string out;
  std::FILE* p = ::popen((kBinary + " " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

struct Sent {
  std::vector<float> rows;     // batch x 10
  std::vector<float> outputs;  // what the server answered (batch x 1)
  grpc::StatusCode code = grpc::StatusCode::OK;
};

class ServingRequestReplay : public ::testing::TestWithParam<bool> {};

TEST_P(ServingRequestReplay, SameVersionGivesNoDifferencesAnotherVersionItsChangedOutputs) {
  TempDir d;
  const std::string model = tickinfer::testing::bench_model("mlp_small/model.keras");
  const std::string v1 = d.add_version("mlp", "1", model);
  const std::string v2 = d.path() + "/mlp_int8.tkq";
  int rc = -1;
  const std::string q = run_cli("quantize " + model + " --calibration " +
                                    tickinfer::testing::bench_model("mlp_small/in0.npy") + " --mode int8 -o " + v2,
                                &rc);
  ASSERT_EQ(rc, 0) << q;
  const std::string log = d.path() + "/session.tkrlog";
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc_port = 0;
  f.grpc_max_threads = 2;
  f.grpc_native = GetParam();
  f.file_system_poll_wait_seconds = -1;
  f.request_log_file = log;
  std::vector<Sent> sent(63);
  std::mt19937 rng(20261202);
  std::normal_distribution<float> value(0.0f, 1.5f);
  {
    ModelServer server(f);
    server.start();
    auto stub = tfs::PredictionService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server.grpc_port()), grpc::InsecureChannelCredentials()));
    for (size_t i = 0; i < sent.size(); ++i) {
      const bool bad = i % 21 == 20;  // 3 calls with the wrong width
      const int batch = 1 + static_cast<int>(i % 3), width = bad ? 7 : 10;
      tfs::PredictRequest req;
      req.mutable_model_spec()->set_name("mlp");
      auto& t = (*req.mutable_inputs())["input_layer"];
      t.set_dtype(tensorflow::DT_FLOAT);
      t.mutable_tensor_shape()->add_dim()->set_size(batch);
      t.mutable_tensor_shape()->add_dim()->set_size(width);
      for (int k = 0; k < batch * width; ++k) sent[i].rows.push_back(value(rng));
      if (i % 2) {  // both encodings clients use
        t.set_tensor_content(sent[i].rows.data(), sent[i].rows.size() * sizeof(float));
      } else {
        for (float v : sent[i].rows) t.add_float_val(v);
      }
      tfs::PredictResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      sent[i].code = stub->Predict(&ctx, req, &resp).error_code();
      ASSERT_EQ(sent[i].code, bad ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::OK) << i;
      if (!bad) {
        const auto& out = resp.outputs().begin()->second.float_val();
        sent[i].outputs.assign(out.begin(), out.end());
      }
    }
  }  // stopping the server drains the log

  // The log holds every call, its decoded inputs and exactly the outputs the client got.
  const RequestLogContents c = read_request_log(log);
  ASSERT_FALSE(c.torn_tail) << c.tail_problem;
  ASSERT_EQ(c.requests.size(), sent.size());
  std::map<uint64_t, const Sent*> by_fingerprint;
  const std::vector<TensorSpec> spec = {{"input_layer", {10}, 10}};
  for (const Sent& s : sent) {
    if (s.code != grpc::StatusCode::OK) continue;
    const float* in[] = {s.rows.data()};
    by_fingerprint[input_fingerprint(spec, in, s.rows.size() / 10)] = &s;
  }
  size_t ok = 0;
  for (const LoggedRequest& r : c.requests) {
    EXPECT_EQ(r.api, LoggedApi::Grpc);
    if (r.status != StatusCode::Ok) continue;
    ++ok;
    const auto it = by_fingerprint.find(r.input_fingerprint);
    ASSERT_NE(it, by_fingerprint.end()) << "a logged fingerprint matches no sent input";
    ASSERT_TRUE(r.has_inputs && r.has_outputs);
    EXPECT_EQ(r.inputs[0].values, it->second->rows);
    EXPECT_EQ(r.outputs[0].values, it->second->outputs);
  }
  EXPECT_EQ(ok, 60u);

  // Replayed through the version that served it: the same bits.
  std::string out = run_cli("replay " + log + " --model " + v1, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("requests: 63 logged, 60 replayed, 3 not OK"), std::string::npos) << out;
  EXPECT_NE(out.find("differences: 0 of 60 replayed requests"), std::string::npos) << out;

  // Through the int8 build: the requests whose outputs change, counted here without the log.
  tickinfer::Plan p1 = tickinfer::compile(tickinfer::Model::load(model));
  tickinfer::Plan p2 = tickinfer::compile(tickinfer::Model::load(v2));
  size_t changed = 0;
  for (const Sent& s : sent) {
    if (s.code != grpc::StatusCode::OK) continue;
    bool differs = false;
    for (size_t row = 0; row < s.rows.size() / 10; ++row) {
      float y1 = 0, y2 = 0;
      p1.run(s.rows.data() + 10 * row, &y1);
      p2.run(s.rows.data() + 10 * row, &y2);
      EXPECT_EQ(y1, s.outputs[row]);  // the server's answer is the plain engine's
      differs = differs || y1 != y2;
    }
    changed += differs;
  }
  ASSERT_GT(changed, 0u);
  out = run_cli("replay " + log + " --model " + v2, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("differences: " + std::to_string(changed) + " of 60 replayed requests"), std::string::npos)
      << out;
  EXPECT_NE(out.find("first differences:"), std::string::npos) << out;

  // A crash that tore the last request record: reported, and the records before it replay.
  std::filesystem::resize_file(log, c.requests.back().offset + 30);
  out = run_cli("replay " + log + " --model " + v1, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("log tail: truncated record"), std::string::npos) << out;
  EXPECT_NE(out.find("requests: 62 logged"), std::string::npos) << out;
  EXPECT_NE(out.find("differences: 0 of"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Implementations, ServingRequestReplay, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "native" : "grpcpp"; });

}  // namespace
