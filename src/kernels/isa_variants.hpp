#pragma once
// The one rule by which every kernel family picks its variant for an ISA. The ISA itself is
// resolved once, by the caller, through resolve_isa() (dispatch.cpp: the only reader of
// $TICKINFER_ISA and the only default); a family is handed that Isa and never chooses one.
//
// KernelSet (kernel_set.hpp) has a table per ISA. The tensor-program families (src/tflite/
// kernels: int8 gemv, bf16 gemv, TFLite float activations, hybrid epilogue, row and input
// quantization, the int8 LSTM step kernels) have variants for some ISAs only, listed in one
// IsaVariants table each. Asked for an ISA it has no variant for, a family falls back down the
// chain avx512 -> avx2 -> portable -> scalar to the first variant it has; every family has the
// scalar one, its reference. A variant needing a CPU feature beyond its ISA (AVX-512 VNNI) is
// left out of the table where the CPU lacks it, and so falls back the same way. Each ISA's CPU
// check includes the narrower ones' (isa_supported(Avx512) requires AVX2 + FMA), so a fallback
// always runs where the ISA asked for does. Prepare time only.
#include "kernels/kernel_set.hpp"

namespace tickinfer::kernels {

// The next ISA down the fallback chain (Scalar stays Scalar).
constexpr Isa narrower_isa(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return Isa::Avx2;
    case Isa::Avx2: return Isa::Portable;
    default: return Isa::Scalar;
  }
}

// A family's variants by ISA. T is a pointer (to a function or to a table of functions); nullptr
// where the family has no variant for that ISA. `scalar` must be set.
template <class T>
struct IsaVariants {
  T scalar = nullptr;
  T portable = nullptr;
  T avx2 = nullptr;
  T avx512 = nullptr;

  T at(Isa isa) const {
    switch (isa) {
      case Isa::Portable: return portable;
      case Isa::Avx2: return avx2;
      case Isa::Avx512: return avx512;
      default: return scalar;
    }
  }
  // The variant for isa, or the first one down the fallback chain. An ISA this CPU lacks (callers
  // normally pass a supported one) is skipped the same way, so a variant never runs where the
  // CPU cannot run it.
  T pick(Isa isa) const {
    for (Isa i = isa; i != Isa::Scalar; i = narrower_isa(i)) {
      if (T v = at(i); v && isa_supported(i)) return v;
    }
    return scalar;
  }
};

}  // namespace tickinfer::kernels
