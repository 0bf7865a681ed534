// The REST routes that name no model: CORS preflight, liveness, readiness, metrics, and the
// answers to paths the API has no route for.
#include <string>

#include "serving/api/rest_handlers.hpp"

namespace tickinfer::serving {

void handle_preflight(RestCall& call) {
  const std::string_view origin = call.req.origin;
  if (!(origin.rfind("http://", 0) == 0 || origin.rfind("https://", 0) == 0)) {
    call.fail(StatusCode::InvalidArgument, "CORS preflight needs an http(s) Origin header");
    return;
  }
  call.resp.status = 200;
  call.resp.body = "{}";
}

void handle_health(RestCall& call) { call.resp.body = "{ \"status\": \"alive\" }"; }

void handle_ready(RestCall& call) {
  if (call.repo.ready()) {
    call.resp.body = "{ \"status\": \"ready\" }";
  } else {
    call.fail(StatusCode::Unavailable, "not ready: a model has no AVAILABLE version yet");
  }
}

void handle_metrics(RestCall& call) {
  call.resp.content_type = "text/plain; version=0.0.4";
  call.resp.body = call.metrics.render();
}

void handle_rejected(RestCall& call) {
  switch (call.rejection) {
    case RestRejection::Malformed:
      call.fail_malformed();
      return;
    case RestRejection::MissingModelName:
      call.fail(StatusCode::InvalidArgument, "Missing model name in request.");
      return;
    case RestRejection::BadVersion:
      call.fail(StatusCode::InvalidArgument, "Failed to convert version to int64");
      return;
    case RestRejection::VersionAndLabel:
      call.fail(StatusCode::InvalidArgument, "A request may name a version or a label, not both");
      return;
    case RestRejection::BadEscape:
      call.fail(StatusCode::InvalidArgument, "bad %-escape in the request path");
      return;
  }
}

}  // namespace tickinfer::serving
