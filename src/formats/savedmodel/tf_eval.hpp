#pragma once
// Evaluation of TensorFlow ops on constant tensors: folds the shape arithmetic and the
// weight arithmetic (BatchNorm's rsqrt(var + eps) * gamma, ...) of a SavedModel function, and runs
// a recurrent loop's body on sample values to check that it is the cell the importer assumes.
// Only the ops Keras exports use are implemented; anything else throws.
#include <string>
#include <vector>

#include "formats/savedmodel/tf_tensor.hpp"

namespace tensorflow {
class NodeDef;
}

namespace tickinfer::formats {

// True if `op` can be evaluated by eval_tf_op.
bool tf_op_is_foldable(const std::string& op);

// The op's outputs from its data inputs. Throws tickinfer::Error starting with `where` on
// unsupported ops, attrs or shapes.
std::vector<TfTensor> eval_tf_op(const tensorflow::NodeDef& node, const std::vector<TfTensor>& inputs,
                                 const std::string& where);

// A constant matrix's transpose (MatMul's transpose_b, BatchMatMul's adj_y on the weights).
TfTensor tf_transpose_matrix(const TfTensor& w, const std::string& where);

// StridedSlice of x with TF's begin, end, shrink-axis, new-axis and ellipsis masks (tf_slice.cpp).
TfTensor tf_strided_slice(const tensorflow::NodeDef& node, const TfTensor& x, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides, const std::string& where);

// Numpy-style broadcast of two shapes; throws if incompatible.
std::vector<int64_t> tf_broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                        const std::string& where);

}  // namespace tickinfer::formats
