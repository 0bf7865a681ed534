#include "serving/api/rest_api.hpp"

#include <ctime>
#include <string>

#include "serving/api/rest_routes.hpp"
#include "serving/json_writer.hpp"

namespace tickinfer::serving {

void set_error(HttpResponse& resp, StatusCode code, std::string_view message) {
  resp.status = http_status_for(code);
  resp.content_type = "application/json";
  resp.body.clear();
  resp.body += "{ \"error\": ";
  append_json_string(resp.body, message);
  resp.body += " }";
}

void RestCall::fail(StatusCode c, std::string_view message) {
  code = c;
  if (options.request_log) s.fail_message.assign(message);  // capacity kept: no allocation once grown
  set_error(resp, c, message);
}

void RestCall::fail_counted(StatusCode c, std::string_view message) {
  fail(c, message);
  model_metrics->count(c);
}

void RestCall::fail_malformed() {
  fail(StatusCode::NotFound, "Malformed request: " + std::string(req.method) + " " + std::string(req.path));
}

RestApi::RestApi(const ModelRepository& repo, Metrics& metrics, RestOptions options, size_t workers)
    : repo_(repo), metrics_(metrics), options_(std::move(options)), scratch_(workers ? workers : 1) {}

void RestApi::handle(const HttpRequest& req, uint64_t received_ns, size_t worker,
                     HttpResponse& resp) noexcept {
  RestCall call(req, resp, scratch_[worker], worker, received_ns, repo_, metrics_, options_);
  try {
    resp.cors = options_.cors;
    dispatch(call);
  } catch (const std::exception& e) {  // only allocation failure can get here
    call.code = StatusCode::Internal;
    set_error(resp, StatusCode::Internal, e.what());
  }
  log(call);
}

bool RestApi::authorized(const HttpRequest& req) const {
  if (options_.bearer_token.empty()) return true;
  std::string_view auth = req.authorization;
  return consume_prefix(auth, "Bearer ") && auth == options_.bearer_token;
}

void RestApi::dispatch(RestCall& call) {
  const RestRoute& route = match_route(call);
  if (route.model) {
    call.snap = repo_.snapshot();
    call.model = call.snap->find(call.s.name);
    if (call.model && call.model->metrics) call.model_metrics = call.model->metrics;
  }
  call.logged = route.logged || (route.id == RestRouteId::Rejected && call.req.method == "POST");
  if (route.authenticated && !authorized(call.req)) {
    call.fail(StatusCode::Unauthenticated, "missing or wrong bearer token");
    call.resp.www_authenticate = true;
    return;
  }
  route.handle(call);
}

void RestApi::log(const RestCall& call) noexcept {
  RequestLog* const log = options_.request_log;
  if (!call.logged || !log || !log->sample(call.worker)) return;
  RequestLogEntry e;
  e.api = LoggedApi::Rest;
  e.method = call.method;
  e.model = call.model_metrics->name;
  e.version = call.servable ? call.servable->version() : -1;
  e.status = call.code;
  if (call.code != StatusCode::Ok) e.message = call.s.fail_message;
  e.signature = call.signature;
  const uint64_t end = monotonic_ns();
  e.queue_ns = call.start_ns ? call.start_ns - call.received_ns : 0;
  e.compute_ns = call.done_ns ? call.done_ns - call.start_ns : 0;
  e.total_ns = end - call.received_ns;
  e.batch = static_cast<uint32_t>(call.batch);
  if (call.logged_inputs) {
    e.input_specs = call.logged_inputs;
    e.inputs = call.s.in_ptr.data();
  }
  if (call.logged_outputs) {
    e.output_specs = call.logged_outputs;
    e.outputs = call.s.out_ptr.data();
  }
  log->record(call.worker, e);
}

}  // namespace tickinfer::serving
