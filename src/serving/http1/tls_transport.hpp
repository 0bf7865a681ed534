#pragma once
// TLS for the REST port (OpenSSL from Debian): a server context built from PEM contents (TF
// Serving's SSLConfig: server_key, server_cert, custom_ca, client_verify), and reads and writes
// on a non-blocking socket with the semantics the epoll loop already has for recv/send:
// > 0 bytes, 0 when the peer closed, -1 with errno EAGAIN when the socket must become ready
// first (OpenSSL's WANT_READ and WANT_WRITE both map to it: the connection is watched for input
// and, while output is pending, for output), -1 with errno EPROTO on a TLS error.
#include <sys/types.h>

#include <string>

struct ssl_ctx_st;
struct ssl_st;

namespace tickinfer::serving {

class TlsContext {
 public:
  // Throws tickinfer::Error naming what is wrong (unreadable key or certificate, mismatch).
  TlsContext(const std::string& key_pem, const std::string& cert_pem, const std::string& ca_pem, bool client_verify);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A server-side TLS session on an accepted socket; the handshake runs inside the first reads.
  ssl_st* accept(int fd) const;

 private:
  ssl_ctx_st* ctx_ = nullptr;
};

ssize_t tls_read(ssl_st* ssl, void* buf, size_t n) noexcept;
ssize_t tls_write(ssl_st* ssl, const void* buf, size_t n) noexcept;
// Sends close_notify (best effort) and frees the session; the caller closes the socket.
void tls_close(ssl_st* ssl) noexcept;

}  // namespace tickinfer::serving
