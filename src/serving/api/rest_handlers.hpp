#pragma once
// The REST route handlers (the table is in rest_routes.cpp). Each answers into call.resp and
// never throws except std::bad_alloc; errors go through call.fail*() so the request log sees
// their code.
#include "serving/api/resolve.hpp"
#include "serving/api/rest_call.hpp"

namespace tickinfer::serving {

void handle_preflight(RestCall& call);   // rest_probe_handlers.cpp
void handle_health(RestCall& call);      // rest_probe_handlers.cpp
void handle_ready(RestCall& call);       // rest_probe_handlers.cpp
void handle_metrics(RestCall& call);     // rest_probe_handlers.cpp
void handle_rejected(RestCall& call);    // rest_probe_handlers.cpp
void handle_status(RestCall& call);      // rest_status_handler.cpp
void handle_metadata(RestCall& call);    // rest_metadata_handler.cpp
void handle_predict(RestCall& call);     // rest_predict_handler.cpp
void handle_classify(RestCall& call);    // rest_classify_handler.cpp
void handle_regress(RestCall& call);     // rest_classify_handler.cpp

// What the request path names (call.path, decoded in call.s): rest_resolve.cpp.
ServableRequest servable_request(const RestCall& call);
// Sets call.servable to the servable a predict or metadata request names, or answers TF
// Serving's 404 (counted) and returns false: rest_resolve.cpp.
bool resolve_servable(RestCall& call);

}  // namespace tickinfer::serving
