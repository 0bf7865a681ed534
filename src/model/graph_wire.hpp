#pragma once
// A byte encoding of a Graph for handing one across a process boundary (the isolated model
// loader parses files in a child process). Both ends are the same binary, so the encoding is
// native-endian and unversioned; decode() still checks every length against the bytes it has.
// Every field travels: the encoding walks the field lists of model/graph_fields.hpp.
#include <string>

#include "model/graph.hpp"

namespace tickinfer {

std::string encode_graph(const Graph& graph);
// Throws tickinfer::Error if the bytes are truncated or inconsistent.
Graph decode_graph(const std::string& bytes);

}  // namespace tickinfer
