// gRPC with TLS (--ssl_config_file, TF Serving's SSLConfig with PEM contents): a C++ gRPC client
// over a real TLS connection gets Keras' answers; a plaintext client is refused. The certificate
// is made by the openssl command line for this run.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "formats/npy.hpp"
#include "serving/model_server.hpp"
#include "serving/server_config.hpp"
#include "tickinfer/error.hpp"
#include "support/serving_repo.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

using namespace tickinfer::serving;
using tickinfer::testing::TempDir;

namespace {

std::string read_all(const std::string& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string text_proto_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '\n') o += "\\n";
    else if (c == '"') o += "\\\"";
    else o += c;
  }
  return o + "\"";
}

TEST(ServingGrpcTls, PredictOverTlsAndRefusePlaintext) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "openssl not installed";
  TempDir d;
  const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                          "-addext subjectAltName=DNS:localhost -keyout " + d.path() + "/key.pem -out " +
                          d.path() + "/cert.pem >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string key = read_all(d.path() + "/key.pem"), cert = read_all(d.path() + "/cert.pem");
  std::ofstream(d.path() + "/ssl.config") << "server_key: " << text_proto_string(key) << "\n"
                                          << "server_cert: " << text_proto_string(cert) << "\n";
  d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc_port = 0;  // any free port
  f.grpc_max_threads = 2;
  f.file_system_poll_wait_seconds = -1;
  f.ssl_config_file = d.path() + "/ssl.config";
  ModelServer server(f);
  server.start();
  ASSERT_GT(server.grpc_port(), 0);

  const auto x = tickinfer::formats::read_npy(tickinfer::testing::bench_model("mlp_small/in0.npy"));
  const auto y = tickinfer::formats::read_npy(tickinfer::testing::bench_model("mlp_small/out0.npy"));
  tensorflow::serving::PredictRequest req;
  req.mutable_model_spec()->set_name("mlp");
  auto& t = (*req.mutable_inputs())["input_layer"];
  t.set_dtype(tensorflow::DT_FLOAT);
  t.mutable_tensor_shape()->add_dim()->set_size(x.shape[0]);
  t.mutable_tensor_shape()->add_dim()->set_size(10);
  t.set_tensor_content(std::string(reinterpret_cast<const char*>(x.data.data()), x.data.size() * sizeof(float)));

  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = cert;
  auto stub = tensorflow::serving::PredictionService::NewStub(
      grpc::CreateChannel("localhost:" + std::to_string(server.grpc_port()), grpc::SslCredentials(ssl)));
  tensorflow::serving::PredictResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const grpc::Status st = stub->Predict(&ctx, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  const auto& out = resp.outputs().at("dense_3");
  ASSERT_EQ(static_cast<size_t>(out.float_val_size()), y.data.size());
  for (size_t i = 0; i < y.data.size(); ++i) {
    EXPECT_LE(std::fabs(out.float_val(static_cast<int>(i)) - y.data[i]), 1e-6 + 1e-5 * std::fabs(y.data[i]));
  }

  auto plain = tensorflow::serving::PredictionService::NewStub(
      grpc::CreateChannel("localhost:" + std::to_string(server.grpc_port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx2;
  ctx2.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
  tensorflow::serving::PredictResponse resp2;
  EXPECT_FALSE(plain->Predict(&ctx2, req, &resp2).ok());
}

TEST(ServingGrpcTls, SslConfigErrors) {
  EXPECT_THROW(parse_ssl_config("server_key: 'k'", "ssl"), tickinfer::Error);
  EXPECT_THROW(parse_ssl_config("server_key: 'k' server_cert: 'c' client_verify: true", "ssl"), tickinfer::Error);
  EXPECT_THROW(parse_ssl_config("server_key: 'k' server_cert: 'c' cert_file: 'x'", "ssl"), tickinfer::Error);
  const auto c = parse_ssl_config("server_key: 'k' server_cert: 'c' custom_ca: 'a' client_verify: true", "ssl");
  EXPECT_TRUE(c.client_verify);
  EXPECT_EQ(c.custom_ca, "a");
}

}  // namespace
