// POST /v1/models/{name}[/versions/{N}|/labels/{L}]:predict (:classify and :regress are in
// rest_classify_handler.cpp). The hot path: once the worker's scratch has grown, a predict
// allocates nothing and takes no lock (serving_hot_path_test).
#include <string>

#include "serving/api/rest_handlers.hpp"

namespace tickinfer::serving {

void handle_predict(RestCall& call) {
  RestScratch& s = call.s;
  const RestOptions& options = call.options;
  if (!resolve_servable(call)) return;
  const Servable& sv = *call.servable;
  if (!s.doc.parse(call.req.body)) {
    call.fail_counted(StatusCode::InvalidArgument, "JSON Parse error: " + s.doc.error());
    return;
  }
  if (!decode_predict_request_json(s.doc, sv.inputs(), options.limits, s.in, s.error)) {
    call.fail_counted(StatusCode::InvalidArgument, s.error);
    return;
  }
  call.signature = s.in.signature_name.empty() ? std::string_view(sv.served_signature())
                                               : std::string_view(s.in.signature_name);
  if (!sv.serves_signature(s.in.signature_name)) {
    call.fail_counted(StatusCode::InvalidArgument,
                      "Serving signature name: \"" + s.in.signature_name + "\" not found in signature def");
    return;
  }
  const uint64_t start = monotonic_ns();
  if (start - call.received_ns > options.timeout_ns) {
    call.fail_counted(StatusCode::DeadlineExceeded, "request deadline exceeded before compute");
    return;
  }
  const size_t batch = s.in.batch;
  if (call.worker >= sv.num_plans()) {
    call.fail_counted(StatusCode::Internal, "worker index beyond the servable's plans");
    return;
  }
  if (s.out.size() < sv.outputs().size()) s.out.resize(sv.outputs().size());  // grow only
  s.in_ptr.clear();
  s.out_ptr.clear();
  for (size_t i = 0; i < sv.inputs().size(); ++i) s.in_ptr.push_back(s.in.data[i].data());
  for (size_t o = 0; o < sv.outputs().size(); ++o) {
    s.out[o].resize(batch * sv.outputs()[o].size);
    s.out_ptr.push_back(s.out[o].data());
  }
  call.batch = batch;
  call.logged_inputs = &sv.inputs();
  uint64_t queue_ns = start - call.received_ns, compute_ns = 0;
  const bool batched = options.batching && options.batching->batches(sv);
  if (batched) {
    const BatchScheduler::Result br = options.batching->run(call.servable, batch, s.in_ptr.data(), s.out_ptr.data());
    if (br.code != StatusCode::Ok) {
      call.fail_counted(br.code, br.code == StatusCode::Unavailable
                                     ? std::string("The batch scheduling queue to which this task was submitted is full")
                                     : "Task size " + std::to_string(batch) + " is larger than maximum batch size");
      return;
    }
    queue_ns += br.queue_ns;
    compute_ns = br.compute_ns;
  } else {
    sv.run(call.worker, batch, s.in_ptr.data(), s.out_ptr.data());
  }
  const uint64_t done = monotonic_ns();
  if (!batched) compute_ns = done - start;
  encode_predict_response_json(s.in.row_format, batch, sv.outputs(), s.out, call.resp.body);
  const uint64_t end = monotonic_ns();
  ModelMetrics& mm = *call.model_metrics;
  mm.count(StatusCode::Ok);
  mm.latency[0].record_us(static_cast<double>(end - call.received_ns) / 1000.0);
  mm.queue[0].record_us(static_cast<double>(queue_ns) / 1000.0);
  mm.compute[0].record_us(static_cast<double>(compute_ns) / 1000.0);
  call.start_ns = start;
  call.done_ns = done;
  call.logged_outputs = &sv.outputs();
}

}  // namespace tickinfer::serving
