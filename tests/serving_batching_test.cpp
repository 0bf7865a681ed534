// Server-side batching (--enable_batching) through real sockets: answers still equal Keras
// under concurrent clients, time in the queue is measured apart from compute, oversized tasks
// and a full queue get TF Serving's codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cuda/devices.hpp"
#include "formats/npy.hpp"
#include "serving/model_server.hpp"
#include "support/http_client.hpp"
#include "support/serving_repo.hpp"
#include "support/source_paths.hpp"

using namespace tickinfer::serving;
using tickinfer::testing::HttpClient;
using tickinfer::testing::TempDir;

namespace {

std::unique_ptr<ModelServer> start(const TempDir& d, const std::string& params) {
  d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  std::ofstream(d.path() + "/batching.config") << params;
  std::ofstream(d.path() + "/monitoring.config") << "prometheus_config { enable: true }";
  ServerFlags f;
  f.model_name = "mlp";
  f.model_base_path = d.model_path("mlp");
  f.rest_api_bind_address = "127.0.0.1";
  f.grpc = false;
  f.rest_api_num_threads = 4;
  f.file_system_poll_wait_seconds = -1;
  f.enable_batching = true;
  f.batching_parameters_file = d.path() + "/batching.config";
  f.monitoring_config_file = d.path() + "/monitoring.config";
  auto s = std::make_unique<ModelServer>(f);
  s->start();
  return s;
}

double metric(const std::string& text, const std::string& name) {
  const size_t p = text.find(name + " ");
  return p == std::string::npos ? -1 : std::atof(text.c_str() + p + name.size() + 1);
}

TEST(ServingBatching, ConcurrentRequestsGetKerasAnswersAndQueueTimeIsSeparate) {
  TempDir d;
  auto s = start(d, "max_batch_size { value: 8 } batch_timeout_micros { value: 2000 } "
                    "num_batch_threads { value: 1 } max_enqueued_batches { value: 100 }");
  const auto x = tickinfer::formats::read_npy(tickinfer::testing::bench_model("mlp_small/in0.npy"));
  const auto y = tickinfer::formats::read_npy(tickinfer::testing::bench_model("mlp_small/out0.npy"));
  std::atomic<int> bad{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      HttpClient c(s->rest_port());
      for (int i = 0; i < 25; ++i) {
        const size_t row = static_cast<size_t>((t * 25 + i) % 8);
        nlohmann::json inst = nlohmann::json::array();
        inst.push_back(std::vector<float>(x.data.begin() + row * 10, x.data.begin() + row * 10 + 10));
        const auto r = c.request("POST", "/v1/models/mlp:predict", nlohmann::json{{"instances", inst}}.dump());
        if (r.status != 200) {
          bad++;
          continue;
        }
        const double got = nlohmann::json::parse(r.body)["predictions"][0][0].get<double>();
        if (std::fabs(got - y.data[row]) > 1e-6 + 1e-5 * std::fabs(y.data[row])) bad++;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(bad.load(), 0);
  HttpClient c(s->rest_port());
  const std::string m = c.request("GET", "/monitoring/prometheus/metrics").body;
  const std::string labels = "{model_name=\"mlp\",entrypoint=\"REST\"}";
  EXPECT_EQ(metric(m, ":tickinfer:serving:queue_latency_count" + labels), 100);
  // Batches of at most 4 rows never fill 8: each waits for the 2 ms timeout, so queue time
  // dominates compute time.
  const double queue_mean = metric(m, ":tickinfer:serving:queue_latency_sum" + labels) / 100;
  const double compute_mean = metric(m, ":tickinfer:serving:compute_latency_sum" + labels) / 100;
  EXPECT_GT(queue_mean, 200.0);
  EXPECT_LT(compute_mean, queue_mean);
}

TEST(ServingBatching, OversizedTaskIsRefused) {
  TempDir d;
  auto s = start(d, "max_batch_size { value: 2 } batch_timeout_micros { value: 300000 } "
                    "num_batch_threads { value: 1 } max_enqueued_batches { value: 1 }");
  const std::string three =
      "{\"instances\": [[1,2,3,4,5,6,7,8,9,10],[1,2,3,4,5,6,7,8,9,10],[1,2,3,4,5,6,7,8,9,10]]}";
  HttpClient c(s->rest_port());
  auto r = c.request("POST", "/v1/models/mlp:predict", three);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("larger than maximum batch size"), std::string::npos);
}

// The queue bound, on the scheduler itself: through HTTP two connections may share one worker
// thread, which the first request blocks while it waits for its batch.
TEST(ServingBatching, FullQueueIsUnavailable) {
  TempDir d;
  const std::string dir = d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const auto sv = Servable::load(dir, 1, tickinfer::testing::with_plans<ServableOptions>(1));
  BatchingParameters p;
  p.max_batch_size = 2;
  p.batch_timeout_micros = 300000;
  p.num_batch_threads = 1;
  p.max_enqueued_batches = 1;
  BatchScheduler sched(p, 0);
  float x[20] = {}, y[2] = {};
  const float* in[] = {x};
  float* out[] = {y};
  // One row opens a batch that waits 300 ms for a second row; two rows do not fit it and would
  // need a second batch, beyond max_enqueued_batches = 1.
  BatchScheduler::Result first;
  std::thread waiter([&] { first = sched.run(sv, 1, in, out); });
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  float y2[2] = {};
  float* out2[] = {y2};
  const auto second = sched.run(sv, 2, in, out2);
  EXPECT_EQ(second.code, StatusCode::Unavailable);
  waiter.join();
  EXPECT_EQ(first.code, StatusCode::Ok);
  EXPECT_GE(first.queue_ns, 250000000u);  // it waited for the batch timeout
  EXPECT_TRUE(std::isfinite(y[0]));
}

// --device cuda: every plan the CUDA graph form with a whole batch reserved, so a window model
// that is not row-wise on the CPU (tcn: convolutions over time) still runs a batch as one call,
// each row as run() gives it. Without a GPU the load fails saying why.
TEST(ServingBatching, OnAGpuEveryWindowModelRunsRowsTogether) {
  TempDir d;
  // A Keras model (the CUDA graph form) and an int8 TFLite file (the integer program).
  const std::string keras = d.add_version("tcn", "1", tickinfer::testing::bench_model("tcn/model.keras"));
  const std::string int8 = d.add_version(
      "tcn_int8", "1", std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite/tcn/int8.tflite");
  ServableOptions o;
  o.device = "cuda";
  if (tickinfer::cuda::device_count() == 0) {
    for (const std::string& dir : {keras, int8}) {
      try {
        Servable::load(dir, 1, o);
        FAIL() << "served on a GPU that is not there";
      } catch (const tickinfer::Error& e) {
        EXPECT_NE(std::string(e.what()).find("--device cuda"), std::string::npos) << e.what();
      }
    }
    GTEST_SKIP() << "no CUDA device visible: the refusal is checked, the batched rows need a GPU";
  }
  for (const std::string& dir : {keras, int8}) {
    const auto sv = Servable::load(dir, 1, o);
    ASSERT_TRUE(sv->rows_together()) << dir;
    const size_t in = sv->inputs()[0].size, out = sv->outputs()[0].size;
    const int rows = 5;
    std::vector<float> x(rows * in), y(rows * out), one(out);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i));
    const float* ins[] = {x.data()};
    float* outs[] = {y.data()};
    sv->run(0, rows, ins, outs);
    for (int r = 0; r < rows; ++r) {
      const float* xr[] = {x.data() + r * in};
      float* yr[] = {one.data()};
      sv->run(0, 1, xr, yr);
      EXPECT_EQ(std::memcmp(one.data(), y.data() + r * out, out * sizeof(float)), 0) << dir << " row " << r;
      for (size_t o = 0; o < out; ++o) EXPECT_TRUE(std::isfinite(one[o])) << dir << " row " << r << ": a failed run";
    }
  }
}

// Concurrent one-row requests for a row-wise model become one Plan::run_rows call over all their
// rows; each answer equals the model run on its row alone, bit for bit.
TEST(ServingBatching, ConcurrentRowsRunAsOneMergedCall) {
  TempDir d;
  const std::string dir = d.add_version("mlp", "1", tickinfer::testing::bench_model("mlp_small/model.keras"));
  const auto sv = Servable::load(dir, 1, tickinfer::testing::with_plans<ServableOptions>(2));
  ASSERT_TRUE(sv->rows_together());
  BatchingParameters p;
  p.max_batch_size = 4;
  p.batch_timeout_micros = 2'000'000;  // closes when full, long before this
  p.num_batch_threads = 1;
  BatchScheduler sched(p, 1);  // plan 0 stays the test's
  constexpr int kN = 4;
  float x[kN][10], y[kN][1] = {}, alone[kN][1] = {};
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < 10; ++j) x[i][j] = 0.1f * static_cast<float>(i + 1) - 0.07f * static_cast<float>(j);
  BatchScheduler::Result r[kN];
  std::vector<std::thread> clients;
  for (int i = 0; i < kN; ++i)
    clients.emplace_back([&, i] {
      const float* in[] = {x[i]};
      float* out[] = {y[i]};
      r[i] = sched.run(sv, 1, in, out);
    });
  for (auto& t : clients) t.join();
  for (int i = 0; i < kN; ++i) {
    const float* in[] = {x[i]};
    float* out[] = {alone[i]};
    sv->run(0, 1, in, out);
    EXPECT_EQ(r[i].code, StatusCode::Ok);
    EXPECT_EQ(r[i].batch_rows, static_cast<size_t>(kN)) << i;  // one batch of all four
    EXPECT_EQ(std::memcmp(y[i], alone[i], sizeof y[i]), 0) << i;
  }
}

}  // namespace
