#pragma once
// Internal: lane indices as floats, for masks built from compares against a vector of them (the
// first n lanes, a block's queries against a key index), written once for every Simd traits type.
namespace tickinfer::kernels::simd {

inline constexpr float kLaneIndex[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// The mask of lanes [0, n), n in [0, S::kWidth].
template <class S>
inline auto first_lanes_mask(int n) {
  return S::lt(S::load(kLaneIndex), S::set1(static_cast<float>(n)));
}

}  // namespace tickinfer::kernels::simd
