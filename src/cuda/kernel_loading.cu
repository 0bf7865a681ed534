#include "cuda/kernel_loading.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace tickinfer::cuda {
namespace {

using FuncLoad = CUresult (*)(CUfunction);
using FuncIsLoaded = CUresult (*)(CUfunctionLoadingState*, CUfunction);

// The driver's entry points, looked up through the runtime (nothing links libcuda itself);
// null where the driver predates them (CUDA 12.4).
template <class F>
F driver_entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

std::mutex g_mu;
std::map<int, std::vector<CUfunction>>* g_loaded = new std::map<int, std::vector<CUfunction>>();  // never destroyed
std::vector<CUfunction>* g_filling = nullptr;  // the device being loaded, under g_mu

}  // namespace

void detail::load_function(const void* kernel) {
  cudaFunction_t f = nullptr;
  if (cudaGetFuncBySymbol(&f, kernel) != cudaSuccess || !f) {
    cudaGetLastError();
    return;
  }
  static const FuncLoad func_load = driver_entry<FuncLoad>("cuFuncLoad");
  if (func_load) {
    func_load(reinterpret_cast<CUfunction>(f));
  } else {
    cudaFuncAttributes a{};
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess) cudaGetLastError();
  }
  if (g_filling) g_filling->push_back(reinterpret_cast<CUfunction>(f));
}

void load_every_kernel() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_loaded->count(device)) return;
  std::vector<CUfunction>& functions = (*g_loaded)[device];
  g_filling = &functions;
  detail::load_graph_form_kernels();
  detail::load_integer_program_kernels();
  detail::load_shared_form_kernel();
  detail::load_registers_form_kernels();
  detail::load_tagged_form_kernels();
  detail::load_resident_program_kernels();
  g_filling = nullptr;
  cudaMemPool_t pool = nullptr;
  uint64_t keep = UINT64_MAX;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
    cudaGetLastError();
}

KernelLoading kernel_loading_on_this_device() {
  KernelLoading r;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return r;
  }
  static const FuncIsLoaded is_loaded = driver_entry<FuncIsLoaded>("cuFuncIsLoaded");
  r.how = driver_entry<FuncLoad>("cuFuncLoad") ? "cuFuncLoad" : "cudaFuncGetAttributes";
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_loaded->find(device);
  if (it == g_loaded->end()) return r;
  r.kernels = int(it->second.size());
  if (!is_loaded) return r;
  r.loaded = 0;
  for (CUfunction f : it->second) {
    CUfunctionLoadingState state{};
    if (is_loaded(&state, f) == CUDA_SUCCESS && state == CU_FUNCTION_LOADING_STATE_LOADED) ++r.loaded;
  }
  return r;
}

}  // namespace tickinfer::cuda
