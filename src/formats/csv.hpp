#pragma once
// Numeric CSV tables: what `predict` reads and writes besides .npy.
//
// Reading rules:
//  * Fields are separated by ','; '\n' or "\r\n" ends a row; blank lines are skipped. Spaces
//    and tabs around a field are ignored. A field may be double-quoted ("" inside is a quote);
//    quoted fields may not span lines.
//  * Header: with CsvHeader::Auto the first non-blank row is a header when any of its fields is
//    not a number; a first row made only of numbers is data.
//  * Values are decimal or scientific floats; "nan", "inf", "infinity" (any case, optional sign)
//    are accepted as values (callers decide whether to allow them). Values are parsed as double
//    and narrowed to float; a finite value beyond float range is an error.
//  * Every row must have the same number of fields as the first row (header or data).
// Errors are tickinfer::Error naming the source, the 1-based line and column, and the text:
//   csv 'in.csv': line 7, column 3: bad number 'abc'
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::formats {

enum class CsvHeader { Auto, Present, Absent };

struct CsvTable {
  std::vector<std::string> header;  // column names; empty when the input had no header row
  size_t rows = 0;
  size_t cols = 0;
  std::vector<float> values;  // rows * cols, row-major
};

// Parses CSV text held in memory. `source` names it in error messages.
CsvTable parse_csv(std::string_view text, std::string_view source = "<memory>",
                   CsvHeader header = CsvHeader::Auto);
// Reads and parses `path`. Throws tickinfer::Error naming the path if it cannot be read.
CsvTable read_csv(const std::string& path, CsvHeader header = CsvHeader::Auto);

// CSV text for a rows x cols table, values in the shortest form that reads back to the same
// float ("nan", "inf", "-inf" for non-finite values). `header` is written first when non-empty
// and must then have cols names. Throws tickinfer::Error on size mismatches.
std::string format_csv(size_t rows, size_t cols, const std::vector<float>& values,
                       const std::vector<std::string>& header = {});
// Writes format_csv(...) to `path`. Throws tickinfer::Error naming the path on failure.
void write_csv(const std::string& path, size_t rows, size_t cols, const std::vector<float>& values,
               const std::vector<std::string>& header = {});

}  // namespace tickinfer::formats
