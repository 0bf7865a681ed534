// The host's executor for step bodies (device_step_common.cuh's contract): items one at a time,
// forwards or backwards, so a body whose items depend on each other answers differently in the
// two orders and the tests see it. Shared by the graph form's and the integer program's host runners.
#pragma once

#include <cstdint>

namespace tickinfer::cuda {

struct SerialExecutor {
  bool backwards = false;
  template <class F>
  void items(int64_t n, F&& f) const {
    if (backwards) {
      for (int64_t i = n - 1; i >= 0; --i) f(i);
    } else {
      for (int64_t i = 0; i < n; ++i) f(i);
    }
  }
  void sync() const {}
};

}  // namespace tickinfer::cuda
