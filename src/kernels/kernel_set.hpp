#pragma once
// The table of fp32 compute kernels for one instruction set. The compiler picks one KernelSet
// when a plan is built (dispatch once, high up) and stores its function pointers in the plan's
// steps; nothing below this table branches on the CPU.
//
// Contracts shared by every variant:
//  * No allocation, no locks, no syscalls; all functions are noexcept.
//  * Pointers need no particular alignment; n/K/N may be any size >= 1.
//  * Output buffers are written only in [0, n) (tests put guard bytes after them).
//  * in-place (y == x) is allowed wherever stated.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/activation_spec.hpp"

namespace tickinfer::kernels {

enum class Isa : uint8_t {
  Scalar,    // plain C++ loops: the reference every other variant is tested against; used only
             // when forced
  Avx2,      // AVX2 + FMA, 256-bit
  Avx512,    // AVX-512F (+DQ/BW/VL), 512-bit
  Portable,  // 128-bit GCC/Clang vector extensions, no ISA flags: SSE2 on baseline x86-64, NEON
             // on AArch64; the default on CPUs without AVX2. Last, so older values keep meaning.
};

// Packed weight layout for gemv, shared by all variants so one packed copy serves any kernel set.
// A (K x N) row-major matrix W[k][n] is stored in one of two forms, chosen by N alone (so every
// ISA, the scalar reference included, reads the same bytes):
//
//  * Panel form (N > kDotMaxN). ceil(N / kPanel) panels; panel p holds K rows of kPanel floats:
//      packed[(p K + k) kPanel + j] = W[k][p kPanel + j],  zero where p kPanel + j >= N.
//    Zero padding means kernels may compute whole panels and store only N.
//  * Dot form (N <= kDotMaxN, e.g. a final Dense(1)). One row of K weights per output, each row
//    padded with zeros to dot_row_floats(K) (a multiple of kDotKAlign = 16):
//      packed[n dot_row_floats(K) + k] = W[k][n],  zero for k >= K.
//    Kernels compute dot products with several K-split accumulators and a horizontal sum,
//    instead of a 16-wide panel of which one column is real.
inline constexpr int kPanel = 16;      // columns per panel: one zmm, two ymm
inline constexpr int kDotMaxN = 4;     // N at or below this uses the dot form
inline constexpr int kDotKAlign = 16;  // dot-form rows are padded to a multiple of this
inline constexpr int kGemm4Rows = 4;   // rows of one KernelSet::gemm4_sequential call

inline bool is_dot_form(int N) { return N <= kDotMaxN; }
inline int round_up(int v, int m) { return (v + m - 1) / m * m; }
// Floats per output row in the dot form (K rounded up to kDotKAlign).
inline int dot_row_floats(int K) { return round_up(K, kDotKAlign); }
// Total floats pack_weights writes for a (K x N) matrix.
inline size_t packed_floats(int K, int N) {
  if (is_dot_form(N)) return static_cast<size_t>(N) * static_cast<size_t>(dot_row_floats(K));
  return static_cast<size_t>(round_up(N, kPanel)) * static_cast<size_t>(K);
}
// Writes packed_floats(K, N) floats (padding included) in the layout above.
void pack_weights(const float* w, int K, int N, float* packed) noexcept;

// One attention head, for KernelSet::attend_head. The queries come transposed (Q^T, a column per
// query, in the panel form of pack_weights, scaled by log2(e) / sqrt(key_dim) beforehand: the
// softmax is taken in base 2, whose exponential needs no range-reduction constants) and the
// scores are laid out transposed too (a row per key, a column per query), so that a vector holds
// one key's scores for several queries: each score row is key_dim broadcasts of the key times
// the queries' columns, the softmax's max and sum run down the columns, lane by lane, with no
// horizontal reduction per query, and each key's value row is one broadcast per column.
struct AttendHead {
  const float* queries_t;  // key_dim x round_up(queries, kPanel), panel form:
                           // queries_t[(p key_dim + d) kPanel + l] = query (p kPanel + l)'s d-th,
                           // zero past `queries` (those columns are computed, never stored)
  const float* key_rows;   // keys x key_dim: key j at key_rows + j ldk
  size_t ldk;
  int key_dim;
  float* scores_t;         // scratch, keys x ld floats (ld >= round_up(queries, kPanel))
  size_t ld;
  int queries, keys;       // T, S
  const float* values;     // keys x value_dim: key j's values at values + j ldv
  size_t ldv;
  int value_dim;
  float* out;              // queries x value_dim: query i's result at out + i ldo
  size_t ldo;
  bool causal;             // query i sees only keys j <= i
  int span;                // > 0: and only keys with |i - j| < span (the sliding window)
};

// Keys [first, end) that some query of [i0, i0 + width) sees: the only key rows a kernel reads
// for those queries (half the products when causal).
struct KeyRange {
  int first, end;
};
inline KeyRange attend_keys(const AttendHead& a, int i0, int width) {
  const int last_query = i0 + width - 1;
  int first = a.span > 0 ? i0 - a.span + 1 : 0;
  int end = a.causal ? last_query + 1 : (a.span > 0 ? last_query + a.span : a.keys);
  first = first < 0 ? 0 : first;
  end = end > a.keys ? a.keys : end;
  return {first, end < first ? first : end};
}

using Gemm4SequentialFn = void (*)(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N,
                                   const float* init, float* y, size_t ldy, float lo, float hi) noexcept;
using GemmChainFn = void (*)(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch,
                             const float* packed_w, int N, const float* init, float* y, size_t ldy, float lo,
                             float hi) noexcept;

struct KernelSet {
  Isa isa;
  const char* name;  // "scalar", "portable", "avx2", "avx512"

  // y[n] = clamp(init[n] + sum_k x[k] * W[k][n], lo, hi) for n in [0, N).
  // W is packed (see above). init may be nullptr (treated as zeros) or alias y. Pass
  // lo = -inf, hi = +inf for no clamp; relu is lo = 0, relu6 is lo = 0, hi = 6.
  void (*gemv)(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
               float lo, float hi) noexcept;

  // gemv for `rows` inputs at once: y + r ldy = gemv(x + r ldx) for r in [0, rows), every
  // output bit-identical to that gemv call (the same accumulation order per column), so a batch
  // of rows gives exactly the per-row results. A variant may reuse each weight load across
  // several rows; the others loop over gemv.
  void (*gemm_rows)(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N,
                    const float* init, float* y, size_t ldy, float lo, float hi) noexcept;

  // 1 to kGemm4Rows rows at once in the *sequential* order, over the same packed layout (panel
  // form only: N > kDotMaxN): for r in [0, rows), y[r ldy + n] = clamp(init[n] + total, lo, hi) with
  // total = 0; total += x[r ldx + k] * W[k][n] for k ascending, every product and every sum
  // rounded to fp32 (no FMA): bit for bit the plain reference loop, which is how TFLite's
  // reference CONV_2D sums (tflite/ops/conv2d.cpp uses it for 4 output pixels at a time, and
  // for the last 1 to 3; fewer rows cost proportionally less, not a padded four).
  // It cannot be folded into gemm_rows, nor gemm_rows into it, without changing bits: gemm_rows
  // must equal this set's gemv per row, and gemv fuses each multiply-add (one rounding, not two)
  // and, for a last block of 1 to 3 panels, splits K into 2 or 4 interleaved accumulators added
  // at the end; so each reproduces a different reference (Keras plans vs TFLite's loop) and the
  // tests hold each to its own bit for bit. nullptr in sets without one (scalar, portable:
  // callers run gemv per row); the avx512 set holds the AVX2 kernel (the fallback rule of
  // isa_variants.hpp). x rows are read in [0, K), y rows written in [0, N); init may be nullptr.
  Gemm4SequentialFn gemm4_sequential;

  // Several rows at once in the *chained* order, over the same packed layout (panel form only:
  // N > kDotMaxN; K = taps * ch): for r in [0, rows), y[r ldy + n] = clamp(init[n] + total, lo,
  // hi) with one accumulator per output, total = fma(X[r][k], W[k][n], total) for k ascending
  // from 0, where row r's input k = j ch + i is x[r ldx + j tap_stride + i] (taps = 1: a plain
  // row of K; a Conv1D's dilated taps read in place: tap_stride = dilation * channels).
  // One chain per output is what lets a kernel block several rows and panels in registers (each
  // weight load feeds every row of the block: Conv1D's positions, engine/graph_plan_run.cpp), and
  // makes every ISA's result the scalar reference's (std::fma) bit for bit. It differs from gemv
  // (split k-sets), so a caller uses one or the other for a layer, never both. nullptr where
  // the ISA has no fused multiply-add (portable: callers run gemv per row). Only the taps * ch
  // inputs of each row are read, y rows are written in [0, N); init may be nullptr.
  GemmChainFn gemm_chain;

  // y[i] = act(x[i]) for i in [0, n); in-place allowed. Softmax is not handled here.
  void (*activation)(const ActivationSpec& act, const float* x, float* y, int n) noexcept;

  // y = softmax(x) over n elements (max-subtracted); in-place allowed.
  void (*softmax)(const float* x, float* y, int n) noexcept;

  // One attention head (AttendHead): for each query i in [0, queries), out row i =
  // sum_j p_i(j) values row j, with p_i the base-2 softmax of query i's scores s_ij = q_i . k_j
  // (p_i(j) = 2^(s_ij - max) / sum over the keys it sees: j < keys; j <= i when causal; |i - j| <
  // span when span > 0); zeros for a query that sees no key. Writes out rows [0, queries) x
  // [0, value_dim) and the scratch scores_t.
  void (*attend_head)(const AttendHead& a) noexcept;

  // One LSTM step after the matmuls. z holds 4u pre-activations in gate order i, f, c, o
  // (z = x W + h U + b). Updates c and h (u each) in place:
  //   i = rec(z_i); f = rec(z_f); g = act(z_c); o = rec(z_o); c = f*c + i*g; h = o * act(c)
  // z may be overwritten (used as scratch). This is the Keras LSTM cell (engine plans). TFLite's
  // float UNIDIRECTIONAL_SEQUENCE_LSTM (tflite/ops/lstm/sequence_lstm_float.cpp) does not call it: it
  // must round as TFLite's interpreter does, with Eigen's logistic/tanh approximations
  // (tflite/kernels/tflite_float_activations.hpp) where this uses vector_math's accurate ones
  // (the SIMD sets fuse sigmoid(a) * tanh(b) into one quotient, and c = f*c + i*g into FMAs),
  // c = f .* c then c += g .* i rounded separately, and with CIFG, peepholes, layer norm,
  // clipping and projection, which Keras' cell does not have.
  void (*lstm_cell)(float* z, float* c, float* h, int u, const ActivationSpec& rec,
                    const ActivationSpec& act) noexcept;

  // One GRU step (reset_after = true). zx = x Wx + bx and zh = h U + bh, each 3u in gate order
  // z, r, h. Updates h (u) in place:
  //   z = rec(zx_z + zh_z); r = rec(zx_r + zh_r); hh = act(zx_h + r * zh_h); h = z*h + (1-z)*hh
  // zx may be overwritten (used as scratch).
  void (*gru_cell)(float* zx, const float* zh, float* h, int u, const ActivationSpec& rec,
                   const ActivationSpec& act) noexcept;

  // For each of `rows` rows (x + r ldx to y + r ldy): y = (x - mean(x)) / sqrt(var(x) + eps) *
  // gamma + beta over n elements (population variance, as Keras computes it); in-place allowed.
  void (*layer_norm)(const float* x, size_t ldx, int rows, const float* gamma, const float* beta, float eps,
                     float* y, size_t ldy, int n) noexcept;

  // Elementwise binary ops over n elements; y may alias a or b.
  void (*add)(const float* a, const float* b, float* y, int n) noexcept;
  void (*sub)(const float* a, const float* b, float* y, int n) noexcept;
  void (*mul)(const float* a, const float* b, float* y, int n) noexcept;
  // y[i] = x[i] * scale[i] + shift[i] (folded BatchNorm when it cannot join a Dense/Conv1D)
  void (*affine)(const float* x, const float* scale, const float* shift, float* y, int n) noexcept;
  // y[i] = sums[i] * (s * scale[i]) + bias[i], one fused multiply-add where the set has FMA
  // (portable: a multiply and an add): int32 dot products back to float, s a dynamically
  // quantized input's scale and scale[i] row i's weight scale (tflite/ops/sequence_gru_own.cpp).
  void (*scale_sums)(const int32_t* sums, const float* scale, float s, const float* bias, float* y, int n) noexcept;
};

// The table for one ISA. Throws tickinfer::Error if the ISA was not compiled in or the CPU
// lacks it.
const KernelSet& kernel_set(Isa isa);
bool isa_supported(Isa isa);     // compiled in and the CPU has it
// resolve_isa() (over best_isa() and parse_isa()) is the only ISA resolution in the project: the
// only code that reads $TICKINFER_ISA and the only default; both backends call it once. Every
// kernel family (this table, and the tensor programs' families through kernels/isa_variants.hpp)
// takes the Isa it returns.
Isa best_isa();                  // the fastest supported ISA (avx512 > avx2 > portable; scalar
                                 // never by default), or TICKINFER_ISA if set ("scalar",
                                 // "portable", "avx2", "avx512"); an unknown or unsupported
                                 // value there is an Error
const char* isa_name(Isa isa);
Isa parse_isa(const char* name); // throws Error on unknown names
// A requested kernel-set name as options carry it: "" = best_isa(), else parse_isa(name), which
// must be supported here (Error otherwise, naming it).
Isa resolve_isa(const std::string& requested);

}  // namespace tickinfer::kernels
