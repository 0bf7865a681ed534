#pragma once
// Parses a model file in a short-lived child process. libhdf5 (Debian 12: 1.10.8) has known
// memory-safety bugs and infinite loops on hostile files (our fuzzer found both) that no check
// of ours can fully rule out; in a child, such a file costs a failed load with a clear Error
// instead of a crashed or hung trading process. The child runs the parser, sends back the Graph
// (model/graph_wire.hpp) or the error text through a pipe, and exits.
//
// Where the child comes from matters in a multithreaded process: a child fork()ed from one may
// only make async-signal-safe calls (another thread may have held any lock at the fork), and a
// parser is anything but. So a process that loads while other threads run (the model server's
// reloads) starts a loader process first, while it is still single-threaded
// (start_loader_process); every load then forks from that single-threaded loader, never from
// the threaded parent. Without one (a CLI command that loads before its threads start, a test,
// an embedding program) the load forks from the caller, which is safe while it has one thread.
//
// Cost: one fork per load (about a millisecond), and through the loader process one copy of the
// file's bytes over a socket; load time only. HDF5 is only ever called in children.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/graph.hpp"

namespace tickinfer::formats {

// A parser that runs in the child: the file's bytes and a label for its messages.
using IsolatedParser = Graph (*)(const void* data, size_t size, const std::string& label);

// Runs parse(data, size, label) in a child process and returns its result. Throws
// tickinfer::Error (prefixed with `label`) with the parser's own message if it threw, or saying
// the parser crashed (signal) or did not finish within the time limit ($TICKINFER_LOAD_TIMEOUT_S,
// default 120 s; the child is then killed).
Graph parse_isolated(IsolatedParser parse, const void* data, size_t size, const std::string& label);

// Starts the loader process every later parse_isolated goes through. Call it while the process
// has one thread (it checks: with more, it starts nothing and returns false, and loads keep
// forking from the caller). Returns true once one runs; a second call returns true at once. The
// loader exits when this process does (its socket closes; PR_SET_PDEATHSIG if killed).
bool start_loader_process();

// How each parse_isolated call so far made its child: through the loader process, or by a fork
// of the calling process (no loader started, or the loader was gone).
struct IsolatedLoadCounts {
  uint64_t via_loader_process = 0;
  uint64_t via_fork = 0;
};
IsolatedLoadCounts isolated_load_counts();

namespace detail {
// The child's side, shared by both paths: runs parse, returns the reply frame (tag 'G' + graph
// wire, or 'E' + message) as bytes.
std::string run_parser(IsolatedParser parse, const void* data, size_t size, const std::string& label);
// The frame itself: tag, 64-bit length, body.
std::string reply_frame(char tag, const std::string& body);
// The Graph a frame carries, or its 'E' message as an Error (a short or long frame is one too).
Graph graph_from_frame(const std::string& frame, const std::string& label);
// Forks a child running parse and returns its frame; a crash, a time-out or a child that sent
// nothing is an Error.
std::string fork_for_frame(IsolatedParser parse, const void* data, size_t size, const std::string& label,
                           double timeout_s);
// Forks a child running parse and turns its reply, crash or time-out into a Graph or an Error.
Graph fork_and_parse(IsolatedParser parse, const void* data, size_t size, const std::string& label,
                     double timeout_s);
// The loader process's side (loader_process.cpp): false where no loader runs.
bool loader_process_running();
// Sends the load to the loader process; throws Error as fork_and_parse does. Returns false
// (and loads nothing) where the loader process is gone.
bool parse_via_loader(IsolatedParser parse, const void* data, size_t size, const std::string& label, double timeout_s,
                      Graph& out);
bool write_all(int fd, const void* p, size_t n);
double load_timeout_seconds();  // $TICKINFER_LOAD_TIMEOUT_S, default 120
bool read_all(int fd, void* p, size_t n);
}  // namespace detail

}  // namespace tickinfer::formats
