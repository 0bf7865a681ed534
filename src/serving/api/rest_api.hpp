#pragma once
// TF Serving's REST API (docs/serving.md, "REST API") on top of the model repository: the
// routes are in rest_routes.hpp, their handlers in rest_*_handler.cpp. Every answer is
// application/json with errors as {"error": "..."} and TF Serving's status-code-to-HTTP mapping
// (except metrics: text/plain).
//
// handle() runs on an HTTP worker thread; `worker` indexes both the per-worker scratch here and
// the servable's plans, so a predict never allocates once the worker's buffers have grown,
// takes no mutex (the repository snapshot is a SnapshotCell) and never throws. Every answer to
// an inference call (a POST), errors included, is offered to the request log, which samples.
#include <cstdint>
#include <vector>

#include "serving/api/rest_call.hpp"

namespace tickinfer::serving {

class RestApi {
 public:
  RestApi(const ModelRepository& repo, Metrics& metrics, RestOptions options, size_t workers);
  void handle(const HttpRequest& req, uint64_t received_ns, size_t worker, HttpResponse& resp) noexcept;

 private:
  void dispatch(RestCall& call);
  bool authorized(const HttpRequest& req) const;
  void log(const RestCall& call) noexcept;

  const ModelRepository& repo_;
  Metrics& metrics_;
  RestOptions options_;
  std::vector<RestScratch> scratch_;
};

}  // namespace tickinfer::serving
