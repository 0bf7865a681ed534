// The avx2 kernel table. dispatch.cpp hands it out only when the CPU supports avx2.
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx2 {

const KernelSet& kernel_table() noexcept {
  static const KernelSet table = TICKINFER_KERNEL_TABLE(Isa::Avx2, "avx2");
  return table;
}

}  // namespace tickinfer::kernels::avx2
