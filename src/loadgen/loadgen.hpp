#pragma once
// `tickinfer loadgen`: load against a model server (tickinfer serve, tensorflow_model_server,
// anything speaking TF Serving's REST or gRPC Predict), the way its users test a release:
//
//   closed loop: W workers, each sends M requests back to back (the guide's 8 x 500): the
//                latency is each request's service time;
//   open loop:   a fixed total rate, request j of worker k due at t0 + (j W + k) / rate; a late
//                reply makes the next request leave late, but its latency counts from when it
//                was due (coordinated omission corrected): total = queue (due -> sent) +
//                service (sent -> answer complete).
//
// Each worker owns one connection (a Transport) and one thread. Transports: REST (HTTP/1.1
// keep-alive, a JSON body) and gRPC (tickinfer's HTTP/2 client, a serialized PredictRequest).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stats/latency_histogram.hpp"

namespace tickinfer::loadgen {

// One connection: one request, its answer read whole. False on an error answer (not HTTP 200,
// grpc-status not 0) or a broken connection (then `broken` is set and the worker stops).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual bool call(bool& broken) = 0;
};
using TransportFactory = std::function<std::unique_ptr<Transport>()>;

struct LoadOptions {
  int workers = 8;
  long requests_per_worker = 500;  // closed loop
  double rate = 0;                 // > 0: open loop at this many requests/s in total
  double seconds = 10;             // open loop: how long
  double warmup_seconds = 0;       // open loop: requests due before this are not measured
  bool progress = false;           // a line on stderr every second
};

struct LoadResult {
  LoadResult();
  stats::LatencyHistogram total, service, queue;  // ns; queue and total only differ open loop
  std::uint64_t ok = 0, errors = 0, broken_connections = 0;
  double seconds = 0;   // measured wall time
  double total_stddev_ns = 0;  // exact, from every sample (the histogram keeps the mean only)
};

// Runs the load; throws tickinfer::Error when a connection cannot be opened.
LoadResult run_load(const LoadOptions& o, const TransportFactory& connect);

std::unique_ptr<Transport> rest_transport(const std::string& host, int port, const std::string& path,
                                          const std::string& body);
// gRPC Predict of `model` with `message` (a serialized PredictRequest).
std::unique_ptr<Transport> grpc_transport(const std::string& host, int port, const std::string& message);
// The serialized PredictRequest for `model` (signature `signature`, "" = the default) with the
// rows of `input_file` (.npy/.csv) under `input_name`; "" asks the server (GetModelMetadata).
std::string grpc_predict_message(const std::string& host, int port, const std::string& model,
                                 const std::string& input_name, const std::string& input_file);

// Reports: the percentile table (text), the run as JSON (what --compare reads), an HdrHistogram
// percentile distribution (.hgrm, values in milliseconds, as wrk2 and HdrHistogram write it).
std::string result_table(const LoadResult& r, bool open_loop);
std::string result_json(const LoadResult& r, const LoadOptions& o, const std::string& target);
std::string hgrm(const stats::LatencyHistogram& h, double stddev_ns);
// Two JSON results side by side with the ratio b / a per percentile.
std::string compare_results(const std::string& a_path, const std::string& b_path);
// Self-contained HTML pages (inline SVG, no script, no external asset): the run's table and its
// log-log percentile plot; or two runs' comparison and both runs' curves.
std::string result_html(const LoadResult& r, const LoadOptions& o, const std::string& target);
std::string compare_html(const std::string& a_path, const std::string& b_path);

}  // namespace tickinfer::loadgen
