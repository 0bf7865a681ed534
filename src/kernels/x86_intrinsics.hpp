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

// Put before a loop whose trip count is a compile-time constant (over accumulator registers),
// so it is unrolled early and arrays such as `__m256 acc[S][V]` stay in registers. Reductions
// over such arrays are written without data-dependent loop bounds (see sum_sets in the gemv
// files): GCC 12 otherwise keeps the array in memory and stores every accumulator on each k
// step, which halves gemv speed. Check `objdump -d` of the hot loops after changing them.
#if defined(__clang__)
#define TICKINFER_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define TICKINFER_UNROLL _Pragma("GCC unroll 64")
#else
#define TICKINFER_UNROLL
#endif
