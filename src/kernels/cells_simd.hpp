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

// sigmoid(a) * tanh(b) with one division (see lstm_cell). 1 + e^-a may overflow to inf: the
// quotient is then 0, as the product would be to float precision; NaN in either gives NaN.
template <class S>
inline typename S::V sigmoid_times_tanh(typename S::V a, typename S::V b) {
  using V = typename S::V;
  const V one = S::set1(1.0f);
  const V t = vmath::expm1_nonpositive<S>(S::mul(S::abs(b), S::set1(-2.0f)));  // (-1, 0]
  const V den = S::mul(S::add(one, vmath::exp<S>(S::neg(a))), S::add(t, S::set1(2.0f)));
  return S::or_bits(S::div(S::abs(t), den), S::sign_bits(b));
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
    // Two passes, not one: a fused pass chains gate activation -> c -> tanh(c) -> h, about 150
    // cycles of latency per vector, and the out-of-order window holds only two such vectors, so
    // it ran latency-bound (25 % of an LSTM(64) window). Split, each pass is a set of
    // independent short chains the core overlaps. And the divisions, the slowest instruction
    // here, go from five per unit to three: sigmoid(a) * tanh(b) is one quotient,
    // sign(b) |t| / ((1 + e^-a)(t + 2)) with t = expm1(-2|b|), rounded once instead of three
    // times (the same for o * tanh(c)).
    for_each_vector<S>(u, [&](int j, int lanes) {
      store_n<S>(z + j, sigmoid_times_tanh<S>(load_n<S>(z + j, lanes), load_n<S>(z + 2 * u + j, lanes)), lanes);
      store_n<S>(z + u + j, vmath::sigmoid<S>(load_n<S>(z + u + j, lanes)), lanes);
    });
    for_each_vector<S>(u, [&](int j, int lanes) {
      const V cn = S::fmadd(load_n<S>(z + u + j, lanes), load_n<S>(c + j, lanes), load_n<S>(z + j, lanes));
      store_n<S>(c + j, cn, lanes);
      store_n<S>(h + j, sigmoid_times_tanh<S>(load_n<S>(z + 3 * u + j, lanes), cn), lanes);
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
    // Two passes for the reason lstm_cell has them (a fused r -> hh -> h chain per vector ran
    // latency-bound); the same operations in the same order, so the same results.
    for_each_vector<S>(u, [&](int j, int lanes) {
      store_n<S>(zx + j, vmath::sigmoid<S>(S::add(load_n<S>(zx + j, lanes), load_n<S>(zh + j, lanes))), lanes);
      store_n<S>(zx + u + j, vmath::sigmoid<S>(S::add(load_n<S>(zx + u + j, lanes), load_n<S>(zh + u + j, lanes))),
                 lanes);
    });
    for_each_vector<S>(u, [&](int j, int lanes) {
      const V hh = vmath::tanh<S>(
          S::fmadd(load_n<S>(zx + u + j, lanes), load_n<S>(zh + 2 * u + j, lanes), load_n<S>(zx + 2 * u + j, lanes)));
      store_n<S>(h + j, blend(load_n<S>(zx + j, lanes), load_n<S>(h + j, lanes), hh), lanes);
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
