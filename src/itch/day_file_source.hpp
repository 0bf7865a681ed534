#pragma once
// Where a day file's bytes come from: a file descriptor, a copy of a memory buffer, and a gzip
// inflater over either. The reader asks for a chunk at a time, so the virtual call here is paid
// once per chunk (1 MiB by default), never per record.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tickinfer::itch::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `dst` and returns how many; 0 means the end, or an error when
  // error() is then non-empty. Short counts are normal and say nothing about the end.
  virtual std::size_t read(std::uint8_t* dst, std::size_t n) = 0;
  const std::string& error() const noexcept { return error_; }

 protected:
  std::string error_;
};

// The file at `path`, read with read(2). Throws tickinfer::Error if it cannot be opened.
std::unique_ptr<ByteSource> open_file_source(const std::string& path);

// A private copy of `bytes`.
std::unique_ptr<ByteSource> memory_source(std::span<const std::uint8_t> bytes);

// The day's uncompressed bytes: if `raw` starts with the gzip magic 1f 8b, a streaming inflater
// over it (input read `chunk_bytes` at a time; concatenated gzip members are read one after the
// other, as gzip(1) does), else `raw` itself. Peeks at the first two bytes, which the returned
// source gives back.
std::unique_ptr<ByteSource> decompressing_source(std::unique_ptr<ByteSource> raw, std::size_t chunk_bytes);

}  // namespace tickinfer::itch::detail
