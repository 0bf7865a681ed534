// The REST side of resolve(): the request path to a ServableRequest, the outcome to TF
// Serving's REST answers.
#include <string>

#include "serving/api/rest_handlers.hpp"

namespace tickinfer::serving {

ServableRequest servable_request(const RestCall& call) {
  ServableRequest r;
  if (call.path.has_label) {
    r.choice = VersionChoice::Label;
    r.label = call.s.label;
  } else if (call.path.has_version) {
    r.choice = VersionChoice::Version;
    r.version = call.path.version;
  }
  return r;
}

bool resolve_servable(RestCall& call) {
  ResolvedServable found = resolve(call.model, servable_request(call));
  if (found.outcome == ResolveOutcome::Found) {
    call.servable = std::move(found.servable);
    return true;
  }
  const std::string& name = call.s.name;
  if (found.outcome == ResolveOutcome::UnknownLabel) {
    call.fail_counted(StatusCode::NotFound, "Unrecognized servable version label: " + call.s.label);
    return false;
  }
  const std::string what = call.path.has_version ? "Specific(" + name + ", " + std::to_string(call.path.version) + ")"
                           : call.path.has_label ? "Specific(" + name + ", label " + call.s.label + ")"
                                                 : "Latest(" + name + ")";
  call.fail_counted(StatusCode::NotFound, "Servable not found for request: " + what);
  return false;
}

}  // namespace tickinfer::serving
