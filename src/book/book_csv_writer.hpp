#pragma once
// The book as CSV, one row after each order message (A F E C X D U) once applied:
//   seq,timestamp_ns,locate,symbol,bid_px_1,bid_qty_1,...,bid_px_N,bid_qty_N,ask_px_1,...,ask_qty_N
// seq is the message's 1-based position in the day's stream (its MoldUDP64 sequence number),
// timestamp_ns the ITCH timestamp (ns since midnight), symbol without its padding, prices with
// exactly 4 decimals (Price(4)), quantities the shares summed over the level, empty fields for an
// absent level. Rows are formatted by hand into a large buffer: a day is tens of millions of rows,
// and the writer must not be what limits `tickinfer book --csv`.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "book/book_set.hpp"

namespace tickinfer::book {

class BookCsvWriter {
 public:
  // Creates/truncates path and writes the header line. Throws tickinfer::Error naming the path.
  BookCsvWriter(const std::string& path, std::size_t levels);
  ~BookCsvWriter();
  BookCsvWriter(const BookCsvWriter&) = delete;
  BookCsvWriter& operator=(const BookCsvWriter&) = delete;

  // One row for locate's book as it is now. Never throws: a failed write is kept for flush().
  void row(const BookSet& books, std::uint64_t seq, std::uint64_t timestamp_ns, std::uint16_t locate) noexcept;
  // Writes what is buffered; throws tickinfer::Error if this or any earlier write failed.
  void flush();
  std::uint64_t rows() const noexcept { return rows_; }

 private:
  void put(const char* s, std::size_t n);
  void drain() noexcept;
  void put_side(const Level* levels, std::size_t count);

  std::FILE* file_ = nullptr;
  std::string path_;
  std::size_t levels_;
  std::vector<Level> scratch_;
  std::vector<char> buffer_;
  std::size_t used_ = 0;
  std::uint64_t rows_ = 0;
  std::string error_;  // the first failed write
};

// Price(4) as text with exactly four decimals ("123.4500"); returns the characters written (<= 15).
std::size_t format_price4(std::uint32_t price, char* out) noexcept;

}  // namespace tickinfer::book
