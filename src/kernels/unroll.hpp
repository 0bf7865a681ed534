#pragma once
// Internal: TICKINFER_UNROLL, put before a loop whose trip count is a compile-time constant
// (over accumulator registers), so it is unrolled early and arrays such as `V acc[S][N]` stay in
// registers. Reductions over such arrays are written without data-dependent loop bounds (see
// sum_sets in the gemv files): GCC 12 otherwise keeps the array in memory and stores every
// accumulator on each k step, which halves gemv speed. Check `objdump -d` of the hot loops
// after changing them.
#if defined(__clang__)
#define TICKINFER_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define TICKINFER_UNROLL _Pragma("GCC unroll 64")
#else
#define TICKINFER_UNROLL
#endif

// TICKINFER_ALWAYS_INLINE, before a function or after a lambda's parameter list: kernels pass
// their per-row bodies as lambdas to row walkers (attention_simd.hpp), and a body or walker left
// as a call keeps the accumulators it captures in memory.
#if defined(__GNUC__) || defined(__clang__)
#define TICKINFER_ALWAYS_INLINE __attribute__((always_inline))
#else
#define TICKINFER_ALWAYS_INLINE
#endif
