#include "formats/keras/zip_archive.hpp"

#include <zip.h>

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

ZipArchive::ZipArchive(const void* data, size_t size, std::string label) : label_(std::move(label)) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data, size, /*freep=*/0, &error);
  if (source == nullptr) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(label_ + ": not a readable ZIP archive (" + why + ")");
  }
  archive_ = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (archive_ == nullptr) {
    zip_source_free(source);  // still ours when opening fails
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(label_ + ": not a readable ZIP archive (" + why + ")");
  }
  zip_error_fini(&error);
}

ZipArchive::~ZipArchive() {
  if (archive_ != nullptr) zip_discard(archive_);  // read-only: nothing to write back
}

bool ZipArchive::has(const std::string& name) const {
  return zip_name_locate(archive_, name.c_str(), 0) >= 0;
}

std::optional<std::string> ZipArchive::read(const std::string& name, uint64_t max_bytes) const {
  const std::string where = label_ + ": entry '" + name + "'";
  zip_int64_t index = zip_name_locate(archive_, name.c_str(), 0);
  if (index < 0) return std::nullopt;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index), 0, &st) != 0 ||
      (st.valid & ZIP_STAT_SIZE) == 0) {
    throw Error(where + ": cannot read its directory record");
  }
  if (st.size > std::min(max_bytes, kMaxZipEntryBytes)) {
    throw Error(where + ": " + std::to_string(st.size) + " bytes is larger than the limit of " +
                std::to_string(std::min(max_bytes, kMaxZipEntryBytes)));
  }
  zip_file_t* file = zip_fopen_index(archive_, static_cast<zip_uint64_t>(index), 0);
  if (file == nullptr) throw Error(where + ": cannot be opened (" + zip_strerror(archive_) + ")");
  std::string content(static_cast<size_t>(st.size), '\0');
  zip_uint64_t done = 0;
  bool failed = false;
  while (done < st.size) {
    zip_int64_t got = zip_fread(file, content.data() + done, st.size - done);
    if (got <= 0) {
      failed = true;
      break;
    }
    done += static_cast<zip_uint64_t>(got);
  }
  // One more byte must not exist: an entry longer than declared is corrupt.
  char extra;
  if (!failed && zip_fread(file, &extra, 1) != 0) failed = true;
  std::string why = failed ? zip_file_strerror(file) : "";
  if (zip_fclose(file) != 0 && !failed) {  // e.g. a CRC mismatch noticed at the end
    failed = true;
    why = "checksum or decompression error";
  }
  if (failed) {
    throw Error(where + ": read " + std::to_string(done) + " of " + std::to_string(st.size) +
                " bytes (" + why + ")");
  }
  return content;
}

}  // namespace tickinfer::formats
