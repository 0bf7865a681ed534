#pragma once
// One evaluation of a TF function body (or of the top-level graph): its nodes by name, its
// arguments' values, the values computed so far, and how often each node's outputs are used.
#include <map>
#include <string>
#include <vector>

#include "formats/savedmodel/tf_lowering.hpp"
#include "formats/savedmodel/tf_rnn_cell.hpp"

namespace tickinfer::formats {

struct TfFrame {
  std::string function;  // "" for the top-level graph
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  std::map<std::string, int> args;  // function input arg name -> index
  std::vector<TfValue> arg_values;
  std::map<std::string, std::vector<TfValue>> done;
  std::map<std::string, int> uses;  // data references to a node (or arg) from other nodes and ret
  std::map<std::string, bool> busy;  // cycle detection
  const tensorflow::FunctionDef* def = nullptr;
  std::map<std::string, TfFrame*> callees;  // call node -> the callee's frame (outputs evaluated on demand)
  const TfFrame* caller = nullptr;          // the frame whose node `call_node` called this one (none: the signature's)
  std::string call_node;
  std::map<int, TfValue> results;           // output index -> value, evaluated so far
};

// A recognised recurrent loop and the Graph nodes made from it (one per output form used).
struct TfLowering::RnnRecord {
  RecognisedCell cell;
  std::string name, origin;
  int input_node = -1;
  int64_t steps = 0;
  int sequence_node = -1, last_node = -1;
  // An LSTM that starts from computed states (h0, c0: Graph nodes [units]) or whose final c is
  // read (an encoder handing its state to a decoder) is one node with return_state and every
  // step's h (full_node); its sequence, last h and c are SliceRows of it, made once each.
  int h0 = -1, c0 = -1;
  bool reads_c = false;
  int full_node = -1, cell_node = -1;
  bool stateful() const { return h0 >= 0 || reads_c; }
};

// A reference to a tensor: function arg `name`, or output `index` (flattened) of node `node`.
struct TfRef {
  std::string node;
  int index = 0;
  bool control = false;
};
// Parses "node", "node:idx" (graph) or "node:outarg:idx" (function body), "^node" (control).
TfRef parse_tf_ref(const std::string& ref, const std::string& op_of_node);

}  // namespace tickinfer::formats
