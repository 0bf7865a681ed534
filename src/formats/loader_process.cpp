// The loader process of isolated_load.hpp. It is fork()ed while the caller has one thread and
// stays single-threaded, so its own fork() per load is safe however many threads the caller has
// by then. Each load gets its own socket pair: the caller passes one end to the loader over the
// control socket (SCM_RIGHTS), sends the request on it and reads the reply from it, so loads on
// several threads run at once, each in a child of the loader (which runs fork_and_parse: the
// parser in a grandchild, its crash or time-out reported like a direct fork's).
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "formats/isolated_load.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats::detail {
namespace {

std::mutex g_start_mutex;
std::atomic<int> g_control{-1};  // the caller's end of the control socket; -1: no loader

// What a load socket carries first. The parser is a function pointer, valid in the loader
// because the loader is a fork of this very process image (never exec'd) and only this process
// holds the other end of its socket.
struct RequestHead {
  uint64_t parser;
  double timeout_s;  // the caller's $TICKINFER_LOAD_TIMEOUT_S: the loader's environment is a copy from its start
  uint64_t label_bytes;
  uint64_t file_bytes;
};
constexpr uint64_t kMaxLabelBytes = uint64_t{1} << 20;

size_t thread_count() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return ec ? 0 : n;  // 0: unknown, treated as "not one"
}

bool send_all(int fd, const void* data, size_t n) {  // MSG_NOSIGNAL: a dead peer is an error, not SIGPIPE
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// In a child of the loader: one load, start to finish.
[[noreturn]] void serve_one(int fd) {
  RequestHead head{};
  if (!read_all(fd, &head, sizeof head) || head.label_bytes > kMaxLabelBytes) ::_exit(4);
  std::string label(head.label_bytes, '\0');
  std::string bytes(head.file_bytes, '\0');
  if (!read_all(fd, label.data(), label.size()) || !read_all(fd, bytes.data(), bytes.size())) ::_exit(4);
  const auto parse = reinterpret_cast<IsolatedParser>(head.parser);
  std::string frame;  // the parser's own frame, passed on as it came (no decode and encode again)
  try {
    frame = fork_for_frame(parse, bytes.data(), bytes.size(), label, head.timeout_s);
  } catch (const std::exception& e) {  // its crash or time-out, said as fork_and_parse says it
    frame = reply_frame('E', e.what());
  }
  ::_exit(send_all(fd, frame.data(), frame.size()) ? 0 : 3);
}

int receive_fd(int control) {  // -1: the caller closed the control socket (it exited)
  for (;;) {
    char byte = 0;
    iovec io{&byte, 1};
    alignas(cmsghdr) char space[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = space;
    msg.msg_controllen = sizeof space;
    const ssize_t n = ::recvmsg(control, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
  }
}

[[noreturn]] void loader_main(int control) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the caller killed outright: the loader goes too
#endif
  ::signal(SIGINT, SIG_IGN);  // Ctrl-C is for the caller, which may shut down gracefully
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGCHLD, SIG_IGN);  // the kernel reaps the per-load children
  for (;;) {
    const int fd = receive_fd(control);
    if (fd < 0) ::_exit(0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::signal(SIGCHLD, SIG_DFL);  // fork_and_parse waits for its own child
      ::close(control);
      serve_one(fd);
    }
    ::close(fd);  // a failed fork: the caller reads EOF and reports it
  }
}

}  // namespace

bool loader_process_running() { return g_control.load(std::memory_order_acquire) >= 0; }

bool parse_via_loader(IsolatedParser parse, const void* data, size_t size, const std::string& label, double timeout_s,
                      Graph& out) {
  const int control = g_control.load(std::memory_order_acquire);
  if (control < 0) return false;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw Error(label + ": cannot create a socket for the loader process");
  }
  char byte = 'L';
  iovec io{&byte, 1};
  alignas(cmsghdr) char space[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = space;
  msg.msg_controllen = sizeof space;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
  ssize_t sent;
  do {
    sent = ::sendmsg(control, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  ::close(sv[1]);
  if (sent != 1) {  // the loader is gone: this and later loads fork from the caller
    ::close(sv[0]);
    g_control.store(-1, std::memory_order_release);
    return false;
  }
  const int fd = sv[0];
  const RequestHead head{reinterpret_cast<uint64_t>(parse), timeout_s, label.size(), size};
  const bool sent_all = send_all(fd, &head, sizeof head) && send_all(fd, label.data(), label.size()) &&
                        send_all(fd, data, size);
  // Read the reply; the loader's child enforces the parse time limit, this is only a backstop.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s + 30.0);
  std::string reply;
  char buf[1 << 16];
  while (sent_all) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (reply.empty()) throw Error(label + ": the loader process did not answer (it or its child ended without a reply)");
  out = graph_from_frame(reply, label);
  return true;
}

}  // namespace tickinfer::formats::detail

namespace tickinfer::formats {

bool start_loader_process() {
  std::lock_guard<std::mutex> lock(detail::g_start_mutex);
  if (detail::loader_process_running()) return true;
  if (detail::thread_count() != 1) return false;  // a fork now would be as unsafe as the ones it replaces
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return false;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  if (pid == 0) {
    ::close(sv[0]);
    detail::loader_main(sv[1]);
  }
  ::close(sv[1]);
  detail::g_control.store(sv[0], std::memory_order_release);
  return true;
}

}  // namespace tickinfer::formats
