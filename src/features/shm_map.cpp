#include "features/shm_map.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::features {

void shm_fail(const char* kind, const std::string& name, const std::string& what) {
  throw Error(std::string(kind) + " '" + name + "': " + what + ": " + std::strerror(errno));
}

ShmMapping map_shm_readonly(const char* kind, const std::string& name, const std::string& absent_hint,
                            std::size_t min_bytes) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) shm_fail(kind, name, "shm_open (" + absent_hint + ")");
  struct stat st{};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    shm_fail(kind, name, "fstat");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < min_bytes) {
    close(fd);
    throw Error(std::string(kind) + " '" + name + "': too small to hold a header (" + std::to_string(size) + " bytes)");
  }
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) shm_fail(kind, name, "mmap");
  return ShmMapping(base, size);
}

}  // namespace tickinfer::features
