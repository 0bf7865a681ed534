#pragma once
// Internal: <immintrin.h> for the ISA-specific translation units. GCC 12 reports false
// "may be used uninitialized" warnings inside its own AVX-512 intrinsic headers at -O3 (the
// intrinsics start from _mm512_undefined_ps on purpose, GCC bug 105593); they are silenced
// for the header text only, so warnings in our code still show.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

// TICKINFER_UNROLL, used by every gemv file, portable ones included.
#include "kernels/unroll.hpp"
