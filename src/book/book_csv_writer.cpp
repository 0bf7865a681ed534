#include "book/book_csv_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::book {
namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kRowFixedBytes = 80;  // seq (20), ts (20), locate (5), symbol (8), commas
constexpr std::size_t kLevelBytes = 40;     // 2 commas, a price (10 + 1 + 4), shares (20)

std::size_t format_uint(std::uint64_t v, char* out) noexcept {
  char tmp[20];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace

std::size_t format_price4(std::uint32_t price, char* out) noexcept {
  std::size_t n = format_uint(price / 10000, out);
  out[n++] = '.';
  const std::uint32_t frac = price % 10000;
  out[n++] = static_cast<char>('0' + frac / 1000);
  out[n++] = static_cast<char>('0' + frac / 100 % 10);
  out[n++] = static_cast<char>('0' + frac / 10 % 10);
  out[n++] = static_cast<char>('0' + frac % 10);
  return n;
}

BookCsvWriter::BookCsvWriter(const std::string& path, std::size_t levels)
    : path_(path), levels_(levels), scratch_(levels) {
  if (levels == 0 || levels > 1000) throw Error("book CSV: levels must be in [1, 1000]");
  buffer_.resize(std::max(kBufferBytes, 2 * (kRowFixedBytes + 2 * levels * kLevelBytes)));
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw Error("cannot create CSV '" + path + "': " + std::strerror(errno));
  std::string header = "seq,timestamp_ns,locate,symbol";
  for (const char* side : {"bid", "ask"}) {
    for (std::size_t i = 1; i <= levels; ++i) {
      header += std::string(",") + side + "_px_" + std::to_string(i) + "," + side + "_qty_" +
                std::to_string(i);
    }
  }
  header += '\n';
  put(header.data(), header.size());
}

BookCsvWriter::~BookCsvWriter() {
  if (file_ == nullptr) return;
  if (used_ > 0) std::fwrite(buffer_.data(), 1, used_, file_);  // best effort; flush() reports
  std::fclose(file_);
}

void BookCsvWriter::put(const char* s, std::size_t n) {
  if (used_ + n > buffer_.size()) drain();
  if (n > buffer_.size()) {
    if (std::fwrite(s, 1, n, file_) != n) throw Error("writing CSV '" + path_ + "' failed");
    return;
  }
  std::memcpy(buffer_.data() + used_, s, n);
  used_ += n;
}

// Rows are written while books are being applied, where nothing may throw: a failed write is
// remembered, later rows are dropped, and flush() reports it.
void BookCsvWriter::drain() noexcept {
  if (used_ > 0 && error_.empty() && std::fwrite(buffer_.data(), 1, used_, file_) != used_) {
    error_ = "writing CSV '" + path_ + "' failed: " + std::strerror(errno);
  }
  used_ = 0;
}

void BookCsvWriter::flush() {
  drain();
  if (error_.empty() && std::fflush(file_) != 0) {
    error_ = "writing CSV '" + path_ + "' failed: " + std::strerror(errno);
  }
  if (!error_.empty()) throw Error(error_);
}

void BookCsvWriter::put_side(const Level* levels, std::size_t count) {
  char* p = buffer_.data() + used_;
  for (std::size_t i = 0; i < levels_; ++i) {
    *p++ = ',';
    if (i < count) p += format_price4(levels[i].price, p);
    *p++ = ',';
    if (i < count) p += format_uint(levels[i].shares, p);
  }
  used_ = static_cast<std::size_t>(p - buffer_.data());
}

void BookCsvWriter::row(const BookSet& books, std::uint64_t seq, std::uint64_t timestamp_ns,
                        std::uint16_t locate) noexcept {
  // The buffer holds at least two worst-case rows, so one drain always makes room.
  if (used_ + kRowFixedBytes + 2 * levels_ * kLevelBytes > buffer_.size()) drain();
  char* p = buffer_.data() + used_;
  p += format_uint(seq, p);
  *p++ = ',';
  p += format_uint(timestamp_ns, p);
  *p++ = ',';
  p += format_uint(locate, p);
  *p++ = ',';
  const std::string_view sym = books.symbol(locate);
  std::memcpy(p, sym.data(), std::min<std::size_t>(sym.size(), 8));
  p += std::min<std::size_t>(sym.size(), 8);
  used_ = static_cast<std::size_t>(p - buffer_.data());
  std::size_t n = books.top(locate, Side::Bid, scratch_.data(), levels_);
  put_side(scratch_.data(), n);
  n = books.top(locate, Side::Ask, scratch_.data(), levels_);
  put_side(scratch_.data(), n);
  buffer_[used_++] = '\n';
  ++rows_;
}

}  // namespace tickinfer::book
