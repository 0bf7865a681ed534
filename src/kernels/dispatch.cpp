// Choosing a kernel set: which ISAs were compiled in, which the CPU has, and the TICKINFER_ISA
// override. Runs at plan-build time only, never on the run path.
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/kernels_by_isa.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::kernels {

namespace {

bool cpu_has(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
    case Isa::Portable:  // compiled without ISA flags: runs wherever the library runs
      return true;
#if defined(TICKINFER_HAVE_X86)
    case Isa::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
      // The avx512 kernels also use AVX2/FMA encodings for 256-bit helpers.
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    default:
      return false;
  }
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Portable: return "portable";
  }
  return "unknown";
}

Isa parse_isa(const char* name) {
  const std::string s = name ? name : "";
  if (s == "scalar") return Isa::Scalar;
  if (s == "avx2") return Isa::Avx2;
  if (s == "avx512") return Isa::Avx512;
  if (s == "portable") return Isa::Portable;
  throw Error("unknown ISA name '" + s + "' (expected scalar, portable, avx2 or avx512)");
}

bool isa_supported(Isa isa) { return cpu_has(isa); }

const KernelSet& kernel_set(Isa isa) {
  if (!isa_supported(isa)) {
    throw Error(std::string("ISA '") + isa_name(isa) +
                "' is not available: not compiled in or not supported by this CPU");
  }
  switch (isa) {
#if defined(TICKINFER_HAVE_X86)
    case Isa::Avx2: return avx2::kernel_table();
    case Isa::Avx512: return avx512::kernel_table();
#endif
    case Isa::Portable: return portable::kernel_table();
    default: return scalar::kernel_table();
  }
}

Isa resolve_isa(const std::string& requested) {
  if (requested.empty()) return best_isa();
  const Isa isa = parse_isa(requested.c_str());
  if (!isa_supported(isa)) {
    throw Error(std::string("ISA '") + isa_name(isa) + "' is not available: not compiled in or not supported by this CPU");
  }
  return isa;
}

Isa best_isa() {
  if (const char* forced = std::getenv("TICKINFER_ISA"); forced && *forced) {
    const Isa isa = parse_isa(forced);  // throws on unknown names
    if (!isa_supported(isa)) {
      throw Error(std::string("TICKINFER_ISA=") + forced +
                  ": this ISA is not compiled in or not supported by this CPU");
    }
    return isa;
  }
  for (Isa isa : {Isa::Avx512, Isa::Avx2}) {
    if (isa_supported(isa)) return isa;
  }
  return Isa::Portable;  // always supported; scalar is the reference, chosen only when forced
}

}  // namespace tickinfer::kernels
