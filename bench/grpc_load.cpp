// grpc_load: constant-rate gRPC Predict load on `tickinfer serve` (tensorflow.serving
// PredictionService, the project's protos). T client threads, each with its own channel and one
// call in flight, send on a fixed schedule (thread t's k-th call is due at t0 + (k*T + t)/rate);
// latency is measured from the scheduled time, so a late reply also delays and counts against
// the next call (no coordinated omission).
//
// --client grpcpp (default) calls through grpc++'s stub; --client native through the project's
// minimal HTTP/2 client (grpc_h2_client.hpp), which leaves out grpc++'s per-call client cost.
//
// usage: grpc_load --port P [--model mlp_small] [--input input_layer] [--features 10]
//                  [--threads 1] [--rate 2000] [--seconds 10] [--warmup-seconds 2]
//                  [--client grpcpp|native]
#include <grpcpp/grpcpp.h>
#include <sys/prctl.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "serving/h2/grpc_h2_client.hpp"
#include "stats/latency_histogram.hpp"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

namespace {
int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}
void sleep_until(int64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000), static_cast<long>(t % 1000000000)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}
}  // namespace

int main(int argc, char** argv) {
  int port = 0, threads = 1, features = 10;
  double rate = 2000, seconds = 10, warmup = 2;
  std::string model = "mlp_small", input = "input_layer", client = "grpcpp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--port") port = std::atoi(v.c_str());
    else if (a == "--model") model = v;
    else if (a == "--input") input = v;
    else if (a == "--features") features = std::atoi(v.c_str());
    else if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--rate") rate = std::atof(v.c_str());
    else if (a == "--seconds") seconds = std::atof(v.c_str());
    else if (a == "--warmup-seconds") warmup = std::atof(v.c_str());
    else if (a == "--client") client = v;
    else { std::fprintf(stderr, "grpc_load: unknown option %s\n", a.c_str()); return 2; }
  }
  if (port <= 0) { std::fprintf(stderr, "grpc_load: need --port\n"); return 2; }
  if (client != "grpcpp" && client != "native") { std::fprintf(stderr, "grpc_load: --client grpcpp|native\n"); return 2; }
  // Wake-ups exactly when due, as serve_load does for REST (the default 50 us timer slack would
  // be counted as latency from the scheduled send time).
  prctl(PR_SET_TIMERSLACK, 1UL);
  const double interval = 1e9 / rate;
  const int64_t t0 = now_ns() + 200000000;
  const int64_t measure_from = t0 + static_cast<int64_t>(warmup * 1e9);
  const int64_t end = measure_from + static_cast<int64_t>(seconds * 1e9);
  std::vector<tickinfer::stats::LatencyHistogram> hists(static_cast<size_t>(threads));
  std::atomic<long> errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::unique_ptr<tensorflow::serving::PredictionService::Stub> stub;
      std::unique_ptr<tickinfer::serving::GrpcH2Client> native;
      if (client == "native") {
        native = std::make_unique<tickinfer::serving::GrpcH2Client>(port, "127.0.0.1:" + std::to_string(port));
      } else {
        grpc::ChannelArguments args;
        args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection per thread
        stub = tensorflow::serving::PredictionService::NewStub(
            grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args));
      }
      tensorflow::serving::PredictRequest req;
      req.mutable_model_spec()->set_name(model);
      auto& tensor = (*req.mutable_inputs())[input];
      tensor.set_dtype(tensorflow::DT_FLOAT);
      tensor.mutable_tensor_shape()->add_dim()->set_size(1);
      tensor.mutable_tensor_shape()->add_dim()->set_size(features);
      for (int i = 0; i < features; ++i) tensor.add_float_val(0.1f * static_cast<float>(i) - 0.4f);
      const std::string request_bytes = req.SerializeAsString();
      std::string response_bytes;
      for (int64_t k = 0;; ++k) {
        const int64_t due = t0 + static_cast<int64_t>((static_cast<double>(k) * threads + t) * interval);
        if (due >= end) break;
        sleep_until(due);
        bool ok;
        if (native) {
          ok = native->call("/tensorflow.serving.PredictionService/Predict", request_bytes, response_bytes);
        } else {
          grpc::ClientContext ctx;
          tensorflow::serving::PredictResponse resp;
          ok = stub->Predict(&ctx, req, &resp).ok();
        }
        const int64_t done = now_ns();
        if (due >= measure_from) {
          hists[static_cast<size_t>(t)].record(done - due);
          if (!ok) errors++;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  tickinfer::stats::LatencyHistogram all;
  for (const auto& h : hists) all.merge(h);
  std::printf("%-22s rate %7.0f/s  n %8lld  errors %ld  p50 %7.1f  p90 %7.1f  p99 %7.1f  p99.9 %7.1f  max %8.1f us\n",
              client == "native" ? "grpc-predict native" : "grpc-predict grpc++", static_cast<double>(all.count()) / seconds, static_cast<long long>(all.count()),
              errors.load(), all.value_at_percentile(50) / 1e3, all.value_at_percentile(90) / 1e3,
              all.value_at_percentile(99) / 1e3, all.value_at_percentile(99.9) / 1e3, all.max() / 1e3);
  return errors ? 1 : 0;
}
