#pragma once
// The LSTM cell state's calibrated range. The cell state is internal to UNIDIRECTIONAL_SEQUENCE_LSTM
// (its variable tensor holds only the last step), so the observer replays each float LSTM op on
// the input the interpreter computed for it, in plain float math, and records max |c| over every
// step. State carries over from sample to sample when `carry_state`, as in the TFLite
// converter's calibration run (which never resets variable tensors).
#include <vector>

#include "quantizer/tflite_names.hpp"

namespace tickinfer::quantizer {

class LstmCellObserver {
 public:
  LstmCellObserver(const Program& p, bool carry_state);
  // After an invoke: `tensor_data(t)` gives tensor t's float values.
  template <class TensorData>
  void observe(TensorData&& tensor_data) {
    for (Cell& c : cells_) step(c, static_cast<const float*>(tensor_data(c.input)));
  }
  // max |c| per program tensor (the op's cell_state variable); 0 elsewhere and for LSTMs that
  // are not plain (peepholes, projection, CIFG, layer norm, non-tanh activation).
  std::vector<float> max_abs_cell() const;

 private:
  struct Cell {
    int input = -1, cell_tensor = -1;
    int steps = 0, depth = 0, units = 0;
    std::vector<float> wx[4], wh[4], bias[4];  // gate order i, f, c, o; [units, depth] / [units, units]
    std::vector<float> h, c;
    float max_abs = 0.0f;
  };
  void step(Cell& cell, const float* x);
  bool carry_;
  std::vector<Cell> cells_;
  size_t tensor_count_;
};

// A plain Keras-style LSTM: all four gates, no peepholes, projection or layer norm, tanh, batch
// major, float weights. The quantizer's full-int8 LSTM and the cell observer handle only these.
bool lstm_is_plain(const Program& p, const Op& op);

// The int16 cell-state scale TFLite's int8 LSTM uses for a cell range of max |c|: the power of two
// 2^(ceil(log2(max)) - 15), kept within the kernel's 2^-15 .. 2^-9.
float lstm_cell_scale(float max_abs_cell);

}  // namespace tickinfer::quantizer
