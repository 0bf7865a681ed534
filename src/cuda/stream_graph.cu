#include "cuda/stream_graph.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "cuda/kernel_loading.hpp"
#include "cuda/pinned_pool.hpp"

namespace tickinfer::cuda {

void check_cuda(cudaError_t e, const char* who, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(who) + ": " + what + ": " + cudaGetErrorString(e));
}

DeviceStream open_device_stream(int device, const char* who) {
  check_cuda(cudaSetDevice(device), who, "cudaSetDevice");
  load_every_kernel();
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), who, "cudaGetDeviceProperties");
  DeviceStream d;
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  check_cuda(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), who, "cudaStreamCreate");
  return d;
}

void* device_buffer(cudaStream_t stream, size_t bytes, const void* host, size_t host_bytes, const char* who,
                    const char* what) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, std::max<size_t>(bytes, 1), stream), who, what);
  check_cuda(cudaMemsetAsync(p, 0, bytes, stream), who, what);
  if (host_bytes) check_cuda(cudaMemcpyAsync(p, host, host_bytes, cudaMemcpyHostToDevice, stream), who, what);
  return p;
}

cudaGraphExec_t end_capture(cudaStream_t stream, cudaError_t first_error, const char* who) {
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cudaError_t e = first_error == cudaSuccess ? end : first_error;
  if (e != cudaSuccess && graph) cudaGraphDestroy(graph);
  check_cuda(e, who, "capturing the steps");
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(e, who, "cudaGraphInstantiate");
  // Its work descriptors onto the device now (stream-ordered), so no first run() pays for it.
  if (cudaGraphUpload(exec, stream) != cudaSuccess) cudaGetLastError();
  return exec;
}

double median_launch_us(cudaStream_t stream, cudaGraphExec_t exec) noexcept {
  std::vector<double> us;
  us.reserve(16);
  for (int i = 0; i < 16; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (cudaGraphLaunch(exec, stream) != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess)
      return std::numeric_limits<double>::infinity();
    if (i >= 5) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

std::string launch_time_text(double us) {
  return us < 1e12 ? std::to_string(int64_t(us + 0.5)) : std::string("failed");
}

cudaError_t launch_kernel(cudaStream_t stream, const void* kernel, dim3 grid, dim3 block, void** args, bool dependent) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelExC(&cfg, kernel, args);
}

std::string launch_variant_text(int v, bool has_tiles) {
  const LaunchVariant l = launch_variant(v, has_tiles);
  return std::string(l.tiles ? "tiles" : "per row") + (l.dependent ? ", dependent launch" : "");
}

std::string launch_variants_legend(bool has_tiles) {
  std::string s;
  for (int v = 0; v < launch_variants(has_tiles); ++v)
    s += (v ? ", " : "") + std::to_string(v) + " " + launch_variant_text(v, has_tiles);
  return s;
}

int capture_run_graph(cudaStream_t stream, GraphChoices& choices, const std::vector<int>& candidates, bool has_tiles,
                      const std::function<cudaGraphExec_t(int)>& capture, cudaGraphExec_t& kept, std::string& text) {
  std::lock_guard<std::mutex> lock(choices.mutex);
  int v = choices.run_variant;
  if (v < 0) {
    std::string times;
    v = keep_fastest_graph(stream, candidates, capture, kept, times);
    choices.run_variant = v;
    text = "; run() timed by variant (" + times + ")";
  } else {
    kept = capture(v);
    text = "; run() as the plan this one was cloned from timed it";
  }
  text += "; run(): " + launch_variant_text(v, has_tiles);
  return v;
}

int keep_fastest_graph(cudaStream_t stream, const std::vector<int>& candidates,
                       const std::function<cudaGraphExec_t(int)>& capture, cudaGraphExec_t& kept, std::string& times) {
  kept = capture(candidates.at(0));
  int chosen = candidates[0];
  if (candidates.size() == 1) return chosen;  // nothing to choose: not timed
  double best_us = median_launch_us(stream, kept);
  times += std::to_string(chosen) + ": " + launch_time_text(best_us) + " us";
  for (size_t k = 1; k < candidates.size(); ++k) {
    double us = std::numeric_limits<double>::infinity();
    cudaGraphExec_t other = nullptr;
    try {
      other = capture(candidates[k]);
      us = median_launch_us(stream, other);
    } catch (const std::exception&) {
      // A variant the runtime would not capture: never kept, the kept one stands.
    }
    times += ", " + std::to_string(candidates[k]) + ": " + launch_time_text(us) + " us";
    if (us < best_us) std::swap(kept, other), best_us = us, chosen = candidates[k];
    if (other) cudaGraphExecDestroy(other);
  }
  // No candidate completed a launch: a kernel faulted (the context is spoiled for the process) or
  // none could launch. Said now, by name, rather than by NaN outputs from every run.
  if (best_us == std::numeric_limits<double>::infinity()) {
    cudaGraphExecDestroy(kept);
    kept = nullptr;
    throw std::runtime_error("no launch form of the graph completed a run (" + times + ")");
  }
  return chosen;
}

void BatchGraphs::reserve(cudaStream_t stream, int max_rows, int64_t row_stride, Span in, Span out,
                          LaunchSteps launch_steps, void* owner, int variants, GraphChoices& choices,
                          const char* who) {
  release(stream);
  std::lock_guard<std::mutex> lock(choices.mutex);
  std::vector<int> kept = choices.reserved_rows == max_rows ? choices.batch_variants : std::vector<int>{};
  try {
    arena_ = device_buffer(stream, size_t(row_stride) * size_t(max_rows), nullptr, 0, who, "the batch arena");
    in_ = detail::take_mapped(std::max<size_t>((size_t(in.bytes) * size_t(max_rows) + 7) / 8, 1)).host;
    out_ = detail::take_mapped(std::max<size_t>((size_t(out.bytes) * size_t(max_rows) + 7) / 8, 1)).host;
    std::memset(in_, 0, size_t(in.bytes) * size_t(max_rows));
    in_span_ = in, out_span_ = out;
    auto* arena = static_cast<char*>(arena_);
    const auto capture = [&](int rows, int variant) {
      check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), who, "cudaStreamBeginCapture");
      cudaError_t e = cudaMemcpy2DAsync(arena + in.offset, size_t(row_stride), in_, size_t(in.bytes), size_t(in.bytes),
                                        size_t(rows), cudaMemcpyHostToDevice, stream);
      if (e == cudaSuccess) e = launch_steps(owner, arena_, rows, variant);
      if (e == cudaSuccess)
        e = cudaMemcpy2DAsync(out_, size_t(out.bytes), arena + out.offset, size_t(row_stride), size_t(out.bytes),
                              size_t(rows), cudaMemcpyDeviceToHost, stream);
      return end_capture(stream, e, who);
    };
    const bool reuse = !kept.empty();
    size_t size = 0;
    for (int rows = 1; rows < max_rows; ++size) {
      rows = std::min(2 * rows, max_rows);
      if (reuse) {
        const int variant = size < kept.size() ? kept[size] : 0;
        graphs_.push_back({rows, capture(rows, variant)});
        if (variants > 1)
          choices_ += (choices_.empty() ? "" : ", ") + std::to_string(rows) + " rows: variant " + std::to_string(variant);
        continue;
      }
      // The kept graph is in graphs_ at once and a contender is destroyed before the next capture
      // (which may throw), so an exception leaves nothing for release() to miss.
      graphs_.push_back({rows, nullptr});
      std::vector<int> every(size_t(std::max(variants, 1)));  // 0, 1, ... variants - 1
      for (int v = 0; v < int(every.size()); ++v) every[size_t(v)] = v;
      std::string times;
      const int chosen =
          keep_fastest_graph(stream, every, [&](int v) { return capture(rows, v); }, graphs_.back().exec, times);
      if (variants > 1)
        choices_ += (choices_.empty() ? "" : ", ") + std::to_string(rows) + " rows: variant " + std::to_string(chosen) +
                    " (" + times + ")";
      kept.push_back(chosen);
    }
    if (reuse && !choices_.empty()) choices_ += " (as the plan this one was cloned from timed them)";
    check_cuda(cudaStreamSynchronize(stream), who, "the batch arena");
    choices.reserved_rows = max_rows;
    choices.batch_variants = std::move(kept);
  } catch (...) {
    release(stream);
    throw;
  }
  max_rows_ = max_rows;
}

bool BatchGraphs::run(cudaStream_t stream, const void* x, int rows, void* y) noexcept {
  if (rows < 2 || rows > max_rows_) return false;
  size_t g = 0;
  while (graphs_[g].rows < rows) ++g;  // the smallest batch graph that holds them
  std::memcpy(in_, x, size_t(in_span_.bytes) * size_t(rows));
  if (cudaGraphLaunch(graphs_[g].exec, stream) != cudaSuccess) return false;
  if (cudaStreamSynchronize(stream) != cudaSuccess) return false;
  std::memcpy(y, out_, size_t(out_span_.bytes) * size_t(rows));
  return true;
}

void BatchGraphs::release(cudaStream_t stream) noexcept {
  for (const Graph& g : graphs_)
    if (g.exec) cudaGraphExecDestroy(g.exec);
  graphs_.clear();
  choices_.clear();
  if (arena_) {
    cudaFreeAsync(arena_, stream);
    cudaStreamSynchronize(stream);
  }
  arena_ = nullptr;
  detail::give_back_mapped(static_cast<unsigned long long*>(in_));
  detail::give_back_mapped(static_cast<unsigned long long*>(out_));
  in_ = out_ = nullptr;
  max_rows_ = 0;
}

}  // namespace tickinfer::cuda
