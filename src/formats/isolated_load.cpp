#include "formats/isolated_load.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "model/graph_wire.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

[[noreturn]] void child_main(int fd, const std::function<Graph()>& parse) {
  char tag = 'E';
  std::string body;
  try {
    body = encode_graph(parse());
    tag = 'G';
  } catch (const std::exception& e) {
    body = e.what();
  }
  const uint64_t len = body.size();
  const bool ok = write_all(fd, &tag, 1) &&
                  write_all(fd, reinterpret_cast<const char*>(&len), sizeof len) &&
                  write_all(fd, body.data(), body.size());
  ::_exit(ok ? 0 : 3);  // no atexit handlers or static destructors of the parent's state
}

double timeout_seconds() {
  const char* env = std::getenv("TICKINFER_LOAD_TIMEOUT_S");
  const double v = env ? std::atof(env) : 0.0;
  return v > 0 ? v : 120.0;
}

}  // namespace

Graph parse_in_child(const std::function<Graph()>& parse, const std::string& label) {
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
    child_main(fds[1], parse);
  }
  ::close(fds[1]);

  // Read everything the child sends until it closes the pipe or the deadline passes.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds());
  std::string data;
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
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    throw Error(label + ": malformed file: parsing did not finish within " +
                std::to_string(static_cast<int>(timeout_seconds())) + " s");
  }
  if (WIFSIGNALED(status)) {
    throw Error(label + ": malformed file: the parser crashed on it (signal " +
                std::to_string(WTERMSIG(status)) + ")");
  }
  if (data.size() < 1 + sizeof(uint64_t)) {
    throw Error(label + ": malformed file: the parser failed (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  uint64_t len = 0;
  std::memcpy(&len, data.data() + 1, sizeof len);
  if (len != data.size() - 1 - sizeof len) throw Error(label + ": the isolated loader's reply is truncated");
  std::string body = data.substr(1 + sizeof len);
  if (data[0] == 'E') throw Error(body);
  return decode_graph(body);
}

}  // namespace tickinfer::formats
