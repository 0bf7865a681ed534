#pragma once
// The one interface behind tickinfer::Plan. A compiled model is a PlanBackend: the Keras graph
// plan (engine/graph_plan.hpp: a step list over one arena) or the tensor-program plan
// (engine/program_plan.hpp: TFLite and .tkq models over the interpreter). Plan only forwards to
// it, so a new front end lowers into one of these (or adds a backend) instead of adding branches
// to Plan.
//
// Plan's pimpl is this interface itself (Plan::Impl, declared in the public header; PlanBackend
// inside the engine): a Plan is one pointer, and Plan::run costs one indirect call on top of the
// backend's own work.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer {

struct Plan::Impl {
  virtual ~Impl() = default;

  // --- Run paths: noexcept, and never allocate, lock or make a syscall (engine_hot_path_test).
  // Every size and pointer they use was fixed when the backend was built.

  // inputs[i] holds input_size(i) floats, outputs[i] has room for output_size(i) floats.
  virtual void run(const float* const* inputs, float* const* outputs) noexcept = 0;
  // `rows` independent inputs, x [rows][input 0] -> y [rows][output 0], each output row
  // bit-identical to run() on that row. Any row count: more than reserved run in slices of the
  // reservation, none reserved runs run() per row.
  virtual void run_rows(const float* x, int rows, float* y) noexcept = 0;
  // Stream mode: zero the recurrent state. Window mode: nothing to do.
  virtual void reset_state() noexcept = 0;

  // --- Preparation (may allocate; called before the hot path, never on it).

  // Allocates run_rows room for max_rows (>= 1) rows and returns "", or returns why this plan
  // cannot run several rows at once (a sentence for tickinfer::Error) and reserves nothing.
  virtual std::string reserve_rows(int max_rows) = 0;
  virtual int reserved_rows() const noexcept = 0;
  // A new backend for another thread, with fresh mutable state (arena, recurrent state zeroed)
  // and no rows reserved. It shares the immutable inputs read-only: the graph plan its layout and
  // packed weights, the program plan its program (its new interpreter prepares its own packed
  // copies, as compile() does).
  virtual std::unique_ptr<Impl> clone() const = 0;

  // --- Description (cheap, const, thread-safe on a shared backend).

  // Per call: in stream mode a sequence input is [features].
  virtual const std::vector<Shape>& input_shapes() const = 0;
  virtual const std::vector<Shape>& output_shapes() const = 0;
  virtual RecurrentMode mode() const = 0;
  virtual const char* isa() const = 0;                 // the kernel set in use
  virtual size_t arena_bytes() const = 0;              // mutable scratch this backend owns
  virtual int64_t flops() const = 0;                   // per run(), see Plan::flops()
  virtual int64_t weight_bytes() const = 0;            // read per run(), see Plan::weight_bytes()
  virtual int64_t weight_footprint_bytes() const = 0;  // resident, shared by clones
  virtual std::string describe() const = 0;            // one line per step, for `tickinfer inspect`

  // --- Profiling (Plan::profile; never on the hot path).

  // One entry per step (graph plan) or op (program plan), in run order; p50_ns left 0.
  virtual std::vector<Plan::StepProfile> profile_steps() const = 0;
  // run() with engine::step_clock() read between steps: ticks[i] = step i's clock difference.
  virtual void run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept = 0;
};

namespace engine {

using PlanBackend = Plan::Impl;

// run_rows for a backend with nothing reserved: one run() per row of the given widths (floats).
// A template so that a final backend's own run() is called directly.
template <class Backend>
void run_each_row(Backend& backend, const float* x, int rows, size_t in_width, float* y, size_t out_width) noexcept {
  for (int r = 0; r < rows; ++r) {
    const float* const ins[1] = {x + static_cast<size_t>(r) * in_width};
    float* const outs[1] = {y + static_cast<size_t>(r) * out_width};
    backend.run(ins, outs);
  }
}

}  // namespace engine
}  // namespace tickinfer
