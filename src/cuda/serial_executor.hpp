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
  // f(row_tile, column_tile) for every block of a tiled kernel's grid, one after another, in this
  // executor's order (a tile that read another's output would answer differently backwards).
  template <class F>
  void tiles(int64_t row_tiles, int column_tiles, F&& f) const {
    items(row_tiles * column_tiles, [&](int64_t t) { f(t / column_tiles, int(t % column_tiles)); });
  }
};

// A batch as the GPU runs it (its rows the grid's second dimension): each row's input copied into
// its stretch of the batch arena (`stride` elements apart), each step over every row before the
// next step (rows forwards or backwards with the items), each row's output copied out.
// run_step(step, row_arena) runs one step on one row; run_batch_step(step), when it returns true,
// has run the step over every row itself (a kernel that spans rows, as the tiled Dense does).
template <class T, class Steps, class RunStep, class RunBatchStep>
void run_rows_serially(const SerialExecutor& x, T* batch, int64_t stride, const T* in, int64_t in_at, int64_t in_n,
                       T* out, int64_t out_at, int64_t out_n, int rows, const Steps& steps, RunStep&& run_step,
                       RunBatchStep&& run_batch_step) {
  for (int b = 0; b < rows; ++b)
    for (int64_t i = 0; i < in_n; ++i) batch[b * stride + in_at + i] = in[b * in_n + i];
  for (const auto& s : steps) {
    if (run_batch_step(s)) continue;
    for (int k = 0; k < rows; ++k) run_step(s, batch + (x.backwards ? rows - 1 - k : k) * stride);
  }
  for (int b = 0; b < rows; ++b)
    for (int64_t i = 0; i < out_n; ++i) out[b * out_n + i] = batch[b * stride + out_at + i];
}

template <class T, class Steps, class RunStep>
void run_rows_serially(const SerialExecutor& x, T* batch, int64_t stride, const T* in, int64_t in_at, int64_t in_n,
                       T* out, int64_t out_at, int64_t out_n, int rows, const Steps& steps, RunStep&& run_step) {
  run_rows_serially(x, batch, stride, in, in_at, in_n, out, out_at, out_n, rows, steps, run_step,
                    [](const auto&) { return false; });
}

}  // namespace tickinfer::cuda
