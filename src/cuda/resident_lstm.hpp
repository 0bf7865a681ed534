// A resident (never-exiting) CUDA kernel that runs an LSTM stack with a Dense head, one request
// at a time, with no driver call per request.
//
// Why: a launch plus a synchronise costs several microseconds before any arithmetic, more than a
// whole small LSTM step on a CPU core. Launched once, the kernel keeps every weight in the shared
// memory of a thread-block cluster (the stack's units split evenly over its blocks; each block
// holds the full hidden vectors it needs, exchanged through distributed shared memory with one
// cluster barrier per layer and step) and polls a request buffer in mapped pinned host memory.
//
// Wire form (both directions): 8-byte units, low word the payload, high word the request's
// sequence number, each unit written by one 8-byte store. A reader takes a unit once its high word
// shows the sequence it waits for, so no flag, fence or second round trip over PCIe is needed
// (the scheme NCCL's LL protocol uses). Request units: [0] command (bit 0 reset the state first,
// bit 1 stop), then steps x input floats. Reply units: the head's outputs.
//
// Run path promise (ResidentLstm::run): no allocation, no lock, no CUDA driver or runtime call;
// plain loads and stores to pinned memory and a spin with a deadline that reads steady_clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda/lstm_stack.hpp"

namespace tickinfer::cuda {

// Two forms of the kernel: "registers" keeps each weight in a register of the thread that
// multiplies it (shapes fixed at compile time; most small stacks fit a cluster of 16 blocks),
// "shared" keeps the weights in shared memory (any shape whose weights fit a cluster's shared
// memory). Auto tries registers first.
// The register form's wide shape: 40 weights per thread per layer over 512 threads, for a stack
// of one LSTM layer and one Dense layer whose rows (input + units columns) need 80 columns or
// fewer; it holds such a layer of up to 64 units in one block (resident_registers_kernel.cuh).
constexpr int kWideLanes = 40;

struct ResidentOptions {
  int device = 0;
  // "auto", "registers", "shared", or "tagged": the register form without a cluster barrier per
  // layer and step (resident_tagged_kernel.cu; not yet run on a GPU, so auto times it only with
  // time_tagged).
  std::string form = "auto";
  // auto: time the tagged form too, last, kept only where its replies to the probe requests
  // agree with the host's double-precision reference, as every form's must (resident_tuning.hpp). Off until the tagged kernel has run on a GPU: a kernel that faults
  // spoils the whole process's CUDA context, and the registers and shared forms are the measured
  // ones a plan must never lose to an untried kernel.
  bool time_tagged = false;
  int cluster = 0;  // blocks per cluster (1..16); 0 = chosen
  int threads = 0;  // shared form: threads per block; 0 = chosen from the layer widths
  int lanes = 0;    // registers form: weights per thread per layer (8, 16, 32 or kWideLanes); 0 = chosen
  int steps = 1;    // time steps per request: 1 for a stateful stream, the window length otherwise
  int activations = 2;     // registers form: where gate activations run (see RegDesc::activations)
  bool fast_math = false;           // registers form: __expf-based sigmoid and tanh
  // For a profiler, which runs a kernel to its end: one request (reset, every input 0.1) is
  // written before the launch, the kernel answers it and exits, start() waits for that and
  // returns a plan whose run() answers false.
  bool single_request = false;
};

// What start() chose and what the device offers, for reports.
struct ResidentLayout {
  std::string form;
  int cluster = 0;
  int threads = 0;
  int lanes = 0;
  int steps = 0;
  size_t shared_bytes_per_block = 0;
  std::string device_name;
};

// Per-request stamps from block 0: %globaltimer (ns) when the request was seen, the recurrence
// done and the reply written; SM cycles from seen to done, and of those the cycles in the gate
// products and in the cell updates with their barriers, and the head's cycles (block 0's thread
// 0, to its last reply store); register form only: that thread's cycles in the dot products,
// the gate activations with their block barriers, the cell work with the pushes, and the cluster
// barriers. Kept for the last kTraceRequests requests.
struct ResidentTrace {
  uint64_t seen_ns = 0, recurrent_done_ns = 0, reply_written_ns = 0;
  uint64_t recurrent_cycles = 0, gate_cycles = 0, cell_cycles = 0, head_cycles = 0;
  uint64_t dot_cycles = 0, activation_cycles = 0, cell_work_cycles = 0, barrier_cycles = 0;
};

class ResidentLstm {
 public:
  static constexpr int kTraceRequests = 1 << 16;

  // Packs the weights, launches the kernel and waits for it to answer one request. Throws
  // std::runtime_error naming the cause (no device, weights too large for any cluster, launch
  // refused, no answer within the deadline).
  static std::unique_ptr<ResidentLstm> start(const LstmStack& stack, const ResidentOptions& options);
  ~ResidentLstm();  // stops the kernel and frees everything

  ResidentLstm(const ResidentLstm&) = delete;
  ResidentLstm& operator=(const ResidentLstm&) = delete;

  // One request: x holds steps * input_width floats, y receives output_width floats. reset
  // zeroes the recurrent state before the first step (always true for window models). Returns
  // false when no reply arrived within timeout_ns (the kernel is then unusable).
  bool run(const float* x, bool reset, float* y, int64_t timeout_ns) noexcept;

  const ResidentLayout& layout() const { return layout_; }
  int input_width() const { return input_width_; }
  int output_width() const { return output_width_; }
  // Copies the kernel's trace of the last requests (oldest first); stops the kernel first.
  std::vector<ResidentTrace> stop_and_read_trace();

  struct Device;  // CUDA-side state, defined in resident_lstm.cu

 private:
  ResidentLstm() = default;
  void stop() noexcept;

  std::unique_ptr<Device> device_;
  ResidentLayout layout_;
  int input_width_ = 0, output_width_ = 0;
  uint32_t seq_ = 0;
  bool running_ = false;
  bool answering_ = true;
};

}  // namespace tickinfer::cuda
