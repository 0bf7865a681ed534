#pragma once
// What the shared-memory feature store and ring have in common: their payload is 8-byte
// lock-free atomic words (address-free, so valid across processes, and race-free to read while
// the writer writes), doubles travel as their bits, and names as NUL-padded 64-byte runs of
// words. A name longer than 63 bytes keeps its first 63.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tickinfer::features::shm {

using Word = std::atomic<std::uint64_t>;
static_assert(Word::is_always_lock_free, "shared-memory words must be lock-free atomics");

inline constexpr std::size_t kNameWords = 8;

inline Word* words(void* base) { return static_cast<Word*>(base); }

inline std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double dbl(std::uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

inline void store_name(Word* w, const std::string& name) {
  for (std::size_t k = 0; k < kNameWords; ++k) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < 8; ++b) {
      const std::size_t i = k * 8 + b;
      if (i < name.size() && i < kNameWords * 8 - 1) v |= std::uint64_t{static_cast<unsigned char>(name[i])} << (8 * b);
    }
    w[k].store(v, std::memory_order_relaxed);
  }
}

inline std::string load_name(const Word* w) {
  std::string s;
  for (std::size_t k = 0; k < kNameWords; ++k) {
    const std::uint64_t v = w[k].load(std::memory_order_relaxed);
    for (std::size_t b = 0; b < 8; ++b) {
      const char c = static_cast<char>((v >> (8 * b)) & 0xff);
      if (c == 0) return s;
      s.push_back(c);
    }
  }
  return s;
}

}  // namespace tickinfer::features::shm
