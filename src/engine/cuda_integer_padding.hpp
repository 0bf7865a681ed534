#pragma once
// The integer program's one fusion: a PAD whose only reader is a convolution becomes that
// convolution's own padding (engine/cuda_integer_padding.cpp).
#include <vector>

#include "tflite/integer_form.hpp"
#include "tflite/program.hpp"

namespace tickinfer::engine {

// For each form, whether it was folded away: a zero-point PAD (a gather that places its one
// input as a block inside a larger NHWC tensor and fills the rest with the input's zero point)
// whose output (through any identity copies, `identity`) only a CONV_2D or DEPTHWISE_CONV_2D
// reads, and which is not one of `outputs`. That convolution then reads the PAD's input, its
// window's padding grown by the PAD's top and left: the taps the PAD filled are skipped, which
// adds the same zero (fill + input offset = 0) to every sum. Rewrites those convolutions' forms.
std::vector<bool> fold_padding(const tfl::Program& p, std::vector<tfl::IntegerForm>& forms,
                               const std::vector<bool>& identity, const std::vector<int>& outputs);

}  // namespace tickinfer::engine
