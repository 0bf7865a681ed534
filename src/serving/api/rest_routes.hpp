#pragma once
// The REST route table (docs/serving.md, "REST API"):
//   OPTIONS *                                                    CORS preflight (when enabled)
//   GET  /healthz, /readyz                                       liveness, readiness
//   GET  <--monitoring_config_file path>                         Prometheus metrics
//   GET  /v1/models/{name}[/versions/{N}|/labels/{L}]            model status
//   GET  /v1/models/{name}[/versions/{N}|/labels/{L}]/metadata   signature metadata
//   POST /v1/models/{name}[/versions/{N}|/labels/{L}]:predict    inference
//   POST ...:classify | ...:regress                              tf.Example signatures
// Anything else takes the Rejected route (TF Serving's 404/400 answers). A new endpoint is one
// more RestRouteId, one row in the table (rest_routes.cpp) and its handler.
#include "serving/api/rest_call.hpp"

namespace tickinfer::serving {

enum class RestRouteId { Preflight, Health, Ready, Metrics, Status, Metadata, Predict, Classify, Regress, Rejected };

struct RestRoute {
  RestRouteId id;
  bool authenticated;  // behind the bearer token, when one is set
  bool logged;         // an inference call: every answer, errors included, goes to the request log
  bool model;          // names a model: call.path, call.s.name/label, call.model are set
  void (*handle)(RestCall&);
};

// The route `call.req` takes; never fails (see Rejected). Parses the model path into call.path
// and decodes the name and label into call.s, or notes call.rejection. Allocates nothing.
const RestRoute& match_route(RestCall& call);

}  // namespace tickinfer::serving
