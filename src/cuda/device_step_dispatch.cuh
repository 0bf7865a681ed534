// One step of the graph form by its kind: the one switch over DevKind, shared by the GPU kernel
// (device_graph.cu, one instantiation per kind) and the host executor (device_program_host.cpp).
#pragma once

#include "cuda/device_steps_attention.cuh"
#include "cuda/device_steps_layout.cuh"
#include "cuda/device_steps_linear.cuh"
#include "cuda/device_steps_recurrent.cuh"
#include "cuda/device_steps_rowwise.cuh"

namespace tickinfer::cuda::steps {

template <DevKind K, bool M, class X>
TI_HD void run_kind(const X& x, const DeviceStep& s, float* A, const float* W) {
  if constexpr (K == DevKind::Dense) dense<M>(x, s, A, W);
  else if constexpr (K == DevKind::Activation) activation<M>(x, s, A, W);
  else if constexpr (K == DevKind::Softmax) softmax<M>(x, s, A, W);
  else if constexpr (K == DevKind::Affine) affine<M>(x, s, A, W);
  else if constexpr (K == DevKind::LayerNorm) layer_norm<M>(x, s, A, W);
  else if constexpr (K == DevKind::Lstm) lstm<M>(x, s, A, W);
  else if constexpr (K == DevKind::LstmWindow) lstm_window<M>(x, s, A, W);
  else if constexpr (K == DevKind::Gru) gru<M>(x, s, A, W);
  else if constexpr (K == DevKind::GruClassic) gru_classic<M>(x, s, A, W);
  else if constexpr (K == DevKind::Conv1D) conv1d<M>(x, s, A, W);
  else if constexpr (K == DevKind::Conv2D) conv2d<M>(x, s, A, W);
  else if constexpr (K == DevKind::DepthwiseConv2D) depthwise_conv2d<M>(x, s, A, W);
  else if constexpr (K == DevKind::MaxPool) pool1d<M>(x, s, A, true);
  else if constexpr (K == DevKind::AvgPool) pool1d<M>(x, s, A, false);
  else if constexpr (K == DevKind::GlobalAvgPool) global_pool<M>(x, s, A, false);
  else if constexpr (K == DevKind::GlobalMaxPool) global_pool<M>(x, s, A, true);
  else if constexpr (K == DevKind::MaxPool2D) pool2d<M>(x, s, A, true);
  else if constexpr (K == DevKind::AvgPool2D) pool2d<M>(x, s, A, false);
  else if constexpr (K == DevKind::Add || K == DevKind::Sub || K == DevKind::Mul) binary<M>(x, s, A, W);
  else if constexpr (K == DevKind::Concat) concat<M>(x, s, A, W);
  else if constexpr (K == DevKind::Attention) {
    if (s.attention_stream) attention_stream<M>(x, s, A, W);
    else attention_window<M>(x, s, A, W);
  }
  else if constexpr (K == DevKind::Pad) pad<M>(x, s, A, W);
  else if constexpr (K == DevKind::Transpose) transpose<M>(x, s, A, W);
  else if constexpr (K == DevKind::Slice) slice<M>(x, s, A, W);
  else if constexpr (K == DevKind::MatMul) matmul<M>(x, s, A, W);
  else if constexpr (K == DevKind::ReverseRows) reverse_rows<M>(x, s, A, W);
}

// s.kind picks the instantiation: the host executor's way in, and the resident program kernel's
// (the graph form launches one kernel per kind instead). M: whether a tensor may be 16-bit
// (cuda/tensor_view.hpp); a step with a 16-bit tensor needs M = true.
template <bool M, class X>
TI_HD void run_step(const X& x, const DeviceStep& s, float* A, const float* W) {
  switch (s.kind) {
#define TI_STEP_CASE(K) \
  case DevKind::K:      \
    return run_kind<DevKind::K, M>(x, s, A, W);
    TI_STEP_CASE(Dense)
    TI_STEP_CASE(Activation)
    TI_STEP_CASE(Softmax)
    TI_STEP_CASE(Affine)
    TI_STEP_CASE(LayerNorm)
    TI_STEP_CASE(Lstm)
    TI_STEP_CASE(LstmWindow)
    TI_STEP_CASE(Gru)
    TI_STEP_CASE(GruClassic)
    TI_STEP_CASE(Conv1D)
    TI_STEP_CASE(Conv2D)
    TI_STEP_CASE(DepthwiseConv2D)
    TI_STEP_CASE(MaxPool)
    TI_STEP_CASE(AvgPool)
    TI_STEP_CASE(GlobalAvgPool)
    TI_STEP_CASE(GlobalMaxPool)
    TI_STEP_CASE(MaxPool2D)
    TI_STEP_CASE(AvgPool2D)
    TI_STEP_CASE(Add)
    TI_STEP_CASE(Sub)
    TI_STEP_CASE(Mul)
    TI_STEP_CASE(Concat)
    TI_STEP_CASE(Attention)
    TI_STEP_CASE(Pad)
    TI_STEP_CASE(Transpose)
    TI_STEP_CASE(Slice)
    TI_STEP_CASE(MatMul)
    TI_STEP_CASE(ReverseRows)
#undef TI_STEP_CASE
    case DevKind::Count:
      return;
  }
}

}  // namespace tickinfer::cuda::steps
