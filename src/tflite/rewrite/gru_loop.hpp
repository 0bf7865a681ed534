#pragma once
// Recognising the converter's Keras GRU loop (Keras 3 and tf_keras write it slightly apart; see
// gru_loop.cpp): a WHILE over [step, t, buffer, h, x], float or with dynamic-range int8 weights,
// (x time-major [T, 1, F]) whose body is exactly one Keras GRU cell step. TFLite has no fused
// GRU op: the interpreter runs a match as tickinfer's SEQUENCE_GRU (lower_gru_loops,
// gru_loop_lowering.cpp), and the graph lift (formats/tflite/tflite_lift_recurrent.cpp) turns a
// float match into the engine's GRU node.
#include <optional>

#include "tflite/program.hpp"

namespace tickinfer::tfl {

// Tensor indices are of the program; weights are FULLY_CONNECTED filters ([out, in] rows).
// Gates are numbered as Keras orders them: 0 = z (update), 1 = r (reset), 2 = h (candidate).
struct GruLoop {
  int T = 0, F = 0, H = 0;
  bool reset_after = true;
  bool sequences = false;  // the buffer output holds every h_t ([T, 1, H]), else the last
  int w = -1;              // [3H, F]: x -> gates
  int b_in = -1;           // [3H] or -1 (no bias)
  // reset_after: u [3H, H] (h -> all three gates), b_rec [3H] or -1.
  // reset_before: u [2H, H] (h -> z, r) and u_h [H, H] ((r * h) -> candidate), no recurrent bias.
  int u = -1, u_h = -1, b_rec = -1;
  // W, U (and U_h) int8, the converter's dynamic-range file: every FULLY_CONNECTED of the body is
  // hybrid, all quantizing their input rows alike (asymmetric or not).
  bool hybrid = false, asymmetric = false;
  int w_block[3] = {-1, -1, -1};  // gate g's rows in w / b_in: [w_block[g] * H, +H)
  int u_block[3] = {-1, -1, -1};  // gate g's rows in u / b_rec (reset_before: z and r only)
};

// The GRU a main-graph WHILE op is, or nullopt (any difference from the pattern, including
// other activations, a non-zero start or state carried in resource variables).
std::optional<GruLoop> match_gru_loop(const Program& p, const Op& w);

}  // namespace tickinfer::tfl
