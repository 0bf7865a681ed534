#pragma once
// The ISA an op test prepares with (PrepareContext::isa): `name` parsed, and where this CPU lacks
// it the widest ISA below it that it has, so tests may name ISAs without checking the CPU. (The
// Interpreter instead refuses an ISA the CPU lacks: kernels::resolve_isa.)
#include "kernels/isa_variants.hpp"

namespace tickinfer {

inline kernels::Isa test_isa(const char* name) {
  kernels::Isa isa = kernels::parse_isa(name);
  while (!kernels::isa_supported(isa)) isa = kernels::narrower_isa(isa);
  return isa;
}

}  // namespace tickinfer
