#pragma once
// The last steps of the vector range searches (quantize_rows_avx2.cpp, quantize_rows_avx512.cpp):
// four lanes to one in registers. Every lane started from the search's starting value, so the
// order of the fold does not change the result (quantize_rows.hpp, min_max).
#include <immintrin.h>

namespace tickinfer::tfl::kernels {

inline float fold_min4(__m128 v) {
  v = _mm_min_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_min_ss(v, _mm_shuffle_ps(v, v, 1)));
}

inline float fold_max4(__m128 v) {
  v = _mm_max_ps(v, _mm_movehl_ps(v, v));
  return _mm_cvtss_f32(_mm_max_ss(v, _mm_shuffle_ps(v, v, 1)));
}

}  // namespace tickinfer::tfl::kernels
