#include "serving/rest_api.hpp"

#include <charconv>
#include <ctime>

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

namespace {

// Case-insensitive prefix test and strip.
bool consume_prefix(std::string_view& s, std::string_view prefix) {
  if (s.size() < prefix.size() || !iequals(s.substr(0, prefix.size()), prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// URL-decodes %XX (and keeps '+' as is, like curl_easy_unescape). False on a bad escape.
bool url_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      const int a = hexval(in[i + 1]), b = hexval(in[i + 2]);
      if (a < 0 || b < 0) return false;
      out += static_cast<char>(a * 16 + b);
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

// The model path after "/v1/models/": name[/versions/N|/labels/L][/metadata][:verb].
struct ModelPath {
  std::string_view name, label, verb;
  bool has_version = false, has_label = false, metadata = false;
  int64_t version = 0;
};

// Returns 0 on success, else the StatusCode-ish failure: 1 = malformed (404), 2 = bad version (400),
// 3 = version and label both (400).
int parse_model_path(std::string_view p, bool post, ModelPath& m) {
  if (post) {
    const size_t colon = p.rfind(':');
    if (colon == std::string_view::npos) return 1;
    m.verb = p.substr(colon + 1);
    p = p.substr(0, colon);
  }
  size_t slash = p.find('/');
  m.name = p.substr(0, slash);
  if (m.name.empty() || m.name.find(':') != std::string_view::npos) return 1;
  p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash);
  if (!post && p.size() >= 9 && iequals(p.substr(p.size() - 9), "/metadata")) {
    m.metadata = true;
    p.remove_suffix(9);
  }
  while (!p.empty()) {
    std::string_view rest = p;
    if (consume_prefix(rest, "/versions/")) {
      if (m.has_version || m.has_label) return 3;
      slash = rest.find('/');
      const std::string_view v = rest.substr(0, slash);
      if (v.empty()) return 1;
      for (char c : v) {
        if (c < '0' || c > '9') return 1;
      }
      const auto r = std::from_chars(v.data(), v.data() + v.size(), m.version);
      if (r.ec != std::errc()) return 2;
      m.has_version = true;
      p = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    } else if (consume_prefix(rest, "/labels/")) {
      if (m.has_version || m.has_label) return 3;
      slash = rest.find('/');
      m.label = rest.substr(0, slash);
      if (m.label.empty() || m.label.find(':') != std::string_view::npos) return 1;
      m.has_label = true;
      p = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    } else {
      return 1;
    }
  }
  return 0;
}

// `tensor_name` mirrors what a Keras SavedModel export shows: serving_default_<input>:0 for
// inputs, StatefulPartitionedCall:<index> for outputs.
void append_tensor_info(std::string& b, const TensorSpec& t, const std::string& tensor_name) {
  append_json_string(b, t.name);
  b += ": {\"dtype\": \"DT_FLOAT\", \"tensor_shape\": {\"dim\": [{\"size\": \"-1\", \"name\": \"\"}";
  for (int64_t d : t.shape) {
    b += ", {\"size\": \"";
    append_json_int(b, d);
    b += "\", \"name\": \"\"}";
  }
  b += "], \"unknown_rank\": false}, \"name\": ";
  append_json_string(b, tensor_name);
  b += "}";
}

}  // namespace

RestApi::RestApi(const ModelRepository& repo, Metrics& metrics, RestOptions options, size_t workers)
    : repo_(repo), metrics_(metrics), options_(std::move(options)), scratch_(workers ? workers : 1) {}

void RestApi::handle(const HttpRequest& req, uint64_t received_ns, size_t worker,
                     HttpResponse& resp) noexcept {
  try {
    resp.cors = options_.cors;
    route(req, received_ns, scratch_[worker], worker, resp);
  } catch (const std::exception& e) {  // only allocation failure can get here
    set_error(resp, StatusCode::Internal, e.what());
  }
}

void RestApi::route(const HttpRequest& req, uint64_t received_ns, Scratch& s, size_t worker,
                    HttpResponse& resp) {
  const std::string_view path = req.path;
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";
  if (req.method == "OPTIONS" && options_.cors) {
    if (!(req.origin.rfind("http://", 0) == 0 || req.origin.rfind("https://", 0) == 0)) {
      set_error(resp, StatusCode::InvalidArgument, "CORS preflight needs an http(s) Origin header");
      return;
    }
    resp.status = 200;
    resp.body = "{}";
    return;
  }
  if (get && path == "/healthz") {
    resp.body = "{ \"status\": \"alive\" }";
    return;
  }
  if (get && path == "/readyz") {
    if (repo_.ready()) {
      resp.body = "{ \"status\": \"ready\" }";
    } else {
      set_error(resp, StatusCode::Unavailable, "not ready: a model has no AVAILABLE version yet");
    }
    return;
  }
  if (!options_.bearer_token.empty()) {
    std::string_view auth = req.authorization;
    if (!consume_prefix(auth, "Bearer ") || auth != options_.bearer_token) {
      set_error(resp, StatusCode::Unauthenticated, "missing or wrong bearer token");
      resp.www_authenticate = true;
      return;
    }
  }
  if (get && !options_.metrics_path.empty() && path == options_.metrics_path) {
    resp.content_type = "text/plain; version=0.0.4";
    resp.body = metrics_.render();
    return;
  }
  std::string_view rest = path;
  if (!consume_prefix(rest, "/v1/models")) {
    set_error(resp, StatusCode::NotFound,
              "Malformed request: " + std::string(req.method) + " " + std::string(path));
    return;
  }
  if (rest.empty() || rest == "/") {
    set_error(resp, StatusCode::InvalidArgument, "Missing model name in request.");
    return;
  }
  if (rest[0] != '/' || (!get && !post)) {
    set_error(resp, StatusCode::NotFound,
              "Malformed request: " + std::string(req.method) + " " + std::string(path));
    return;
  }
  rest.remove_prefix(1);
  ModelPath mp;
  const int pr = parse_model_path(rest, post, mp);
  if (pr == 2) {
    set_error(resp, StatusCode::InvalidArgument, "Failed to convert version to int64");
    return;
  }
  if (pr == 3) {
    set_error(resp, StatusCode::InvalidArgument,
              "A request may name a version or a label, not both");
    return;
  }
  if (pr != 0 || (post && mp.metadata)) {
    set_error(resp, StatusCode::NotFound,
              "Malformed request: " + std::string(req.method) + " " + std::string(path));
    return;
  }
  if (!url_decode(mp.name, s.name) || !url_decode(mp.label, s.label)) {
    set_error(resp, StatusCode::InvalidArgument, "bad %-escape in the request path");
    return;
  }
  const auto snap = repo_.snapshot();
  const ModelSnapshot* model = snap->find(s.name);
  ModelMetrics& mm = model && model->metrics ? *model->metrics : metrics_.unknown_model();

  // Resolves the servable the request names, or answers 404 (counted).
  auto resolve = [&](std::shared_ptr<const Servable>& out) {
    if (model) {
      int64_t v = 0;
      bool have = true;
      if (mp.has_label) {
        const auto it = model->labels.find(s.label);
        if (it == model->labels.end()) {
          set_error(resp, StatusCode::NotFound, "Unrecognized servable version label: " + s.label);
          mm.count(StatusCode::NotFound);
          return false;
        }
        v = it->second;
      } else if (mp.has_version) {
        v = mp.version;
      } else {
        have = false;
      }
      if (have) {
        out = model->find_version(v);
      } else if (!model->available.empty()) {
        out = model->available.back();
      }
      if (out) return true;
    }
    std::string what = mp.has_version ? "Specific(" + s.name + ", " + std::to_string(mp.version) + ")"
                       : mp.has_label ? "Specific(" + s.name + ", label " + s.label + ")"
                                      : "Latest(" + s.name + ")";
    set_error(resp, StatusCode::NotFound, "Servable not found for request: " + what);
    mm.count(StatusCode::NotFound);
    return false;
  };

  if (get && !mp.metadata) {
    // Status.
    if (!model) {
      set_error(resp, StatusCode::NotFound, "Could not find any versions of model " + s.name);
      return;
    }
    int64_t want = -1;
    if (mp.has_label) {
      const auto it = model->labels.find(s.label);
      if (it == model->labels.end()) {
        set_error(resp, StatusCode::NotFound, "Unrecognized servable version label: " + s.label);
        return;
      }
      want = it->second;
    } else if (mp.has_version) {
      want = mp.version;
    }
    std::string& b = resp.body;
    b = "{\n \"model_version_status\": [";
    bool any = false;
    for (auto it = model->statuses.rbegin(); it != model->statuses.rend(); ++it) {
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
        set_error(resp, StatusCode::NotFound,
                  "Could not find version " + std::to_string(want) + " of model " + s.name);
      } else {
        set_error(resp, StatusCode::NotFound, "Could not find any versions of model " + s.name);
      }
    }
    return;
  }
  if (get) {
    std::shared_ptr<const Servable> sv;
    if (!resolve(sv)) return;
    std::string& b = resp.body;
    b = "{\n\"model_spec\": {\"name\": ";
    append_json_string(b, s.name);
    b += ", \"signature_name\": \"\", \"version\": \"";
    append_json_int(b, sv->version());
    b += "\"},\n\"metadata\": {\"signature_def\": {\"signature_def\": {\"serving_default\": {\"inputs\": {";
    for (size_t i = 0; i < sv->inputs().size(); ++i) {
      if (i) b += ", ";
      append_tensor_info(b, sv->inputs()[i], "serving_default_" + sv->inputs()[i].name + ":0");
    }
    b += "}, \"outputs\": {";
    for (size_t i = 0; i < sv->outputs().size(); ++i) {
      if (i) b += ", ";
      append_tensor_info(b, sv->outputs()[i], "StatefulPartitionedCall:" + std::to_string(i));
    }
    b += "}, \"method_name\": \"tensorflow/serving/predict\"}}}}\n}";
    return;
  }
  // POST
  if (iequals(mp.verb, "classify") || iequals(mp.verb, "regress")) {
    set_error(resp, StatusCode::Unimplemented,
              std::string(mp.verb) + " is not supported by tickinfer serve: the served Keras models "
              "have a predict signature only; use :predict");
    mm.count(StatusCode::Unimplemented);
    return;
  }
  if (!iequals(mp.verb, "predict")) {
    set_error(resp, StatusCode::NotFound,
              "Malformed request: " + std::string(req.method) + " " + std::string(path));
    return;
  }
  std::shared_ptr<const Servable> sv;
  RequestLog* const log = options_.request_log;
  const bool logged = log && log->sample(worker);
  auto log_request = [&](StatusCode code, uint64_t start, uint64_t done) {
    if (!logged) return;
    RequestLogEntry e;
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    e.wall_ns = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
    e.model = &mm.name;
    e.version = sv ? sv->version() : -1;
    e.status = code;
    const uint64_t end = monotonic_ns();
    e.queue_ns = start ? start - received_ns : 0;
    e.compute_ns = done ? done - start : 0;
    e.total_ns = end - received_ns;
    e.fingerprint = fnv1a64(req.body);
    log->record(worker, e);
  };
  if (!resolve(sv)) {
    log_request(StatusCode::NotFound, 0, 0);
    return;
  }
  if (!s.doc.parse(req.body)) {
    set_error(resp, StatusCode::InvalidArgument, "JSON Parse error: " + s.doc.error());
    mm.count(StatusCode::InvalidArgument);
    log_request(StatusCode::InvalidArgument, 0, 0);
    return;
  }
  if (!decode_predict_request_json(s.doc, sv->inputs(), options_.limits, s.in, s.error)) {
    set_error(resp, StatusCode::InvalidArgument, s.error);
    mm.count(StatusCode::InvalidArgument);
    log_request(StatusCode::InvalidArgument, 0, 0);
    return;
  }
  if (!s.in.signature_name.empty() && s.in.signature_name != "serving_default") {
    set_error(resp, StatusCode::InvalidArgument,
              "Serving signature name: \"" + s.in.signature_name + "\" not found in signature def");
    mm.count(StatusCode::InvalidArgument);
    return;
  }
  const uint64_t start = monotonic_ns();
  if (start - received_ns > options_.timeout_ns) {
    set_error(resp, StatusCode::DeadlineExceeded, "request deadline exceeded before compute");
    mm.count(StatusCode::DeadlineExceeded);
    return;
  }
  const size_t batch = s.in.batch;
  if (worker >= sv->num_plans()) {
    set_error(resp, StatusCode::Internal, "worker index beyond the servable's plans");
    mm.count(StatusCode::Internal);
    return;
  }
  if (s.out.size() < sv->outputs().size()) s.out.resize(sv->outputs().size());  // grow only
  s.in_ptr.clear();
  s.out_ptr.clear();
  for (size_t i = 0; i < sv->inputs().size(); ++i) s.in_ptr.push_back(s.in.data[i].data());
  for (size_t o = 0; o < sv->outputs().size(); ++o) {
    s.out[o].resize(batch * sv->outputs()[o].size);
    s.out_ptr.push_back(s.out[o].data());
  }
  uint64_t queue_ns = start - received_ns, compute_ns = 0;
  if (options_.batching) {
    const BatchScheduler::Result br = options_.batching->run(sv, batch, s.in_ptr.data(), s.out_ptr.data());
    if (br.code != StatusCode::Ok) {
      set_error(resp, br.code,
                br.code == StatusCode::Unavailable
                    ? std::string("The batch scheduling queue to which this task was submitted is full")
                    : "Task size " + std::to_string(batch) + " is larger than maximum batch size");
      mm.count(br.code);
      log_request(br.code, 0, 0);
      return;
    }
    queue_ns += br.queue_ns;
    compute_ns = br.compute_ns;
  } else {
    sv->run(worker, batch, s.in_ptr.data(), s.out_ptr.data());
  }
  const uint64_t done = monotonic_ns();
  if (!options_.batching) compute_ns = done - start;
  encode_predict_response_json(s.in.row_format, batch, sv->outputs(), s.out, resp.body);
  const uint64_t end = monotonic_ns();
  mm.count(StatusCode::Ok);
  mm.latency[0].record_us(static_cast<double>(end - received_ns) / 1000.0);
  mm.queue[0].record_us(static_cast<double>(queue_ns) / 1000.0);
  mm.compute[0].record_us(static_cast<double>(compute_ns) / 1000.0);
  log_request(StatusCode::Ok, start, done);
}

}  // namespace tickinfer::serving
