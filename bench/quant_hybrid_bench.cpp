// The dynamic-range (hybrid) path's per-row work, per kernel set: quantizing a float row to int8
// (symmetric and asymmetric, the range search, the rounding, the zero point) and one hybrid
// FULLY_CONNECTED row as the interpreter runs it (bias, quantize, int8 gemv, float epilogue).
// Shapes: mlp_small's layers (10 -> 128, 128 -> 64, 64 -> 32). docs/performance.md ("The CPU
// side of the GPU issue") quotes it.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/quantize_rows.hpp"

namespace {

namespace tk = tickinfer::tfl::kernels;
using tickinfer::kernels::Isa;

std::vector<float> normal_row(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  return x;
}

void BM_QuantizeRow(benchmark::State& state, Isa isa, bool asymmetric) {
  if (!tickinfer::kernels::isa_supported(isa)) return state.SkipWithError("kernel set not supported by this CPU");
  const int n = static_cast<int>(state.range(0));
  const tk::QuantizeRowKernels& k = tk::quantize_row_kernels(isa);
  const std::vector<float> x = normal_row(n, 1);
  std::vector<int8_t> q(static_cast<size_t>(n));
  float scale = 0.0f;
  int32_t zp = 0;
  for (auto _ : state) {
    if (asymmetric) {
      tk::quantize_row_asymmetric(k, x.data(), n, q.data(), &scale, &zp);
    } else {
      scale = tk::quantize_row_symmetric(k, x.data(), n, q.data());
    }
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(scale);
    benchmark::ClobberMemory();
  }
}

// One asymmetric hybrid FC row: y = bias, then quantize x, gemv, epilogue (fully_connected_hybrid.cpp).
void BM_HybridFcRow(benchmark::State& state, Isa isa) {
  if (!tickinfer::kernels::isa_supported(isa)) return state.SkipWithError("kernel set not supported by this CPU");
  const int depth = static_cast<int>(state.range(0)), units = static_cast<int>(state.range(1));
  std::mt19937 rng(2);
  std::vector<int8_t> w(static_cast<size_t>(units) * static_cast<size_t>(depth));
  for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  const tk::S8Kernels& k = tk::s8_kernels(isa, false);
  const tk::QuantizeRowKernels& rq = tk::quantize_row_kernels(isa);
  const tk::HybridEpilogueFn epilogue = tk::hybrid_epilogue(isa);
  const int stride = k.stride(depth);
  tickinfer::kernels::AlignedVector<int8_t> packed(tk::s8_packed_bytes(units, depth));
  k.pack(w.data(), units, depth, packed.data());
  tickinfer::kernels::AlignedVector<int8_t> xq(static_cast<size_t>(stride), 0);
  std::vector<int32_t> acc(static_cast<size_t>(tk::s8_padded_rows(units))), sums(static_cast<size_t>(units));
  tk::row_sums_s8(w.data(), units, depth, sums.data());
  const std::vector<float> x = normal_row(depth, 3), bias = normal_row(units, 4);
  const std::vector<float> wscale(static_cast<size_t>(units), 0.01f);
  std::vector<float> y(static_cast<size_t>(units));
  for (auto _ : state) {
    y = bias;
    float s = 0.0f;
    int32_t zp = 0;
    tk::quantize_row_asymmetric(rq, x.data(), depth, xq.data(), &s, &zp);
    k.gemv(packed.data(), units, stride, xq.data(), acc.data());
    const tk::HybridRow r{acc.data(), sums.data(), static_cast<float>(zp), s, wscale.data(), 0.0f, 3.4e38f};
    epilogue(r, units, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

void shapes(benchmark::internal::Benchmark* b) { b->Arg(10)->Arg(64)->Arg(128); }
void layers(benchmark::internal::Benchmark* b) { b->Args({10, 128})->Args({128, 64})->Args({64, 32}); }

BENCHMARK_CAPTURE(BM_QuantizeRow, asymmetric_scalar, Isa::Scalar, true)->Apply(shapes);
BENCHMARK_CAPTURE(BM_QuantizeRow, asymmetric_avx2, Isa::Avx2, true)->Apply(shapes);
BENCHMARK_CAPTURE(BM_QuantizeRow, asymmetric_avx512, Isa::Avx512, true)->Apply(shapes);
BENCHMARK_CAPTURE(BM_QuantizeRow, symmetric_scalar, Isa::Scalar, false)->Apply(shapes);
BENCHMARK_CAPTURE(BM_QuantizeRow, symmetric_avx2, Isa::Avx2, false)->Apply(shapes);
BENCHMARK_CAPTURE(BM_QuantizeRow, symmetric_avx512, Isa::Avx512, false)->Apply(shapes);
BENCHMARK_CAPTURE(BM_HybridFcRow, scalar, Isa::Scalar)->Apply(layers);
BENCHMARK_CAPTURE(BM_HybridFcRow, avx2, Isa::Avx2)->Apply(layers);
BENCHMARK_CAPTURE(BM_HybridFcRow, avx512, Isa::Avx512)->Apply(layers);

}  // namespace

BENCHMARK_MAIN();
