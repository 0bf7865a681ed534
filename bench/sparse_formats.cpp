// Which sparse format pays at batch 1 on this CPU: one pruned fp32 weight matrix multiplied by
// one input vector, timed in the same run in every format, against the dense kernel on the same
// weights. The formats docs/pruning.md weighs:
//   dense        the engine's AVX2 panel gemv (kernels/kernel_set.hpp), zeros multiplied
//   1x16         the engine's block-sparse panel rows (kernels/sparse_panels.hpp), on weights
//                pruned in 1x16 blocks, and on the same unstructured weights CSR gets
//   csr          per output, (uint16 input index, value) pairs: 8 x values by one vgatherdps,
//                one FMA, a horizontal sum per output (bench-local AVX2 kernel); and the same
//                pairs with one scalar load and FMA each (no gather)
//   2:4          at most 2 nonzeros in every 4 consecutive inputs of an output (M:N along the
//                reduction): per 8 outputs and 4 inputs, the 4 x values broadcast, two vpermps
//                with per-lane 2-bit offsets, two FMAs; half the value bytes (bench-local)
// Each format's output is checked against the dense kernel's (relative 1e-5) before timing.
// Timing: 9 interleaved rounds of ~5 ms per format, median ns per call; run it pinned
// (`taskset -c 1 build/bench/sparse_formats`, `make sparse-formats`). Prints a markdown table.
// x86-64 with AVX2 + FMA only (the bench-local kernels are AVX2); elsewhere it says so and exits.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "kernels/sparse_panels.hpp"

namespace tk = tickinfer::kernels;

namespace {

// Row-major W [K x N] (Keras' kernel layout: inputs x outputs).
struct Matrix {
  int K = 0, N = 0;
  std::vector<float> w;
  float& at(int k, int n) { return w[static_cast<size_t>(k) * N + n]; }
  float at(int k, int n) const { return w[static_cast<size_t>(k) * N + n]; }
};

Matrix random_matrix(int K, int N, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 0.1f);
  Matrix m{K, N, std::vector<float>(static_cast<size_t>(K) * N)};
  for (float& v : m.w) v = d(rng);
  return m;
}

// Zeroes the smallest |w| until `sparsity` of the entries (unit = one weight) are zero.
void prune_unstructured(Matrix& m, double sparsity) {
  std::vector<float> mags(m.w.size());
  std::transform(m.w.begin(), m.w.end(), mags.begin(), [](float v) { return std::fabs(v); });
  const size_t cut = static_cast<size_t>(sparsity * static_cast<double>(mags.size()));
  if (cut == 0) return;
  std::nth_element(mags.begin(), mags.begin() + static_cast<long>(cut - 1), mags.end());
  const float threshold = mags[cut - 1];
  for (float& v : m.w)
    if (std::fabs(v) <= threshold) v = 0.0f;
}

// Zeroes whole 1x16 blocks (one input, 16 consecutive outputs) with the smallest mean |w|.
void prune_blocks(Matrix& m, double sparsity) {
  const int panels = (m.N + 15) / 16;
  std::vector<std::pair<float, int>> blocks;
  for (int k = 0; k < m.K; ++k) {
    for (int p = 0; p < panels; ++p) {
      float s = 0;
      for (int n = p * 16; n < std::min(m.N, p * 16 + 16); ++n) s += std::fabs(m.at(k, n));
      blocks.emplace_back(s, k * panels + p);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  const size_t cut = static_cast<size_t>(sparsity * static_cast<double>(blocks.size()));
  for (size_t i = 0; i < cut; ++i) {
    const int k = blocks[i].second / panels, p = blocks[i].second % panels;
    for (int n = p * 16; n < std::min(m.N, p * 16 + 16); ++n) m.at(k, n) = 0.0f;
  }
}

// Keeps the 2 largest |w| of every 4 consecutive inputs of each output (K a multiple of 4).
void prune_2_of_4(Matrix& m) {
  for (int n = 0; n < m.N; ++n) {
    for (int k0 = 0; k0 < m.K; k0 += 4) {
      int order[4] = {0, 1, 2, 3};
      std::sort(order, order + 4, [&](int a, int b) { return std::fabs(m.at(k0 + a, n)) > std::fabs(m.at(k0 + b, n)); });
      m.at(k0 + order[2], n) = 0.0f;
      m.at(k0 + order[3], n) = 0.0f;
    }
  }
}

// --- CSR by output: idx/val of output n in [start[n], start[n + 1]), padded to 8 with (0, 0) ---
struct Csr {
  std::vector<uint32_t> start;
  std::vector<uint16_t> idx;
  std::vector<float> val;
};
Csr pack_csr(const Matrix& m) {
  Csr c;
  c.start.push_back(0);
  for (int n = 0; n < m.N; ++n) {
    for (int k = 0; k < m.K; ++k) {
      if (m.at(k, n) != 0.0f) {
        c.idx.push_back(static_cast<uint16_t>(k));
        c.val.push_back(m.at(k, n));
      }
    }
    while (c.idx.size() % 8) {
      c.idx.push_back(0);
      c.val.push_back(0.0f);
    }
    c.start.push_back(static_cast<uint32_t>(c.idx.size()));
  }
  return c;
}

__attribute__((target("avx2,fma"))) void csr_gemv(const Csr& c, const float* x, int N, float* y) {
  for (int n = 0; n < N; ++n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    uint32_t i = c.start[n];
    const uint32_t end = c.start[n + 1];
    for (; i + 16 <= end; i += 16) {
      const __m256i k0 = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&c.idx[i])));
      const __m256i k1 = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&c.idx[i + 8])));
      a0 = _mm256_fmadd_ps(_mm256_i32gather_ps(x, k0, 4), _mm256_loadu_ps(&c.val[i]), a0);
      a1 = _mm256_fmadd_ps(_mm256_i32gather_ps(x, k1, 4), _mm256_loadu_ps(&c.val[i + 8]), a1);
    }
    if (i < end) {
      const __m256i k0 = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&c.idx[i])));
      a0 = _mm256_fmadd_ps(_mm256_i32gather_ps(x, k0, 4), _mm256_loadu_ps(&c.val[i]), a0);
    }
    const __m256 s = _mm256_add_ps(a0, a1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    y[n] = _mm_cvtss_f32(h);
  }
}

// The same without the gather: one scalar load of x per nonzero, four accumulators (so three
// loads and one FMA per nonzero, no vector unit).
__attribute__((target("avx2,fma"))) void csr_gemv_scalar(const Csr& c, const float* x, int N, float* y) {
  for (int n = 0; n < N; ++n) {
    float a[4] = {0, 0, 0, 0};
    for (uint32_t i = c.start[n]; i < c.start[n + 1]; i += 4) {  // padded to 8
      for (int j = 0; j < 4; ++j) a[j] = std::fma(c.val[i + j], x[c.idx[i + j]], a[j]);
    }
    y[n] = (a[0] + a[1]) + (a[2] + a[3]);
  }
}

// --- 2:4: per panel of 8 outputs and group of 4 inputs, two (offsets, values) slots ----------
struct TwoOfFour {
  int K = 0, N = 0, panels = 0;
  std::vector<uint8_t> offset;  // [panel][group][slot][8 lanes]: the input's offset in the group
  std::vector<float> val;       // the same shape
};
TwoOfFour pack_2_of_4(const Matrix& m) {
  TwoOfFour t{m.K, m.N, (m.N + 7) / 8, {}, {}};
  const int groups = m.K / 4;
  t.offset.assign(static_cast<size_t>(t.panels) * groups * 16, 0);
  t.val.assign(t.offset.size(), 0.0f);
  for (int p = 0; p < t.panels; ++p) {
    for (int g = 0; g < groups; ++g) {
      for (int lane = 0; lane < 8; ++lane) {
        const int n = p * 8 + lane;
        int slot = 0;
        for (int o = 0; o < 4 && n < m.N; ++o) {
          if (m.at(4 * g + o, n) == 0.0f || slot == 2) continue;
          const size_t at = ((static_cast<size_t>(p) * groups + g) * 2 + slot) * 8 + lane;
          t.offset[at] = static_cast<uint8_t>(o);
          t.val[at] = m.at(4 * g + o, n);
          ++slot;
        }
      }
    }
  }
  return t;
}

__attribute__((target("avx2,fma"))) void two_of_four_gemv(const TwoOfFour& t, const float* x, float* y) {
  const int groups = t.K / 4;
  const uint8_t* off = t.offset.data();
  const float* v = t.val.data();
  for (int p = 0; p < t.panels; ++p) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    for (int g = 0; g < groups; ++g, off += 16, v += 16) {
      const __m256 xg = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(x + 4 * g));
      const __m256i o0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(off)));
      const __m256i o1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(off + 8)));
      a0 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(xg, o0), _mm256_loadu_ps(v), a0);
      a1 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(xg, o1), _mm256_loadu_ps(v + 8), a1);
    }
    alignas(32) float out[8];
    _mm256_store_ps(out, _mm256_add_ps(a0, a1));
    for (int lane = 0; lane < 8 && p * 8 + lane < t.N; ++lane) y[p * 8 + lane] = out[lane];
  }
}

// --- timing -----------------------------------------------------------------------------------
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median ns per call of each function over interleaved rounds.
std::vector<double> time_interleaved(const std::vector<std::function<void()>>& fns) {
  using clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> per(fns.size());
  std::vector<int> reps(fns.size());
  for (size_t i = 0; i < fns.size(); ++i) {
    for (int w = 0; w < 50; ++w) fns[i]();
    const auto t0 = clock::now();
    for (int w = 0; w < 50; ++w) fns[i]();
    const double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / 50;
    reps[i] = std::clamp(static_cast<int>(5e6 / std::max(ns, 1.0)), 10, 200000);
  }
  for (int r = 0; r < 9; ++r) {
    for (size_t i = 0; i < fns.size(); ++i) {
      const auto t0 = clock::now();
      for (int k = 0; k < reps[i]; ++k) fns[i]();
      per[i].push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reps[i]);
    }
  }
  std::vector<double> out;
  for (auto& v : per) out.push_back(median(v));
  return out;
}

bool close_to(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-5f * (1.0f + std::fabs(want[i]))) return false;
  }
  return true;
}

struct Row {
  std::string shape, pattern, format;
  double ns = 0, dense_ns = 0;
  size_t bytes = 0;
};

// Every format that can hold `m`, timed with the dense kernel on the same weights.
void study(const Matrix& m, const std::string& pattern, std::vector<Row>& rows) {
  const tk::KernelSet& ks = tk::kernel_set(tk::Isa::Avx2);
  std::vector<float> packed(tk::packed_floats(m.K, m.N));
  tk::pack_weights(m.w.data(), m.K, m.N, packed.data());
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(m.K) + 8);
  for (float& v : x) v = d(rng);
  std::vector<float> want(static_cast<size_t>(m.N)), got(want.size());
  ks.gemv(x.data(), m.K, packed.data(), m.N, nullptr, want.data(), -INFINITY, INFINITY);

  std::vector<std::string> names{"dense"};
  std::vector<size_t> bytes{packed.size() * 4};
  std::vector<std::function<void()>> fns{[&] { ks.gemv(x.data(), m.K, packed.data(), m.N, nullptr, got.data(), -INFINITY, INFINITY); }};
  const tk::SparsePanels panels = tk::pack_sparse_panels(m.w.data(), m.K, m.N);
  const tk::SparsePanelsView pv = panels.view();
  const tk::SparseGemvFn sparse = tk::sparse_gemv_for(tk::Isa::Avx2);
  names.push_back("1x16 panel rows");
  bytes.push_back(panels.bytes());
  fns.push_back([&] { sparse(x.data(), pv, nullptr, got.data(), -INFINITY, INFINITY); });
  const Csr csr = pack_csr(m);
  names.push_back("csr (uint16 index)");
  bytes.push_back(csr.start.size() * 4 + csr.idx.size() * 2 + csr.val.size() * 4);
  fns.push_back([&] { csr_gemv(csr, x.data(), m.N, got.data()); });
  names.push_back("csr, scalar loads");
  bytes.push_back(bytes.back());
  fns.push_back([&] { csr_gemv_scalar(csr, x.data(), m.N, got.data()); });
  TwoOfFour tf;
  if (pattern == "2:4") {
    tf = pack_2_of_4(m);
    names.push_back("2:4");
    bytes.push_back(tf.offset.size() + tf.val.size() * 4);
    fns.push_back([&] { two_of_four_gemv(tf, x.data(), got.data()); });
  }
  for (size_t i = 0; i < fns.size(); ++i) {
    std::fill(got.begin(), got.end(), NAN);
    fns[i]();
    if (!close_to(got, want)) {
      std::fprintf(stderr, "sparse_formats: %s on %s disagrees with the dense kernel\n", names[i].c_str(), pattern.c_str());
      std::exit(1);
    }
  }
  const std::vector<double> ns = time_interleaved(fns);
  const std::string shape = std::to_string(m.K) + "x" + std::to_string(m.N);
  for (size_t i = 0; i < fns.size(); ++i) rows.push_back({shape, pattern, names[i], ns[i], ns[0], bytes[i]});
}

}  // namespace

int main() {
  if (!tk::isa_supported(tk::Isa::Avx2)) {
    std::printf("sparse_formats: this CPU lacks AVX2 + FMA, which the bench-local kernels need; nothing measured\n");
    return 0;
  }
  std::vector<Row> rows;
  // mlp_large's widest layer, and one lstm_tiny layer's stacked [x, h] -> 4 gates matrix.
  for (const auto& [K, N] : {std::pair{256, 128}, std::pair{256, 512}}) {
    std::mt19937 rng(static_cast<unsigned>(K * 1000 + N));
    const Matrix base = random_matrix(K, N, rng);
    for (double s : {0.5, 0.8, 0.9}) {
      Matrix u = base, b = base;
      prune_unstructured(u, s);
      prune_blocks(b, s);
      const std::string pct = std::to_string(static_cast<int>(s * 100 + 0.5)) + "%";
      study(u, "unstructured " + pct, rows);
      study(b, "block 1x16 " + pct, rows);
    }
    Matrix t = base;
    prune_2_of_4(t);
    study(t, "2:4", rows);
  }
  std::printf("| matrix | pattern | format | ns per call | vs dense | bytes |\n|---|---|---|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %.0f | %.2fx | %zu |\n", r.shape.c_str(), r.pattern.c_str(), r.format.c_str(), r.ns,
                r.dense_ns / r.ns, r.bytes);
  }
  return 0;
}
