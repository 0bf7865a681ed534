#include "formats/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw Error("csv '" + std::string(source) + "': " + what);
}

[[noreturn]] void fail_at(std::string_view source, size_t line, size_t column, const std::string& what) {
  fail(source, "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits one line (without its line break) into fields, removing quotes. Throws on an
// unterminated quote or text after a closing quote.
std::vector<std::string> split_fields(std::string_view line, std::string_view source, size_t line_no) {
  std::vector<std::string> fields;
  size_t pos = 0;
  while (true) {
    const size_t column = fields.size() + 1;
    std::string field;
    // Skip leading blanks to see whether the field is quoted.
    size_t start = pos;
    while (start < line.size() && is_blank(line[start])) ++start;
    if (start < line.size() && line[start] == '"') {
      size_t i = start + 1;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += line[i++];
      }
      if (!closed) fail_at(source, line_no, column, "unterminated quoted field");
      while (i < line.size() && is_blank(line[i])) ++i;
      if (i < line.size() && line[i] != ',') fail_at(source, line_no, column, "text after a closing quote");
      pos = i;
    } else {
      size_t end = line.find(',', pos);
      if (end == std::string_view::npos) end = line.size();
      field = std::string(trim(line.substr(pos, end - pos)));
      pos = end;
    }
    fields.push_back(std::move(field));
    if (pos >= line.size()) break;
    ++pos;  // the comma
  }
  return fields;
}

enum class NumberStatus { Ok, NotANumber, OutOfRange };

// Parses a whole field as a float (see the header for the accepted forms).
NumberStatus parse_number(std::string_view text, float& out) {
  if (text.empty()) return NumberStatus::NotANumber;
  std::string_view body = text;
  if (body.front() == '+') {
    body.remove_prefix(1);
    if (body.empty() || body.front() == '-' || body.front() == '+') return NumberStatus::NotANumber;
  }
  double value = 0.0;
  const auto result = std::from_chars(body.data(), body.data() + body.size(), value);
  if (result.ec == std::errc::result_out_of_range) return NumberStatus::OutOfRange;
  if (result.ec != std::errc() || result.ptr != body.data() + body.size()) return NumberStatus::NotANumber;
  // Doubles from here up round to infinity as floats (FLT_MAX plus half an ulp; the tie goes to
  // the even neighbour, which is infinity).
  constexpr double kFloatOverflow = 0x1.ffffffp+127;
  if (std::isfinite(value) && std::fabs(value) >= kFloatOverflow) {
    return NumberStatus::OutOfRange;
  }
  out = static_cast<float>(value);
  return NumberStatus::Ok;
}

bool all_numbers(const std::vector<std::string>& fields) {
  float ignored;
  for (const auto& f : fields) {
    if (parse_number(f, ignored) != NumberStatus::Ok) return false;
  }
  return true;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

CsvTable parse_csv(std::string_view text, std::string_view source, CsvHeader header_mode) {
  CsvTable table;
  bool first_row = true;
  size_t width_line = 0;  // the line that fixed the row width, for error messages
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;

    auto fields = split_fields(line, source, line_no);
    if (first_row) {
      first_row = false;
      width_line = line_no;
      table.cols = fields.size();
      const bool is_header = header_mode == CsvHeader::Present ||
                             (header_mode == CsvHeader::Auto && !all_numbers(fields));
      if (is_header) {
        table.header = std::move(fields);
        continue;
      }
    }
    if (fields.size() != table.cols) {
      fail_at(source, line_no, std::min(fields.size(), table.cols) + 1,
              "row has " + std::to_string(fields.size()) + " columns, expected " +
                  std::to_string(table.cols) + " (as on line " + std::to_string(width_line) + ")");
    }
    for (size_t c = 0; c < fields.size(); ++c) {
      float v = 0.0f;
      switch (parse_number(fields[c], v)) {
        case NumberStatus::Ok:
          break;
        case NumberStatus::NotANumber:
          fail_at(source, line_no, c + 1,
                  fields[c].empty() ? std::string("empty value") : "bad number '" + fields[c] + "'");
        case NumberStatus::OutOfRange:
          fail_at(source, line_no, c + 1, "value '" + fields[c] + "' is out of float range");
      }
      table.values.push_back(v);
    }
    ++table.rows;
  }
  return table;
}

CsvTable read_csv(const std::string& path, CsvHeader header) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get())) fail(path, "read error");
  return parse_csv(text, path, header);
}

std::string format_csv(size_t rows, size_t cols, const std::vector<float>& values,
                       const std::vector<std::string>& header) {
  if (values.size() != rows * cols) {
    throw Error("csv write: " + std::to_string(rows) + " x " + std::to_string(cols) + " table but " +
                std::to_string(values.size()) + " values");
  }
  if (!header.empty() && header.size() != cols) {
    throw Error("csv write: " + std::to_string(header.size()) + " header names for " +
                std::to_string(cols) + " columns");
  }
  std::string out;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string& name = header[c];
    // Quote whatever the reader would otherwise split, trim or skip (an empty sole name would
    // read back as a blank line).
    const bool quote = name.empty() || name.find_first_of(",\"\r\n") != std::string::npos ||
                       name != trim(name);
    if (c) out += ',';
    if (!quote) {
      out += name;
      continue;
    }
    out += '"';
    for (char ch : name) {
      if (ch == '\n') throw Error("csv write: header name contains a line break");
      if (ch == '"') out += '"';
      out += ch;
    }
    out += '"';
  }
  if (!header.empty()) out += '\n';
  char buf[64];
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      if (c) out += ',';
      const float v = values[r * cols + c];
      if (std::isnan(v)) {
        out += "nan";
        continue;
      }
      const auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
      out.append(buf, res.ptr);
    }
    out += '\n';
  }
  return out;
}

void write_csv(const std::string& path, size_t rows, size_t cols, const std::vector<float>& values,
               const std::vector<std::string>& header) {
  const std::string text = format_csv(rows, cols, values, header);
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) fail(path, std::string("cannot create: ") + std::strerror(errno));
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size()) fail(path, "write failed");
  if (std::fclose(f.release()) != 0) fail(path, "write failed on close");
}

}  // namespace tickinfer::formats
