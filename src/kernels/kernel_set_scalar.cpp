// The Scalar kernel table: available on every CPU.
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

const KernelSet& kernel_table() noexcept {
  static const KernelSet table = TICKINFER_KERNEL_TABLE(Isa::Scalar, "scalar", nullptr, &gemm_chain);
  return table;
}

}  // namespace tickinfer::kernels::scalar
