// The 65536-entry tables of the integer LSTM's fixed-point logistic and tanh. A table lookup
// returns exactly what the reference function (sequence_lstm_int16_math.hpp) computes, for a
// fraction of its cost; each table is built once per process on first use.
#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

#include <cstddef>

namespace tickinfer::tfl::ops::lstm::fx16 {

namespace {

template <int16_t (*F)(int16_t)>
Table build() {
  Table t{};
  for (int32_t raw = -32768; raw <= 32767; ++raw) t[static_cast<size_t>(raw + 32768)] = F(static_cast<int16_t>(raw));
  return t;
}

template <int IB>
const Table& tanh_table_of() {
  static const Table table = build<tanh<IB>>();
  return table;
}

}  // namespace

const Table& logistic_q3_table() {
  static const Table table = build<logistic<3>>();
  return table;
}

const Table& tanh_table(int integer_bits) {
  switch (integer_bits) {
    case 0: return tanh_table_of<0>();
    case 1: return tanh_table_of<1>();
    case 2: return tanh_table_of<2>();
    case 3: return tanh_table_of<3>();
    case 4: return tanh_table_of<4>();
    case 5: return tanh_table_of<5>();
    default: return tanh_table_of<6>();
  }
}

Activation logistic_q3_activation() { return {-1, &logistic_q3_table()}; }

Activation tanh_activation(int integer_bits) {
  const int bits = integer_bits >= 0 && integer_bits <= 6 ? integer_bits : 6;  // as tanh_table's choice
  return {bits, &tanh_table(bits)};
}

}  // namespace tickinfer::tfl::ops::lstm::fx16
