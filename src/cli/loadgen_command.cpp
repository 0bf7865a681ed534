// `tickinfer loadgen`: load against TF Serving's REST or gRPC Predict (loadgen.hpp), closed loop
// (the guide's pre-release check: 8 workers x 500 requests) or open loop at a fixed rate;
// p50/p95/p99/p99.9/max, queue apart from service time, JSON for --compare, an .hgrm file, an
// HTML page with the percentile plot.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "formats/array_file.hpp"
#include "cli/commands.hpp"
#include "loadgen/loadgen.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

using formats::HostArray;
using formats::load_array;

namespace {

struct Target {
  bool grpc = false;
  std::string host;
  int port = 0;
  std::string model;
};

// rest://HOST:PORT/MODEL or grpc://HOST:PORT/MODEL
Target parse_target(const std::string& t) {
  Target r;
  std::string rest;
  if (t.rfind("rest://", 0) == 0) rest = t.substr(7);
  else if (t.rfind("grpc://", 0) == 0) {
    r.grpc = true;
    rest = t.substr(7);
  } else {
    throw UsageError("loadgen: target '" + t + "': expected rest://HOST:PORT/MODEL or grpc://HOST:PORT/MODEL");
  }
  const size_t colon = rest.find(':'), slash = rest.find('/');
  if (colon == std::string::npos || slash == std::string::npos || slash < colon || slash + 1 >= rest.size())
    throw UsageError("loadgen: target '" + t + "': expected rest://HOST:PORT/MODEL or grpc://HOST:PORT/MODEL");
  r.host = rest.substr(0, colon);
  r.model = rest.substr(slash + 1);
  try {
    r.port = std::stoi(rest.substr(colon + 1, slash - colon - 1));
  } catch (const std::exception&) {
    r.port = 0;
  }
  if (r.port <= 0 || r.port > 65535) throw UsageError("loadgen: target '" + t + "': bad port");
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("loadgen: cannot read '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// {"instances": rows} from an array file: every row of axis 0 one instance.
std::string json_body(const std::string& input_file) {
  const HostArray a = load_array(input_file);
  const size_t rows = a.shape.empty() ? 1 : static_cast<size_t>(a.shape[0]);
  const size_t per = rows ? a.data.size() / rows : 0;
  std::string b = "{\"instances\": [";
  char num[32];
  for (size_t r = 0; r < rows; ++r) {
    b += r ? ",[" : "[";
    for (size_t i = 0; i < per; ++i) {
      std::snprintf(num, sizeof num, "%s%.9g", i ? "," : "", static_cast<double>(a.data[r * per + i]));
      b += num;
    }
    b += "]";
  }
  return b + "]}";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f || !(f << text)) throw Error("loadgen: cannot write '" + path + "'");
}

}  // namespace

ArgParser loadgen_parser() {
  ArgParser p("loadgen", "load against TF Serving's REST or gRPC Predict: closed loop or open loop at a rate");
  p.positional("target", "rest://HOST:PORT/MODEL or grpc://HOST:PORT/MODEL (or --compare A.json B.json)");
  p.option("body-file", "FILE", "REST: the :predict JSON body as it is", "");
  p.option("input", "FILE", ".npy/.csv rows: every row an instance (REST) or the request tensor (gRPC)", "");
  p.option("input-name", "NAME", "gRPC: the input tensor's name (default: asked with GetModelMetadata)", "");
  p.option("workers", "N", "connections, one request in flight on each", "8");
  p.option("requests", "N", "closed loop: requests per worker", "500");
  p.option("rate", "R", "open loop: requests per second in total (0: closed loop)", "0");
  p.option("seconds", "S", "open loop: how long", "10");
  p.option("warmup-seconds", "S", "open loop: requests due in the first S seconds are not measured", "1");
  p.option("json", "FILE", "write the result as JSON (what --compare reads)", "");
  p.option("hgrm", "FILE", "write the total latency as an HdrHistogram percentile distribution (ms)", "");
  p.option("html", "FILE", "write an HTML page: the table and the percentile plot (with --compare: both runs)", "");
  p.option("compare", "B.json", "compare the JSON result TARGET (A) with B: percentiles side by side, B / A", "");
  p.flag("progress", "a line on stderr every second");
  return p;
}

int run_loadgen(const ArgParser& a) {
  if (a.given("compare")) {
    std::fputs(loadgen::compare_results(a.positional_value("target"), a.value("compare")).c_str(), stdout);
    if (!a.value("html").empty())
      write_file(a.value("html"), loadgen::compare_html(a.positional_value("target"), a.value("compare")));
    return 0;
  }
  const Target t = parse_target(a.positional_value("target"));
  loadgen::LoadOptions o;
  o.workers = static_cast<int>(a.integer("workers", 1, 4096));
  o.requests_per_worker = a.integer("requests", 1, 1L << 40);
  o.rate = a.number("rate", 0, 1e8);
  o.seconds = a.number("seconds", 0.01, 1e6);
  o.warmup_seconds = o.rate > 0 ? a.number("warmup-seconds", 0, 1e6) : 0;
  o.progress = a.flag_set("progress");
  loadgen::TransportFactory connect;
  std::string what;
  if (t.grpc) {
    if (a.value("input").empty()) throw UsageError("loadgen: a gRPC target needs --input FILE (.npy/.csv)");
    const std::string msg = loadgen::grpc_predict_message(t.host, t.port, t.model, a.value("input-name"), a.value("input"));
    connect = [t, msg] { return loadgen::grpc_transport(t.host, t.port, msg); };
    what = "gRPC Predict";
  } else {
    if (a.value("body-file").empty() == a.value("input").empty())
      throw UsageError("loadgen: a REST target needs --body-file FILE or --input FILE");
    const std::string body = a.value("body-file").empty() ? json_body(a.value("input")) : slurp(a.value("body-file"));
    const std::string path = "/v1/models/" + t.model + ":predict";
    connect = [t, body, path] { return loadgen::rest_transport(t.host, t.port, path, body); };
    what = "REST POST " + path;
  }
  if (o.rate > 0)
    std::printf("loadgen: %s on %s:%d, open loop: %.0f requests/s from %d connections for %.1f s (+%.1f s unmeasured)\n",
                what.c_str(), t.host.c_str(), t.port, o.rate, o.workers, o.seconds, o.warmup_seconds);
  else
    std::printf("loadgen: %s on %s:%d, closed loop: %d workers x %ld requests\n", what.c_str(), t.host.c_str(), t.port,
                o.workers, o.requests_per_worker);
  std::fflush(stdout);
  const loadgen::LoadResult r = loadgen::run_load(o, connect);
  std::fputs(loadgen::result_table(r, o.rate > 0).c_str(), stdout);
  if (!a.value("json").empty()) write_file(a.value("json"), loadgen::result_json(r, o, a.positional_value("target")));
  if (!a.value("hgrm").empty()) write_file(a.value("hgrm"), loadgen::hgrm(r.total, r.total_stddev_ns));
  if (!a.value("html").empty()) write_file(a.value("html"), loadgen::result_html(r, o, a.positional_value("target")));
  return r.errors == 0 && r.broken_connections == 0 ? 0 : 1;
}

}  // namespace tickinfer::cli
