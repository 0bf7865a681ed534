#pragma once
// Parses a model file in a short-lived child process. libhdf5 (Debian 12: 1.10.8) has known
// memory-safety bugs and infinite loops on hostile files (our fuzzer found both) that no check
// of ours can fully rule out; in a child, such a file costs a failed load with a clear Error
// instead of a crashed or hung trading process. The child is fork()ed, runs the parser, sends
// back the Graph (model/graph_wire.hpp) or the error text through a pipe, and exits.
//
// Cost: one fork per load (about a millisecond), at load time only. HDF5 is then only ever
// called in children, so no parent thread can hold the HDF5 lock across a fork.
#include <functional>
#include <string>

#include "model/graph.hpp"

namespace tickinfer::formats {

// Runs parse() in a child process and returns its result. Throws tickinfer::Error (prefixed
// with `label`) with parse()'s own message if it threw, or saying the parser crashed (signal) or
// did not finish within the time limit ($TICKINFER_LOAD_TIMEOUT_S, default 120 s; the child is
// then killed).
Graph parse_in_child(const std::function<Graph()>& parse, const std::string& label);

}  // namespace tickinfer::formats
