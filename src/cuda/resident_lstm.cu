// Host side of the resident LSTM kernel: the mapped request/reply buffers, the choice of form
// (resident_register_form.cu, resident_shared_form.cu), and the request exchange.
#include "cuda/resident_lstm.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "cuda/kernel_loading.hpp"
#include "cuda/pinned_pool.hpp"
#include "cuda/resident_forms.hpp"
#include "cuda/resident_lstm_kernel.cuh"

namespace tickinfer::cuda {

namespace detail {

int round_up(int v, int m) { return (v + m - 1) / m * m; }

int pow2_at_least(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

void pack_lstm_rows(const LstmLayerWeights& W, int cluster, int stride, std::vector<float>& w, std::vector<float>& b) {
  const int H = W.units, G = 4 * H, hb = H / cluster, rows = 4 * hb;
  w.assign(size_t(cluster) * rows * stride, 0.0f);
  b.assign(size_t(cluster) * rows, 0.0f);
  for (int blk = 0; blk < cluster; ++blk)
    for (int q = 0; q < 4; ++q)
      for (int u = 0; u < hb; ++u) {
        const int r = q * hb + u, col = q * H + blk * hb + u;
        float* row = w.data() + (size_t(blk) * rows + r) * stride;
        for (int k = 0; k < W.input; ++k) row[k] = W.kernel[size_t(k) * G + col];
        for (int k = 0; k < H; ++k) row[W.input + k] = W.recurrent[size_t(k) * G + col];
        b[size_t(blk) * rows + r] = W.bias[col];
      }
}

size_t one_block_per_sm_bytes(size_t needed, const FormContext& ctx) {
  const size_t spread = ctx.shared_per_sm / 2 + 1024;
  return std::max(needed, std::min(spread, ctx.shared_limit));
}

void pack_dense_rows(const DenseLayerWeights& W, int stride, std::vector<float>& w) {
  w.assign(size_t(W.output) * stride, 0.0f);
  for (int o = 0; o < W.output; ++o)
    for (int k = 0; k < W.input; ++k) w[size_t(o) * stride + k] = W.kernel[size_t(k) * W.output + o];
}

}  // namespace detail

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("resident LSTM: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace

// Everything the plan holds on the device. Nothing here may synchronise the whole device (a
// resident kernel never finishes, so that would wait forever for the plans beside this one):
// device memory is stream-ordered on the plan's own stream, the mapped buffers come from the
// pinned pool.
struct ResidentLstm::Device {
  cudaStream_t stream = nullptr;
  detail::MappedSlot request, reply;
  int request_units = 0;
  std::vector<void*> buffers;  // stream-ordered device allocations
  unsigned long long* trace = nullptr;
  // Set when the kernel stopped answering: it may still run (a lost kernel never ends before the
  // context does), so nothing may wait for its stream, and its mapped buffers are never handed to
  // another plan (it could read that plan's requests and write replies with its sequence numbers).
  bool lost = false;

  ~Device() {
    for (void* p : buffers) cudaFreeAsync(p, stream);  // stream-ordered: never blocks
    if (stream) {
      if (!lost) cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);  // returns at once; the stream's resources go when its work ends
    }
    if (!lost) {
      detail::give_back_mapped(request.host);
      detail::give_back_mapped(reply.host);
    }
  }
  void* alloc_copy(const void* src, size_t bytes) {
    void* p = nullptr;
    check(cudaMallocAsync(&p, std::max<size_t>(bytes, 4), stream), "cudaMallocAsync");
    buffers.push_back(p);
    // From pageable memory: returns once the source is staged, so `src` may go away.
    if (bytes) check(cudaMemcpyAsync(p, src, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync weights");
    return p;
  }
};

std::unique_ptr<ResidentLstm> ResidentLstm::start(const LstmStack& stack, const ResidentOptions& opt) {
  if (std::string e = stack.shape_error(); !e.empty()) throw std::runtime_error("resident LSTM: " + e);
  if (opt.steps < 1) throw std::runtime_error("resident LSTM: steps must be at least 1");
  if (opt.form != "auto" && opt.form != "registers" && opt.form != "shared" && opt.form != "tagged")
    throw std::runtime_error("resident LSTM: form must be auto, registers, tagged or shared, not " + opt.form);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= opt.device)
    throw std::runtime_error("resident LSTM: no CUDA device " + std::to_string(opt.device));
  check(cudaSetDevice(opt.device), "cudaSetDevice");
  load_every_kernel();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, opt.device), "cudaGetDeviceProperties");
  if (prop.major < 9)
    throw std::runtime_error("resident LSTM: needs thread-block clusters (sm_90), device is sm_" +
                             std::to_string(prop.major * 10 + prop.minor));

  auto self = std::unique_ptr<ResidentLstm>(new ResidentLstm());
  self->device_ = std::make_unique<Device>();
  Device& dev = *self->device_;
  check(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<unsigned long long> zeros(size_t(kTraceRequests) * detail::kTraceFields, 0ull);
  dev.trace = static_cast<unsigned long long*>(dev.alloc_copy(zeros.data(), zeros.size() * 8));
  dev.request_units = 1 + opt.steps * stack.input_width();
  dev.request = detail::take_mapped(size_t(dev.request_units));
  dev.reply = detail::take_mapped(size_t(stack.output_width()));

  detail::FormContext ctx;
  ctx.upload = [&dev](const std::vector<float>& v) {
    return static_cast<const float*>(dev.alloc_copy(v.data(), v.size() * sizeof(float)));
  };
  ctx.request = dev.request.device;
  ctx.reply = dev.reply.device;
  ctx.trace = dev.trace;
  ctx.trace_len = kTraceRequests;
  ctx.stream = dev.stream;
  ctx.shared_limit = prop.sharedMemPerBlockOptin;
  ctx.shared_per_sm = prop.sharedMemPerMultiprocessor;
  if (opt.single_request) {
    ctx.last_request = 1;
    for (int i = 1; i < dev.request_units; ++i) {
      const float v = 0.1f;
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      dev.request.host[i] = (1ull << 32) | bits;
    }
    dev.request.host[0] = (1ull << 32) | detail::kCommandReset;
  }

  detail::FormChoice chosen;
  std::string why;
  if (opt.form != "shared") why = detail::launch_register_form(stack, opt, ctx, chosen);
  if (chosen.form.empty() && (opt.form == "auto" || opt.form == "shared")) {
    const std::string shared_why = detail::launch_shared_form(stack, opt, ctx, chosen);
    why = why.empty() ? shared_why : why + "; " + shared_why;
  }
  if (chosen.form.empty()) throw std::runtime_error("resident LSTM: " + why);
  // From here the kernel runs until told to stop (a single request's ends by itself): whatever
  // throws below must send the stop, never wait for a kernel nobody stopped.
  self->running_ = !opt.single_request;
  self->layout_ = {chosen.form, chosen.cluster, chosen.threads, chosen.lanes, opt.steps, chosen.shared_bytes, prop.name};
  self->input_width_ = stack.input_width();
  self->output_width_ = stack.output_width();
  if (opt.single_request) {
    check(cudaStreamSynchronize(dev.stream), "the single request");
    self->seq_ = 1;
    self->answering_ = false;
    return self;
  }
  // One request proves the kernel is alive before anyone relies on it.
  std::vector<float> x(size_t(opt.steps) * stack.input_width(), 0.0f), y(stack.output_width());
  if (!self->run(x.data(), true, y.data(), 5'000'000'000)) {
    self->stop();  // marks the device lost, so unwinding never waits for the kernel
    const cudaError_t e = cudaStreamQuery(dev.stream);
    throw std::runtime_error(std::string("resident LSTM: no reply to the first request in 5 s (stream: ") +
                             cudaGetErrorString(e) + "); " + detail::kNoReplyHint);
  }
  return self;
}

bool ResidentLstm::run(const float* x, bool reset, float* y, int64_t timeout_ns) noexcept {
  // A lost kernel is never sent another request: each would wait out its timeout, and a kernel
  // that is only slow would find its request overwritten.
  if (!answering_ || !running_) return false;
  Device& dev = *device_;
  const unsigned long long seq = ++seq_;
  const int n = dev.request_units - 1;
  for (int i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, 4);
    std::atomic_ref<unsigned long long>(dev.request.host[1 + i]).store((seq << 32) | bits, std::memory_order_relaxed);
  }
  std::atomic_ref<unsigned long long>(dev.request.host[0]).store((seq << 32) | (reset ? detail::kCommandReset : 0u),
                                                           std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (int o = 0; o < output_width_; ++o) {
    unsigned long long v;
    for (uint32_t spins = 0;; ++spins) {
      v = std::atomic_ref<unsigned long long>(dev.reply.host[o]).load(std::memory_order_acquire);
      if ((v >> 32) == seq) break;
      if ((spins & 1023u) == 1023u && std::chrono::steady_clock::now() > deadline) {
        answering_ = false;  // the kernel is lost: never wait for it again
        return false;
      }
    }
    const uint32_t bits = uint32_t(v);
    std::memcpy(y + o, &bits, 4);
  }
  return true;
}

void ResidentLstm::stop() noexcept {
  if (!running_) return;
  running_ = false;
  Device& dev = *device_;
  const unsigned long long seq = ++seq_;
  for (int i = dev.request_units - 1; i >= 0; --i)
    std::atomic_ref<unsigned long long>(dev.request.host[i]).store((seq << 32) | detail::kCommandStop,
                                                             std::memory_order_release);
  // A kernel that stopped answering may never read the stop request; the context's teardown
  // at exit ends it instead of a wait here that would never return.
  if (answering_)
    cudaStreamSynchronize(dev.stream);
  else
    dev.lost = true;
}

std::vector<ResidentTrace> ResidentLstm::stop_and_read_trace() {
  stop();
  if (device_->lost) throw std::runtime_error("resident LSTM: the kernel stopped answering; its trace cannot be read");
  std::vector<unsigned long long> raw(size_t(kTraceRequests) * detail::kTraceFields);
  check(cudaMemcpyAsync(raw.data(), device_->trace, raw.size() * 8, cudaMemcpyDeviceToHost, device_->stream),
        "cudaMemcpyAsync trace");
  check(cudaStreamSynchronize(device_->stream), "the trace copy");
  // Request k (1-based) sits at slot (k - 1) % kTraceRequests; the stop request wrote nothing.
  const uint32_t last = seq_ - 1, n = std::min<uint32_t>(last, kTraceRequests);
  std::vector<ResidentTrace> out;
  out.reserve(n);
  for (uint32_t k = last - n + 1; k <= last; ++k) {
    const unsigned long long* t = raw.data() + size_t((k - 1) % kTraceRequests) * detail::kTraceFields;
    out.push_back({t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10]});
  }
  return out;
}

ResidentLstm::~ResidentLstm() { stop(); }

}  // namespace tickinfer::cuda
