// Keras' Dot as graph nodes (keras_layer_nodes.hpp says how).
#include "formats/keras/keras_layer_nodes.hpp"

#include "formats/keras/keras_calls.hpp"
#include "formats/keras/keras_json.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

int add_dot(const LayerNodeSink& sink, Node matmul, std::vector<int> inputs, const std::vector<int>& ranks,
            const json& c, const std::string& ctx) {
  const json& axes = member(c, "axes");
  int ax[2];
  for (int k = 0; k < 2; ++k) {
    const json& a = axes.is_array() ? (axes.size() == 2 ? axes[static_cast<size_t>(k)] : json()) : axes;
    const int batched_rank = ranks[static_cast<size_t>(k)] + 1;
    const int v = json_value_int(a, -batched_rank, batched_rank - 1, ctx + ": axes");
    ax[k] = (v < 0 ? v + batched_rank : v) - 1;  // un-batched
    if (ax[k] < 0) throw Error(ctx + ": axes " + json_brief(axes) + " contract the batch axis, which is not supported");
  }
  const std::string name = matmul.name, cls = matmul.keras_class;
  auto aux = [&](const char* what, OpKind kind, int input, int rank) {
    Node n;
    n.name = name + "/" + what;
    n.keras_class = cls;
    n.kind = kind;
    if (kind == OpKind::Permute) n.permutation = {1, 0};
    return sink.add(std::move(n), {input}, rank);
  };
  if (ranks[0] == 2 && ranks[1] == 2) {
    if (ax[0] == 0) inputs[0] = aux("transpose_a", OpKind::Permute, inputs[0], 2);
    if (ax[1] == 1) inputs[1] = aux("transpose_b", OpKind::Permute, inputs[1], 2);
    return sink.add(std::move(matmul), inputs, 2);
  }
  if (ranks[0] == 1 && ranks[1] == 1) {
    Node a, b, out;
    for (Node* r : {&a, &b, &out}) r->kind = OpKind::Reshape, r->keras_class = cls;
    a.name = name + "/row", a.target_shape = {1, -1};
    b.name = name + "/column", b.target_shape = {-1, 1};
    matmul.name = name + "/product";
    out.name = name, out.target_shape = {1};
    inputs = {sink.add(std::move(a), {inputs[0]}, 2), sink.add(std::move(b), {inputs[1]}, 2)};
    return sink.add(std::move(out), {sink.add(std::move(matmul), inputs, 2)}, 1);
  }
  throw Error(ctx + ": inputs of ranks " + std::to_string(ranks[0] + 1) + " and " + std::to_string(ranks[1] + 1) +
              " (with the batch) are not supported (rank 3, [batch, rows, columns], or vectors)");
}

}  // namespace tickinfer::formats
