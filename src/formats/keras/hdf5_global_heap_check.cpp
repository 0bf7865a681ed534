#include "formats/keras/hdf5_global_heap_check.hpp"

#include <cstdint>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace {

uint64_t read_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

void check_global_heaps(const unsigned char* image, size_t size, const std::string& label) {
  // Layout (HDF5 file format spec, "Global Heap"): "GCOL", version 1, 3 reserved bytes, the
  // collection size (8-byte lengths, as every Keras/h5py file uses), then objects: index (2),
  // reference count (2), reserved (4), size (8), data padded to 8. Index 0 is the free space,
  // whose size covers its own header. Only signatures followed by a plausible header are
  // walked, so weight bytes that happen to spell "GCOL" are not mistaken for a heap.
  constexpr size_t kHeader = 16, kObjectHeader = 16, kMinCollection = 4096;
  for (size_t at = 0; at + kHeader <= size; ++at) {
    const void* hit = std::memchr(image + at, 'G', size - at);
    if (!hit) break;
    at = static_cast<const unsigned char*>(hit) - image;
    if (at + kHeader > size || std::memcmp(image + at, "GCOL", 4) != 0 || image[at + 4] != 1) continue;
    const uint64_t collection = read_le(image + at + 8, 8);
    if (collection < kMinCollection || collection > size - at) continue;
    const size_t end = at + collection;
    size_t p = at + kHeader;
    while (p + kObjectHeader <= end) {
      const uint64_t index = read_le(image + p, 2);
      const uint64_t object = read_le(image + p + 8, 8);
      const uint64_t need = index > 0 ? kObjectHeader + (object + 7) / 8 * 8 : object;
      if (need == 0 || need > end - p) {
        throw Error(label + ": corrupt HDF5 global heap at byte " + std::to_string(p) +
                    " (object " + std::to_string(index) + " of size " + std::to_string(object) +
                    "); refusing the file");
      }
      p += need;
    }
  }
}

}  // namespace tickinfer::formats
