#pragma once
// Errors raised by model loading, compiling and I/O. The run path never throws.
#include <stdexcept>
#include <string>

namespace tickinfer {

// Every load/compile/parse failure is reported as tickinfer::Error with a message that names
// the file, layer and option involved (e.g. "layer 'lstm_1' (LSTM): stateful=true is not
// supported"). Nothing in the library calls abort() on bad input.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace tickinfer
