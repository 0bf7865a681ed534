// The portable kernel table (vector extensions, no ISA flags). Every CPU supports it.
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::portable {

const KernelSet& kernel_table() noexcept {
  static const KernelSet table = TICKINFER_KERNEL_TABLE(Isa::Portable, "portable");
  return table;
}

}  // namespace tickinfer::kernels::portable
