#include "itch/day_file_source.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "tickinfer/error.hpp"

namespace tickinfer::itch::detail {
namespace {

class FileSource final : public ByteSource {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  std::size_t read(std::uint8_t* dst, std::size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR) continue;
      error_ = std::string("read error: ") + std::strerror(errno);
      return 0;
    }
  }

 private:
  int fd_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const std::uint8_t> bytes) : bytes_(bytes.begin(), bytes.end()) {}
  std::size_t read(std::uint8_t* dst, std::size_t n) override {
    const std::size_t k = std::min(n, bytes_.size() - at_);
    if (k > 0) std::memcpy(dst, bytes_.data() + at_, k);
    at_ += k;
    return k;
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

// Gives back the bytes peeked from `inner` first, then reads `inner` itself.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::unique_ptr<ByteSource> inner, const std::uint8_t* prefix, std::size_t n)
      : inner_(std::move(inner)), prefix_(prefix, prefix + n) {}
  std::size_t read(std::uint8_t* dst, std::size_t n) override {
    if (given_ < prefix_.size()) {
      const std::size_t k = std::min(n, prefix_.size() - given_);
      std::memcpy(dst, prefix_.data() + given_, k);
      given_ += k;
      return k;
    }
    const std::size_t got = inner_->read(dst, n);
    if (got == 0) error_ = inner_->error();
    return got;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::vector<std::uint8_t> prefix_;
  std::size_t given_ = 0;
};

// Streams gzip through zlib's inflate: never more than one input chunk and the caller's output
// buffer in memory, whatever the file's size.
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> raw, const std::uint8_t* prefix, std::size_t n, std::size_t chunk)
      : raw_(std::move(raw)), in_(std::max<std::size_t>(chunk, 2)) {
    std::memcpy(in_.data(), prefix, n);
    zs_.next_in = in_.data();
    zs_.avail_in = static_cast<uInt>(n);
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw Error("gzip: cannot initialise zlib");
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  std::size_t read(std::uint8_t* dst, std::size_t n) override {
    zs_.next_out = dst;
    zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    const uInt asked = zs_.avail_out;
    while (zs_.avail_out > 0 && !done_) {
      if (zs_.avail_in == 0 && !refill_input()) break;
      in_member_ = true;
      const uInt before_in = zs_.avail_in;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      consumed_ += before_in - zs_.avail_in;
      if (rc == Z_STREAM_END) {
        in_member_ = false;  // another member may follow; its header is checked when it comes
        inflateReset(&zs_);
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0) {
        continue;  // needs more input
      } else if (rc != Z_OK) {
        fail(zs_.msg ? zs_.msg : "inflate error " + std::to_string(rc));
      }
    }
    return asked - zs_.avail_out;
  }

 private:
  // Reads the next compressed chunk; at the end of the input, a member left open is an error.
  bool refill_input() {
    const std::size_t got = raw_->read(in_.data(), in_.size());
    if (got > 0) {
      zs_.next_in = in_.data();
      zs_.avail_in = static_cast<uInt>(got);
      return true;
    }
    if (!raw_->error().empty()) {
      fail(raw_->error());
    } else if (in_member_) {
      fail("the compressed data ends inside a gzip member (truncated file?)");
    }
    done_ = true;
    return false;
  }
  void fail(const std::string& why) {
    error_ = "corrupt gzip data near compressed byte " + std::to_string(consumed_) + ": " + why;
    done_ = true;
  }

  std::unique_ptr<ByteSource> raw_;
  std::vector<std::uint8_t> in_;
  z_stream zs_{};
  std::uint64_t consumed_ = 0;  // compressed bytes inflate has taken, all members together
  bool in_member_ = true;       // the magic was seen, so a member has begun
  bool done_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open day file '" + path + "': " + std::strerror(errno));
#ifdef POSIX_FADV_SEQUENTIAL
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint for read-ahead; failure is harmless
#endif
  return std::make_unique<FileSource>(fd);
}

std::unique_ptr<ByteSource> memory_source(std::span<const std::uint8_t> bytes) {
  return std::make_unique<MemorySource>(bytes);
}

std::unique_ptr<ByteSource> decompressing_source(std::unique_ptr<ByteSource> raw, std::size_t chunk_bytes) {
  std::uint8_t head[2];
  std::size_t n = 0;
  while (n < 2) {
    const std::size_t got = raw->read(head + n, 2 - n);
    if (got == 0) break;
    n += got;
  }
  if (n == 2 && head[0] == 0x1f && head[1] == 0x8b) {
    return std::make_unique<GzipSource>(std::move(raw), head, n, chunk_bytes);
  }
  return std::make_unique<PrefixedSource>(std::move(raw), head, n);
}

}  // namespace tickinfer::itch::detail
