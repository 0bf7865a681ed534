// restrict_to_rows and make_increment (incremental_steps.hpp).
#include "engine/incremental_steps.hpp"

namespace tickinfer::engine {

Step restrict_to_rows(const Step& s, const LoweredOp& op, const RowUpdate& u, const LoweredGraph& g,
                      const std::vector<int>& time_rows, int r0, int r1) {
  Step r = s;
  const int n = r1 - r0;
  const auto row_floats = [&](int t) { return static_cast<uint32_t>(g.tensors[t].floats / time_rows[t]); };
  const auto move = [&](TensorRef& ref, int t) {
    if (t >= 0) ref.offset += static_cast<uint32_t>(r0) * row_floats(t);
  };
  move(r.out, op.out);
  switch (u.form) {
    case RowForm::Windowed:
      // Output row o of the range is row r0 + o of the whole: its span starts r0 rows lower.
      r.steps = n;
      r.pad_left = s.pad_left - r0;
      return r;
    case RowForm::Rows:
    case RowForm::Blocks:
      r.rows = n * (s.rows / u.time_rows);
      break;
    case RowForm::Elements:
      r.out_width = static_cast<int>(static_cast<uint32_t>(n) * row_floats(op.out));
      break;
    case RowForm::None: return r;
  }
  move(r.in, op.in);
  move(r.rhs, op.rhs);
  for (size_t k = 0; k < op.extra_inputs.size(); ++k) move(r.extra_inputs[k], op.extra_inputs[k]);
  return r;
}

IncrementalStep make_increment(const Step& s, const LoweredOp& op, const RowUpdate& u, const LoweredGraph& g,
                               const std::vector<int>& time_rows) {
  IncrementalStep inc;
  inc.why = u.why;
  if (!u.on) return inc;
  inc.on = true;
  inc.rows = u.time_rows;
  inc.front = u.front;
  inc.back = u.back;
  inc.front_step = restrict_to_rows(s, op, u, g, time_rows, 0, u.front);
  inc.back_step = restrict_to_rows(s, op, u, g, time_rows, u.time_rows - u.back, u.time_rows);
  return inc;
}

}  // namespace tickinfer::engine
