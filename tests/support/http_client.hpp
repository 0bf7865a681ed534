#pragma once
// A minimal blocking HTTP/1.1 client over a real loopback TCP socket, for the serving tests:
// sends raw request bytes and reads one response (status line, headers, Content-Length body).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tickinfer::testing {

struct HttpReply {
  int status = 0;
  std::string headers;  // raw header block (lower-cased names are not normalized)
  std::string body;
  bool closed = false;  // the server closed the connection after this reply
};

class HttpClient {
 public:
  explicit HttpClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      throw std::runtime_error("connect to port " + std::to_string(port) + " failed");
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~HttpClient() {
    if (fd_ >= 0) close(fd_);
  }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void send_raw(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      off += static_cast<size_t>(n);
    }
  }

  HttpReply read_reply() {
    HttpReply r;
    size_t head_end;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) {
        r.closed = true;
        return r;
      }
    }
    r.headers = buf_.substr(0, head_end + 4);
    r.status = std::atoi(r.headers.c_str() + 9);
    size_t length = 0;
    for (const char* key : {"Content-Length: ", "content-length: "}) {
      const size_t p = r.headers.find(key);
      if (p != std::string::npos) length = std::strtoul(r.headers.c_str() + p + 16, nullptr, 10);
    }
    while (buf_.size() < head_end + 4 + length) {
      if (!fill()) throw std::runtime_error("connection closed mid-body");
    }
    r.body = buf_.substr(head_end + 4, length);
    buf_.erase(0, head_end + 4 + length);
    r.closed = r.headers.find("Connection: close") != std::string::npos;
    return r;
  }

  HttpReply request(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& extra_headers = "") {
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n" + extra_headers;
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    send_raw(req);
    return read_reply();
  }

  // True when the peer has closed (a read returns 0).
  bool peer_closed() {
    char c;
    const ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0;
  }

 private:
  bool fill() {
    char tmp[65536];
    const ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buf_;
};

}  // namespace tickinfer::testing
