#include "serving/api/rest_routes.hpp"

#include <array>

#include "serving/api/rest_handlers.hpp"
#include "serving/http1/http_parser.hpp"  // iequals

namespace tickinfer::serving {

namespace {

// Indexed by RestRouteId.
constexpr std::array<RestRoute, 10> kRoutes{{
    //  id                      authenticated logged model  handler
    {RestRouteId::Preflight, false, false, false, handle_preflight},
    {RestRouteId::Health, false, false, false, handle_health},
    {RestRouteId::Ready, false, false, false, handle_ready},
    {RestRouteId::Metrics, true, false, false, handle_metrics},
    {RestRouteId::Status, true, false, true, handle_status},
    {RestRouteId::Metadata, true, false, true, handle_metadata},
    {RestRouteId::Predict, true, true, true, handle_predict},
    {RestRouteId::Classify, true, true, true, handle_classify},
    {RestRouteId::Regress, true, true, true, handle_regress},
    // Logged when the request is a POST (it was aimed at an inference verb): RestApi::handle.
    {RestRouteId::Rejected, true, false, false, handle_rejected},
}};

const RestRoute& route(RestRouteId id) { return kRoutes[static_cast<size_t>(id)]; }

const RestRoute& reject(RestCall& call, RestRejection why) {
  call.rejection = why;
  return route(RestRouteId::Rejected);
}

}  // namespace

const RestRoute& match_route(RestCall& call) {
  const HttpRequest& req = call.req;
  const std::string_view path = req.path;
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";
  if (req.method == "OPTIONS" && call.options.cors) return route(RestRouteId::Preflight);
  if (get && path == "/healthz") return route(RestRouteId::Health);
  if (get && path == "/readyz") return route(RestRouteId::Ready);
  if (get && !call.options.metrics_path.empty() && path == call.options.metrics_path) {
    return route(RestRouteId::Metrics);
  }
  std::string_view rest = path;
  if (!consume_prefix(rest, "/v1/models")) return reject(call, RestRejection::Malformed);
  if (rest.empty() || rest == "/") return reject(call, RestRejection::MissingModelName);
  if (rest[0] != '/' || (!get && !post)) return reject(call, RestRejection::Malformed);
  rest.remove_prefix(1);
  ModelPath& mp = call.path;
  switch (parse_model_path(rest, post, mp)) {
    case ModelPathParse::Ok: break;
    case ModelPathParse::Malformed: return reject(call, RestRejection::Malformed);
    case ModelPathParse::BadVersion: return reject(call, RestRejection::BadVersion);
    case ModelPathParse::VersionAndLabel: return reject(call, RestRejection::VersionAndLabel);
  }
  if (!url_decode(mp.name, call.s.name) || !url_decode(mp.label, call.s.label)) {
    return reject(call, RestRejection::BadEscape);
  }
  if (get) return route(mp.metadata ? RestRouteId::Metadata : RestRouteId::Status);
  if (iequals(mp.verb, "classify")) return route(RestRouteId::Classify);
  if (iequals(mp.verb, "regress")) return route(RestRouteId::Regress);
  if (iequals(mp.verb, "predict")) return route(RestRouteId::Predict);
  return reject(call, RestRejection::Malformed);
}

}  // namespace tickinfer::serving
