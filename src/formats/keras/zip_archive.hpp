#pragma once
// Read-only view of a ZIP archive held in memory (a Keras 3 .keras file), via libzip.
// Stored and deflate entries are supported. Errors are tickinfer::Error naming the label and entry.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

struct zip;  // libzip's archive handle (zip_t)

namespace tickinfer::formats {

// Largest entry read into memory.
inline constexpr uint64_t kMaxZipEntryBytes = uint64_t{2} << 30;

class ZipArchive {
 public:
  // `data` must outlive the archive (libzip reads it in place). Throws Error
  // "<label>: not a readable ZIP archive (...)".
  ZipArchive(const void* data, size_t size, std::string label);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  bool has(const std::string& name) const;

  // The whole content of entry `name`, or nullopt if there is no such entry. Throws if the entry is
  // larger than `max_bytes` (at most kMaxZipEntryBytes), cannot be decompressed, or yields a
  // different number of bytes than its directory record declares.
  std::optional<std::string> read(const std::string& name, uint64_t max_bytes) const;

 private:
  std::string label_;
  ::zip* archive_ = nullptr;
};

}  // namespace tickinfer::formats
