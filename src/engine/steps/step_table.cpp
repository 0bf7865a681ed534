// The one list of the CPU graph plan's step kinds: StepKind -> its StepOps (step_ops.hpp).
#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {

// The families, one file each in this folder.
extern const StepOps kDenseStep;                                                          // dense_step.cpp
extern const StepOps kActivationStep, kSoftmaxStep, kAffineStep, kLayerNormStep;          // rowwise_steps.cpp
extern const StepOps kLstmStep, kLstmWindowStep;                                          // lstm_steps.cpp
extern const StepOps kGruStep, kGruClassicStep;                                           // gru_steps.cpp
extern const StepOps kConv1DStep;                                                         // conv1d_step.cpp
extern const StepOps kConv2DStep;                                                         // conv2d_step.cpp
extern const StepOps kMaxPoolStep, kAvgPoolStep, kGlobalAvgPoolStep, kGlobalMaxPoolStep;  // pool_steps.cpp
extern const StepOps kMaxPool2DStep, kAvgPool2DStep;                                      // pool2d_steps.cpp
extern const StepOps kAddStep, kSubStep, kMulStep, kConcatStep;                           // merge_steps.cpp
extern const StepOps kAttentionStep;                                                      // attention_step.cpp
extern const StepOps kPadStep, kTransposeStep, kSliceStep, kReverseRowsStep;              // layout_steps.cpp
extern const StepOps kMatMulStep;                                                         // matmul_step.cpp
extern const StepOps kDepthwiseConv2DStep;                                                // depthwise_conv2d_step.cpp

const StepOps& step_ops(StepKind kind) {
  switch (kind) {
    case StepKind::Dense: return kDenseStep;
    case StepKind::Activation: return kActivationStep;
    case StepKind::Softmax: return kSoftmaxStep;
    case StepKind::Affine: return kAffineStep;
    case StepKind::LayerNorm: return kLayerNormStep;
    case StepKind::Lstm: return kLstmStep;
    case StepKind::LstmWindow: return kLstmWindowStep;
    case StepKind::Gru: return kGruStep;
    case StepKind::GruClassic: return kGruClassicStep;
    case StepKind::Conv1D: return kConv1DStep;
    case StepKind::Conv2D: return kConv2DStep;
    case StepKind::MaxPool: return kMaxPoolStep;
    case StepKind::AvgPool: return kAvgPoolStep;
    case StepKind::GlobalAvgPool: return kGlobalAvgPoolStep;
    case StepKind::GlobalMaxPool: return kGlobalMaxPoolStep;
    case StepKind::MaxPool2D: return kMaxPool2DStep;
    case StepKind::AvgPool2D: return kAvgPool2DStep;
    case StepKind::Add: return kAddStep;
    case StepKind::Sub: return kSubStep;
    case StepKind::Mul: return kMulStep;
    case StepKind::Concat: return kConcatStep;
    case StepKind::Attention: return kAttentionStep;
    case StepKind::Pad: return kPadStep;
    case StepKind::Transpose: return kTransposeStep;
    case StepKind::DepthwiseConv2D: return kDepthwiseConv2DStep;
    case StepKind::Slice: return kSliceStep;
    case StepKind::MatMul: return kMatMulStep;
    case StepKind::ReverseRows: return kReverseRowsStep;
  }
  return kDenseStep;  // unreachable: every kind is listed (-Wswitch)
}

}  // namespace tickinfer::engine
