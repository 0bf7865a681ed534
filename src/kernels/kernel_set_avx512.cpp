// The avx512 kernel table. dispatch.cpp hands it out only when the CPU supports avx512.
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx512 {

const KernelSet& kernel_table() noexcept {
  static const KernelSet table = TICKINFER_KERNEL_TABLE(Isa::Avx512, "avx512");
  return table;
}

}  // namespace tickinfer::kernels::avx512
