// OpenSSL server context and non-blocking reads/writes for the REST port (tls_transport.hpp).
#include "serving/http1/tls_transport.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <memory>

#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return e ? buf : "unknown OpenSSL error";
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio memory_bio(const std::string& pem) { return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

ssize_t map_error(ssl_st* ssl, int r) noexcept {
  switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_SYSCALL:
      if (errno == 0 || errno == ECONNRESET || errno == EPIPE) return 0;  // the peer went away
      return -1;
    default:
      ERR_clear_error();
      errno = EPROTO;
      return -1;
  }
}

}  // namespace

TlsContext::TlsContext(const std::string& key_pem, const std::string& cert_pem, const std::string& ca_pem,
                       bool client_verify) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!ctx_) throw Error("TLS: cannot create a server context: " + openssl_error());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // Partial writes and a moving buffer: the send buffer is the connection's output string, which
  // may grow between retries.
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  Bio cert_bio = memory_bio(cert_pem);
  X509* cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  if (!cert || SSL_CTX_use_certificate(ctx_, cert) != 1) {
    X509_free(cert);
    SSL_CTX_free(ctx_);
    throw Error("TLS: server_cert is not a usable PEM certificate: " + openssl_error());
  }
  X509_free(cert);
  // Intermediate certificates after the first one form the chain.
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(ctx_, extra);  // owned by the context from here on
  }
  ERR_clear_error();  // the loop ends on "no start line"
  Bio key_bio = memory_bio(key_pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (!key || SSL_CTX_use_PrivateKey(ctx_, key) != 1 || SSL_CTX_check_private_key(ctx_) != 1) {
    EVP_PKEY_free(key);
    SSL_CTX_free(ctx_);
    throw Error("TLS: server_key is not a PEM private key matching server_cert: " + openssl_error());
  }
  EVP_PKEY_free(key);
  if (client_verify) {
    if (ca_pem.empty()) {
      SSL_CTX_free(ctx_);
      throw Error("TLS: client_verify needs custom_ca (the CA that signs client certificates)");
    }
    Bio ca_bio = memory_bio(ca_pem);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
    int added = 0;
    while (X509* ca = PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr)) {
      added += X509_STORE_add_cert(store, ca) == 1;
      X509_free(ca);
    }
    ERR_clear_error();
    if (added == 0) {
      SSL_CTX_free(ctx_);
      throw Error("TLS: custom_ca holds no PEM certificate");
    }
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

ssl_st* TlsContext::accept(int fd) const {
  SSL* ssl = SSL_new(ctx_);
  if (!ssl) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return ssl;
}

ssize_t tls_read(ssl_st* ssl, void* buf, size_t n) noexcept {
  errno = 0;
  const int r = SSL_read(ssl, buf, static_cast<int>(n));
  return r > 0 ? r : map_error(ssl, r);
}

ssize_t tls_write(ssl_st* ssl, const void* buf, size_t n) noexcept {
  errno = 0;
  const int r = SSL_write(ssl, buf, static_cast<int>(n));
  return r > 0 ? r : map_error(ssl, r);
}

void tls_close(ssl_st* ssl) noexcept {
  if (!ssl) return;
  SSL_shutdown(ssl);
  SSL_free(ssl);
  ERR_clear_error();
}

}  // namespace tickinfer::serving
