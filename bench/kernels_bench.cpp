// Kernel micro-benchmarks, batch 1: every supported ISA side by side so the speedup over the
// scalar reference shows in one run. Counters: GFLOP/s for gemv (2 K N flops per call) and
// ns per call (the default time column). Unsupported ISAs are reported as skipped.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"

namespace tk = tickinfer::kernels;

namespace {

constexpr tk::Isa kIsas[] = {tk::Isa::Scalar, tk::Isa::Portable, tk::Isa::Avx2, tk::Isa::Avx512};

std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Packed weights live in 64-byte aligned memory, as the engine allocates them (AlignedBuffer):
// a std::vector's 16-byte alignment would make half of the 32-byte loads split cache lines and
// measure that instead of the kernel.
struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
std::unique_ptr<float[], FreeDeleter> aligned_floats(size_t n) {
  const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  return std::unique_ptr<float[], FreeDeleter>(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

bool skip_unsupported(benchmark::State& state, tk::Isa isa) {
  if (tk::isa_supported(isa)) return false;
  state.SkipWithError((std::string(tk::isa_name(isa)) + " not supported on this CPU").c_str());
  for (auto _ : state) {
  }
  return true;
}

void BM_gemv(benchmark::State& state, tk::Isa isa, int K, int N) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  const auto w = random_floats(static_cast<size_t>(K) * N, -1, 1, 1);
  const auto packed = aligned_floats(tk::packed_floats(K, N));
  tk::pack_weights(w.data(), K, N, packed.get());
  const auto x = random_floats(K, -1, 1, 2), bias = random_floats(N, -1, 1, 3);
  std::vector<float> y(N);
  for (auto _ : state) {
    ks.gemv(x.data(), K, packed.get(), N, bias.data(), y.data(), 0.0f, 1e30f);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * K * N, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

void BM_activation(benchmark::State& state, tk::Isa isa, tickinfer::ActKind kind, int n) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  tickinfer::ActivationSpec act;
  act.kind = kind;
  const auto x = random_floats(n, -6, 6, 4);
  std::vector<float> y(n);
  for (auto _ : state) {
    ks.activation(act, x.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["elems/s"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_lstm_cell(benchmark::State& state, tk::Isa isa, int u) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  tickinfer::ActivationSpec rec, act;
  rec.kind = tickinfer::ActKind::Sigmoid;
  act.kind = tickinfer::ActKind::Tanh;
  const auto z0 = random_floats(4 * u, -4, 4, 5);
  std::vector<float> z(4 * u), c = random_floats(u, -1, 1, 6), h(u);
  for (auto _ : state) {
    std::copy(z0.begin(), z0.end(), z.begin());  // the cell uses z as scratch
    ks.lstm_cell(z.data(), c.data(), h.data(), u, rec, act);
    benchmark::DoNotOptimize(h.data());
    benchmark::ClobberMemory();
  }
}

void BM_gru_cell(benchmark::State& state, tk::Isa isa, int u) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  tickinfer::ActivationSpec rec, act;
  rec.kind = tickinfer::ActKind::Sigmoid;
  act.kind = tickinfer::ActKind::Tanh;
  const auto zx0 = random_floats(3 * u, -4, 4, 7), zh = random_floats(3 * u, -4, 4, 8);
  std::vector<float> zx(3 * u), h = random_floats(u, -1, 1, 9);
  for (auto _ : state) {
    std::copy(zx0.begin(), zx0.end(), zx.begin());
    ks.gru_cell(zx.data(), zh.data(), h.data(), u, rec, act);
    benchmark::DoNotOptimize(h.data());
    benchmark::ClobberMemory();
  }
}

// One attention head, T queries against T keys (KernelSet::attend_head): the scores, softmax and
// weighted sum of a MultiHeadAttention head; GFLOP/s counts the two products (4 T T d flops).
void BM_attend_head(benchmark::State& state, tk::Isa isa, int T, int d, bool causal) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  const int columns = tk::round_up(T, tk::kPanel);
  const auto queries_t = aligned_floats(static_cast<size_t>(d) * columns);
  const auto q = random_floats(static_cast<size_t>(d) * columns, -1, 1, 10);
  std::copy(q.begin(), q.end(), queries_t.get());
  const auto keys = random_floats(static_cast<size_t>(T) * d, -1, 1, 11);
  const auto values = random_floats(static_cast<size_t>(T) * d, -1, 1, 12);
  const auto scores = aligned_floats(static_cast<size_t>(T) * columns);
  std::vector<float> out(static_cast<size_t>(T) * d);
  const tk::AttendHead head{queries_t.get(), keys.data(), static_cast<size_t>(d), d, scores.get(),
                            static_cast<size_t>(columns), T, T, values.data(), static_cast<size_t>(d), d,
                            out.data(), static_cast<size_t>(d), causal, 0};
  for (auto _ : state) {
    ks.attend_head(head);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * T * T * d, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// Layer norm over `rows` rows of n features (KernelSet::layer_norm), as a Transformer block runs it.
void BM_layer_norm(benchmark::State& state, tk::Isa isa, int rows, int n) {
  if (skip_unsupported(state, isa)) return;
  const tk::KernelSet& ks = tk::kernel_set(isa);
  const auto x = random_floats(static_cast<size_t>(rows) * n, -3, 3, 13);
  const auto gamma = random_floats(n, 0.5f, 1.5f, 14), beta = random_floats(n, -1, 1, 15);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    ks.layer_norm(x.data(), n, rows, gamma.data(), beta.data(), 1e-6f, y.data(), n, n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
}

// Registered at start-up from one list of shapes and one list of ISAs.
const bool kRegistered = [] {
  const struct { int K, N; } shapes[] = {{10, 128}, {128, 64}, {64, 32},  {32, 1},
                                         {256, 128}, {74, 256}, {64, 256}, {256, 512}};
  for (const auto& s : shapes)
    for (tk::Isa isa : kIsas)
      benchmark::RegisterBenchmark(
          ("gemv/" + std::to_string(s.K) + "x" + std::to_string(s.N) + "/" + tk::isa_name(isa)).c_str(),
          BM_gemv, isa, s.K, s.N);
  const struct { const char* name; tickinfer::ActKind kind; } acts[] = {
      {"sigmoid", tickinfer::ActKind::Sigmoid}, {"tanh", tickinfer::ActKind::Tanh},
      {"gelu", tickinfer::ActKind::Gelu}};
  for (const auto& a : acts)
    for (tk::Isa isa : kIsas)
      benchmark::RegisterBenchmark((std::string("activation/") + a.name + "/256/" + tk::isa_name(isa)).c_str(),
                                   BM_activation, isa, a.kind, 256);
  for (int u : {64, 128})
    for (tk::Isa isa : kIsas)
      benchmark::RegisterBenchmark(("lstm_cell/u" + std::to_string(u) + "/" + tk::isa_name(isa)).c_str(),
                                   BM_lstm_cell, isa, u);
  for (tk::Isa isa : kIsas)
    benchmark::RegisterBenchmark((std::string("gru_cell/u64/") + tk::isa_name(isa)).c_str(), BM_gru_cell, isa, 64);
  const struct { int T, d; bool causal; } heads[] = {{64, 8, false}, {100, 16, false}, {64, 8, true}, {100, 5, true}};
  for (const auto& h : heads)
    for (tk::Isa isa : kIsas)
      benchmark::RegisterBenchmark(("attend_head/T" + std::to_string(h.T) + "d" + std::to_string(h.d) +
                                    (h.causal ? "causal/" : "/") + tk::isa_name(isa))
                                       .c_str(),
                                   BM_attend_head, isa, h.T, h.d, h.causal);
  const struct { int rows, n; } norms[] = {{64, 16}, {100, 15}, {100, 40}};
  for (const auto& l : norms)
    for (tk::Isa isa : kIsas)
      benchmark::RegisterBenchmark(("layer_norm/" + std::to_string(l.rows) + "x" + std::to_string(l.n) + "/" +
                                    tk::isa_name(isa))
                                       .c_str(),
                                   BM_layer_norm, isa, l.rows, l.n);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
