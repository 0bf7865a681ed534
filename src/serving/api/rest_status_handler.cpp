// GET /v1/models/{name}[/versions/{N}|/labels/{L}]: the model's version statuses, newest first,
// in TF Serving's JSON layout (every version the repository knows, not only AVAILABLE ones).
#include <string>

#include "serving/api/rest_handlers.hpp"
#include "serving/api/resolve.hpp"
#include "serving/json_writer.hpp"

namespace tickinfer::serving {

void handle_status(RestCall& call) {
  const std::string& name = call.s.name;
  const ResolvedServable found = resolve(call.model, servable_request(call));
  if (found.outcome == ResolveOutcome::UnknownModel) {
    call.fail(StatusCode::NotFound, "Could not find any versions of model " + name);
    return;
  }
  if (found.outcome == ResolveOutcome::UnknownLabel) {
    call.fail(StatusCode::NotFound, "Unrecognized servable version label: " + call.s.label);
    return;
  }
  const int64_t want = found.version;  // -1: every version
  std::string& b = call.resp.body;
  b = "{\n \"model_version_status\": [";
  bool any = false;
  for (auto it = found.model->statuses.rbegin(); it != found.model->statuses.rend(); ++it) {
    if (want >= 0 && it->version != want) continue;
    b += any ? ",\n  {\n   \"version\": \"" : "\n  {\n   \"version\": \"";
    any = true;
    append_json_int(b, it->version);
    b += "\",\n   \"state\": \"";
    b += version_state_name(it->state);
    b += "\",\n   \"status\": {\n    \"error_code\": \"";
    b += status_code_name(it->error_code);
    b += "\",\n    \"error_message\": ";
    append_json_string(b, it->error_message);
    b += "\n   }\n  }";
  }
  b += "\n ]\n}";
  if (!any) {
    if (want >= 0) {
      call.fail(StatusCode::NotFound, "Could not find version " + std::to_string(want) + " of model " + name);
    } else {
      call.fail(StatusCode::NotFound, "Could not find any versions of model " + name);
    }
  }
}

}  // namespace tickinfer::serving
