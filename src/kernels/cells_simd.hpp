#pragma once
// Internal: LSTM and GRU cell updates written once against a Simd traits type, instantiated per
// ISA in cells_<isa>.cpp. The common case (sigmoid gates, tanh activation) is one fused pass;
// any other pair of activations goes through activation_array over the gate blocks first.
#include "kernels/activation_simd.hpp"

namespace tickinfer::kernels::simd {

// Runs body(j, lanes) over [0, u) in steps of one vector; `lanes` < kWidth only for the last.
template <class S, class Body>
inline void for_each_vector(int u, Body body) {
  int j = 0;
  for (; j + S::kWidth <= u; j += S::kWidth) body(j, S::kWidth);
  if (j < u) body(j, u - j);
}

template <class S>
inline typename S::V load_n(const float* p, int lanes) {
  return lanes == S::kWidth ? S::load(p) : S::load_partial(p, lanes);
}
template <class S>
inline void store_n(float* p, typename S::V v, int lanes) {
  if (lanes == S::kWidth) S::store(p, v); else S::store_partial(p, v, lanes);
}

inline bool is_sigmoid_tanh(const ActivationSpec& rec, const ActivationSpec& act) {
  return rec.kind == ActKind::Sigmoid && act.kind == ActKind::Tanh;
}

// z: 4u gate pre-activations (i, f, c, o), used as scratch. c, h: u each, updated in place.
template <class S>
inline void lstm_cell(float* z, float* c, float* h, int u, const ActivationSpec& rec,
                      const ActivationSpec& act) {
  using V = typename S::V;
  if (is_sigmoid_tanh(rec, act)) {
    for_each_vector<S>(u, [&](int j, int lanes) {
      const V i = vmath::sigmoid<S>(load_n<S>(z + j, lanes));
      const V f = vmath::sigmoid<S>(load_n<S>(z + u + j, lanes));
      const V g = vmath::tanh<S>(load_n<S>(z + 2 * u + j, lanes));
      const V o = vmath::sigmoid<S>(load_n<S>(z + 3 * u + j, lanes));
      const V cn = S::fmadd(f, load_n<S>(c + j, lanes), S::mul(i, g));
      store_n<S>(c + j, cn, lanes);
      store_n<S>(h + j, S::mul(o, vmath::tanh<S>(cn)), lanes);
    });
    return;
  }
  activation_array<S>(rec, z, z, u);
  activation_array<S>(rec, z + u, z + u, u);
  activation_array<S>(act, z + 2 * u, z + 2 * u, u);
  activation_array<S>(rec, z + 3 * u, z + 3 * u, u);
  // New c into c, and a copy into the (consumed) i block, where act(c) is computed.
  for_each_vector<S>(u, [&](int j, int lanes) {
    const V cn = S::fmadd(load_n<S>(z + u + j, lanes), load_n<S>(c + j, lanes),
                          S::mul(load_n<S>(z + j, lanes), load_n<S>(z + 2 * u + j, lanes)));
    store_n<S>(c + j, cn, lanes);
    store_n<S>(z + j, cn, lanes);
  });
  activation_array<S>(act, z, z, u);
  for_each_vector<S>(u, [&](int j, int lanes) {
    store_n<S>(h + j, S::mul(load_n<S>(z + 3 * u + j, lanes), load_n<S>(z + j, lanes)), lanes);
  });
}

// zx, zh: 3u each (gates z, r, h); zx is scratch. h: u, updated in place. reset_after = true.
template <class S>
inline void gru_cell(float* zx, const float* zh, float* h, int u, const ActivationSpec& rec,
                     const ActivationSpec& act) {
  using V = typename S::V;
  const V one = S::set1(1.0f);
  // h = z*h + (1 - z)*hh
  auto blend = [&](V z, V hold, V hh) { return S::fmadd(z, hold, S::mul(S::sub(one, z), hh)); };
  if (is_sigmoid_tanh(rec, act)) {
    for_each_vector<S>(u, [&](int j, int lanes) {
      const V z = vmath::sigmoid<S>(S::add(load_n<S>(zx + j, lanes), load_n<S>(zh + j, lanes)));
      const V r = vmath::sigmoid<S>(
          S::add(load_n<S>(zx + u + j, lanes), load_n<S>(zh + u + j, lanes)));
      const V hh = vmath::tanh<S>(
          S::fmadd(r, load_n<S>(zh + 2 * u + j, lanes), load_n<S>(zx + 2 * u + j, lanes)));
      store_n<S>(h + j, blend(z, load_n<S>(h + j, lanes), hh), lanes);
    });
    return;
  }
  for_each_vector<S>(u, [&](int j, int lanes) {  // z and r pre-activations, into zx
    store_n<S>(zx + j, S::add(load_n<S>(zx + j, lanes), load_n<S>(zh + j, lanes)), lanes);
    store_n<S>(zx + u + j, S::add(load_n<S>(zx + u + j, lanes), load_n<S>(zh + u + j, lanes)),
               lanes);
  });
  activation_array<S>(rec, zx, zx, 2 * u);
  for_each_vector<S>(u, [&](int j, int lanes) {
    store_n<S>(zx + 2 * u + j,
               S::fmadd(load_n<S>(zx + u + j, lanes), load_n<S>(zh + 2 * u + j, lanes),
                        load_n<S>(zx + 2 * u + j, lanes)),
               lanes);
  });
  activation_array<S>(act, zx + 2 * u, zx + 2 * u, u);
  for_each_vector<S>(u, [&](int j, int lanes) {
    store_n<S>(h + j,
               blend(load_n<S>(zx + j, lanes), load_n<S>(h + j, lanes),
                     load_n<S>(zx + 2 * u + j, lanes)),
               lanes);
  });
}

}  // namespace tickinfer::kernels::simd
