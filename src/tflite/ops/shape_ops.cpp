// RESHAPE, EXPAND_DIMS, SQUEEZE: layouts are row-major, so each is a copy of the bytes (skipped
// when the interpreter gives input and output the same memory). Input and output must agree in
// type, element count and quantization.
#include <cstring>

#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {
namespace {

class CopyOp final : public PreparedOp {
 public:
  CopyOp(int in, int out, size_t bytes, bool int8) : in_(in), out_(out), bytes_(bytes), int8_(int8) {}
  void eval(const TensorMemory& mem) noexcept override {
    const void* x = mem.addr[static_cast<size_t>(in_)];
    void* y = mem.addr[static_cast<size_t>(out_)];
    if (x != y) std::memmove(y, x, bytes_);
  }
  std::string describe() const override { return "copy " + std::to_string(bytes_) + " bytes"; }
  // int8 (elements of one byte: the interpreter's int8 programs); a Gather of every element in order.
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if (!int8_) return false;
    IntegerForm& f = forms->emplace_back();
    f.kind = IntegerKind::Gather;
    f.inputs = {in_};
    f.output = out_;
    f.count = static_cast<int64_t>(bytes_);
    f.source_input.assign(bytes_, 0);
    f.source_element.resize(bytes_);
    for (size_t i = 0; i < bytes_; ++i) f.source_element[i] = static_cast<int32_t>(i);
    return true;
  }

 private:
  int in_, out_;
  size_t bytes_;
  bool int8_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_shape_op(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_same_type(ctx, in, out);
  const int64_t n = require_static(ctx, in);
  if (require_static(ctx, out) != n) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " holds a different number of values than input '" +
             in.name + "' " + shape_str(in.shape));
  }
  if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
    ctx.fail("input '" + in.name + "' and output '" + out.name + "' must have the same quantization parameters");
  }
  return std::make_unique<CopyOp>(ctx.input_index(0), ctx.output_index(0), static_cast<size_t>(n) * dtype_size(in.type),
                                  in.type == DType::I8);
}

}  // namespace tickinfer::tfl::ops
