#include "formats/isolated_load.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "model/graph_wire.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace detail {

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

std::string reply_frame(char tag, const std::string& body) {
  const uint64_t len = body.size();
  std::string frame(1, tag);
  frame.append(reinterpret_cast<const char*>(&len), sizeof len);
  return frame + body;
}

std::string run_parser(IsolatedParser parse, const void* data, size_t size, const std::string& label) {
  try {
    return reply_frame('G', encode_graph(parse(data, size, label)));
  } catch (const std::exception& e) {
    return reply_frame('E', e.what());
  }
}

Graph graph_from_frame(const std::string& frame, const std::string& label) {
  uint64_t len = 0;
  if (frame.size() >= 1 + sizeof len) std::memcpy(&len, frame.data() + 1, sizeof len);
  if (frame.size() < 1 + sizeof len || len != frame.size() - 1 - sizeof len) {
    throw Error(label + ": the isolated loader's reply is truncated");
  }
  std::string body = frame.substr(1 + sizeof len);
  if (frame[0] == 'E') throw Error(body);
  return decode_graph(body);
}

}  // namespace detail

namespace {

std::atomic<uint64_t> g_via_loader{0};
std::atomic<uint64_t> g_via_fork{0};

[[noreturn]] void child_main(int fd, IsolatedParser parse, const void* data, size_t size, const std::string& label) {
  const std::string frame = detail::run_parser(parse, data, size, label);
  ::_exit(detail::write_all(fd, frame.data(), frame.size()) ? 0 : 3);  // no atexit handlers or static destructors
}

}  // namespace

namespace detail {

double load_timeout_seconds() {
  const char* env = std::getenv("TICKINFER_LOAD_TIMEOUT_S");
  const double v = env ? std::atof(env) : 0.0;
  return v > 0 ? v : 120.0;
}

std::string fork_for_frame(IsolatedParser parse, const void* data, size_t size, const std::string& label,
                           double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(label + ": cannot create a pipe for the isolated loader");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(label + ": cannot fork the isolated loader");
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], parse, data, size, label);
  }
  ::close(fds[1]);

  // Read everything the child sends until it closes the pipe or the deadline passes.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string reply;
  bool timed_out = false;
  char buf[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    throw Error(label + ": malformed file: parsing did not finish within " +
                std::to_string(static_cast<int>(timeout_s)) + " s");
  }
  if (WIFSIGNALED(status)) {
    throw Error(label + ": malformed file: the parser crashed on it (signal " +
                std::to_string(WTERMSIG(status)) + ")");
  }
  if (reply.size() < 1 + sizeof(uint64_t)) {
    throw Error(label + ": malformed file: the parser failed (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return reply;
}

Graph fork_and_parse(IsolatedParser parse, const void* data, size_t size, const std::string& label,
                     double timeout_s) {
  return graph_from_frame(fork_for_frame(parse, data, size, label, timeout_s), label);
}

}  // namespace detail

Graph parse_isolated(IsolatedParser parse, const void* data, size_t size, const std::string& label) {
  const double timeout_s = detail::load_timeout_seconds();  // the caller's setting, wherever the child runs
  if (detail::loader_process_running()) {
    Graph g;
    bool done = false;
    try {
      done = detail::parse_via_loader(parse, data, size, label, timeout_s, g);
    } catch (...) {  // the file's own error, made by the loader's child
      g_via_loader.fetch_add(1, std::memory_order_relaxed);
      throw;
    }
    if (done) {
      g_via_loader.fetch_add(1, std::memory_order_relaxed);
      return g;
    }
  }
  g_via_fork.fetch_add(1, std::memory_order_relaxed);
  return detail::fork_and_parse(parse, data, size, label, timeout_s);
}

IsolatedLoadCounts isolated_load_counts() {
  return {g_via_loader.load(std::memory_order_relaxed), g_via_fork.load(std::memory_order_relaxed)};
}

}  // namespace tickinfer::formats
