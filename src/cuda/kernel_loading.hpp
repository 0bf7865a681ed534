// Loading every kernel of the CUDA backend before the first one runs. CUDA loads a kernel when it
// is first launched (lazy loading, the default since CUDA 12.2), under the context's lock, and the
// load waits for the device's work to drain: with a resident kernel running, which never
// finishes, that wait never ends and every other CUDA call of the process queues behind it. So the
// first plan a process starts on a device loads them all, before anything of this backend can be
// resident there. Kernels of other libraries first launched beside a resident plan are the
// application's to load first (or CUDA_MODULE_LOADING=EAGER); docs/gpu.md says so.
#pragma once

#include <string>

namespace tickinfer::cuda {

// On the current device, once per device and process: every kernel below loaded (the driver's
// cuFuncLoad on each, where the driver has it; else the attribute query that needs the loaded
// function), and the device's default memory pool told to keep what plans free (so no later free
// or synchronise hands memory back to the system while a resident kernel runs). Errors are left
// for the launches to report (a kernel this card cannot run fails there, by name).
void load_every_kernel();

// What load_every_kernel did on the current device (for the GPU tests): kernels it was given,
// and how many of those the driver reports loaded (cuFuncIsLoaded), or -1 where the driver
// cannot say.
struct KernelLoading {
  int kernels = 0;
  int loaded = -1;
  std::string how;  // "cuFuncLoad" or "cudaFuncGetAttributes"
};
KernelLoading kernel_loading_on_this_device();

namespace detail {
void load_function(const void* kernel);
template <class Kernel>
void load_kernel(Kernel* kernel) {
  load_function(reinterpret_cast<const void*>(kernel));
}
// Each kernel file's own list: load_kernel on each of its kernels.
void load_graph_form_kernels();        // device_graph.cu
void load_integer_program_kernels();   // integer_graph.cu
void load_shared_form_kernel();        // resident_lstm_kernel.cu
void load_registers_form_kernels();    // resident_registers_kernel.cu
void load_tagged_form_kernels();       // resident_tagged_kernel.cu
void load_resident_program_kernels();  // resident_program.cu
}  // namespace detail

}  // namespace tickinfer::cuda
