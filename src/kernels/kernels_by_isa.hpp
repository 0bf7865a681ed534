#pragma once
// Internal: the kernel functions of each ISA variant, one namespace per ISA with the same names,
// so each kernel_set_<isa>.cpp fills its table from one list. Contracts are those of KernelSet
// (kernel_set.hpp). scalar and portable exist on every architecture (compiled without ISA
// flags). The avx2/avx512 namespaces exist only where TICKINFER_HAVE_X86 is defined; their
// definitions live in *_avx2.cpp / *_avx512.cpp files compiled with that ISA's flags, so they
// must only be called after isa_supported() says the CPU has the ISA.
#include "kernels/kernel_set.hpp"

// One declaration list shared by every ISA namespace (a single list, not hand-copied variants).
#define TICKINFER_DECLARE_KERNELS()                                                              \
  void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,   \
            float lo, float hi) noexcept;                                                        \
  void gemm_rows(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N,      \
                 const float* init, float* y, size_t ldy, float lo, float hi) noexcept;          \
  void activation(const ActivationSpec& act, const float* x, float* y, int n) noexcept;         \
  void softmax(const float* x, float* y, int n) noexcept;                                        \
  void attend_head(const AttendHead& a) noexcept;                                                \
  void lstm_cell(float* z, float* c, float* h, int u, const ActivationSpec& rec,                 \
                 const ActivationSpec& act) noexcept;                                            \
  void gru_cell(float* zx, const float* zh, float* h, int u, const ActivationSpec& rec,          \
                const ActivationSpec& act) noexcept;                                             \
  void layer_norm(const float* x, size_t ldx, int rows, const float* gamma, const float* beta,    \
                  float eps, float* y, size_t ldy, int n) noexcept;                              \
  void add(const float* a, const float* b, float* y, int n) noexcept;                            \
  void sub(const float* a, const float* b, float* y, int n) noexcept;                            \
  void mul(const float* a, const float* b, float* y, int n) noexcept;                            \
  void affine(const float* x, const float* scale, const float* shift, float* y, int n) noexcept; \
  void scale_sums(const int32_t* sums, const float* scale, float s, const float* bias, float* y,  \
                  int n) noexcept;                                                               \
  const KernelSet& kernel_table() noexcept;

namespace tickinfer::kernels {
namespace scalar {
TICKINFER_DECLARE_KERNELS()
void gemm_chain(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch, const float* packed_w,
                int N, const float* init, float* y, size_t ldy, float lo, float hi) noexcept;  // the reference (std::fma), gemv_scalar.cpp
}
namespace portable { TICKINFER_DECLARE_KERNELS() }
#if defined(TICKINFER_HAVE_X86)
namespace avx2 {
TICKINFER_DECLARE_KERNELS()
void gemm4_sequential(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N, const float* init,
                      float* y, size_t ldy, float lo, float hi) noexcept;  // gemm4_sequential_avx2.cpp
}
namespace avx512 { TICKINFER_DECLARE_KERNELS() }
#endif
}  // namespace tickinfer::kernels

// Builds a KernelSet from the functions of the namespace it is expanded in; gemm4 is that ISA's
// gemm4_sequential or nullptr (KernelSet::gemm4_sequential), chain its gemm_chain or nullptr.
#define TICKINFER_KERNEL_TABLE(isa_enum, isa_str, gemm4, chain)                                   \
  KernelSet{isa_enum, isa_str, &gemv, &gemm_rows, gemm4, chain, &activation, &softmax, &attend_head, \
            &lstm_cell, &gru_cell, &layer_norm, &add, &sub, &mul, &affine, &scale_sums}
