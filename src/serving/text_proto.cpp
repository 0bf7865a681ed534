#include "serving/text_proto.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

constexpr size_t kMaxInput = size_t{16} << 20;
constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : t_(text), source_(source) {}

  std::vector<TextField> parse_all() {
    if (t_.size() > kMaxInput) fail("input larger than 16 MiB");
    std::vector<TextField> out;
    parse_fields(out, '\0', 0);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string(source_) + ":" + std::to_string(line_) + ":" + std::to_string(col_) +
                ": " + what);
  }

  bool eof() const { return pos_ >= t_.size(); }
  char peek() const { return eof() ? '\0' : t_[pos_]; }
  void advance() {
    if (t_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_space() {
    while (!eof()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '#') {
        while (!eof() && peek() != '\n') advance();
      } else {
        break;
      }
    }
  }

  static bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9') || c == '.'; }

  std::string identifier() {
    if (!ident_start(peek())) fail(std::string("expected a field name, found ") + describe_here());
    const size_t start = pos_;
    while (!eof() && ident_char(peek())) advance();
    return std::string(t_.substr(start, pos_ - start));
  }

  std::string describe_here() const {
    if (eof()) return "end of input";
    const char c = peek();
    if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
    return "byte 0x" + std::to_string(static_cast<unsigned char>(c));
  }

  // Fields until `close` ('}' or '>'), or end of input at depth 0.
  void parse_fields(std::vector<TextField>& out, char close, int depth) {
    if (depth > kMaxDepth) fail("messages nested deeper than 64 levels");
    for (;;) {
      skip_space();
      if (eof()) {
        if (close != '\0') fail(std::string("missing '") + close + "' before end of input");
        return;
      }
      if (peek() == close && close != '\0') {
        advance();
        return;
      }
      if (peek() == ',' || peek() == ';') {
        advance();
        continue;
      }
      TextField f;
      f.line = line_;
      f.col = col_;
      f.name = identifier();
      skip_space();
      bool colon = false;
      if (peek() == ':') {
        advance();
        colon = true;
        skip_space();
      }
      if (peek() == '{' || peek() == '<') {
        const char end = peek() == '{' ? '}' : '>';
        advance();
        f.is_message = true;
        parse_fields(f.children, end, depth + 1);
        out.push_back(std::move(f));
        continue;
      }
      if (!colon) fail("expected ':' or '{' after field '" + f.name + "', found " + describe_here());
      if (peek() == '[') {
        advance();
        skip_space();
        if (peek() == ']') {
          advance();
          continue;
        }
        for (;;) {
          TextField item;
          item.name = f.name;
          item.line = line_;
          item.col = col_;
          scalar(item);
          out.push_back(std::move(item));
          skip_space();
          if (peek() == ',') {
            advance();
            skip_space();
            continue;
          }
          if (peek() == ']') {
            advance();
            break;
          }
          fail("expected ',' or ']' in the list for '" + f.name + "', found " + describe_here());
        }
        continue;
      }
      scalar(f);
      out.push_back(std::move(f));
    }
  }

  void scalar(TextField& f) {
    if (eof()) fail("expected a value for '" + f.name + "', found end of input");
    const char c = peek();
    if (c == '"' || c == '\'') {
      f.quoted = true;
      // Adjacent string literals concatenate, as in protobuf.
      while (peek() == '"' || peek() == '\'') {
        f.scalar += quoted_string();
        skip_space();
      }
      return;
    }
    const size_t start = pos_;
    if (c == '-' || c == '+') advance();
    while (!eof()) {
      const char d = peek();
      if (ident_char(d) || d == '+' || d == '-') {
        advance();
      } else {
        break;
      }
    }
    if (pos_ == start) fail("expected a value for '" + f.name + "', found " + describe_here());
    f.scalar = std::string(t_.substr(start, pos_ - start));
  }

  std::string quoted_string() {
    const char q = peek();
    const int line = line_, col = col_;
    advance();
    std::string s;
    for (;;) {
      if (eof() || peek() == '\n') {
        line_ = line;
        col_ = col;
        fail("unterminated string");
      }
      char c = peek();
      advance();
      if (c == q) return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (eof()) fail("unterminated escape in string");
      c = peek();
      advance();
      switch (c) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case '\\': s += '\\'; break;
        case '\'': s += '\''; break;
        case '"': s += '"'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
          int v = c - '0';
          for (int k = 0; k < 2 && !eof() && peek() >= '0' && peek() <= '7'; ++k) {
            v = v * 8 + (peek() - '0');
            advance();
          }
          s += static_cast<char>(v & 0xff);
          break;
        }
        default:
          fail(std::string("unknown escape '\\") + c + "' in string");
      }
    }
  }

  std::string_view t_;
  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::string TextField::where(std::string_view source) const {
  return std::string(source) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

void TextField::expect_message(std::string_view source) const {
  if (!is_message) throw Error(where(source) + ": field '" + name + "' must be a message { ... }");
}

std::string TextField::as_string(std::string_view source) const {
  if (is_message || !quoted) {
    throw Error(where(source) + ": field '" + name + "' must be a quoted string");
  }
  return scalar;
}

int64_t TextField::as_int64(std::string_view source) const {
  if (is_message || quoted) throw Error(where(source) + ": field '" + name + "' must be an integer");
  int64_t v = 0;
  const char* b = scalar.data();
  const char* e = b + scalar.size();
  if (b != e && *b == '+') ++b;
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) {
    throw Error(where(source) + ": field '" + name + "': '" + scalar + "' is not a 64-bit integer");
  }
  return v;
}

bool TextField::as_bool(std::string_view source) const {
  if (!is_message && !quoted) {
    if (scalar == "true" || scalar == "True" || scalar == "t" || scalar == "1") return true;
    if (scalar == "false" || scalar == "False" || scalar == "f" || scalar == "0") return false;
  }
  throw Error(where(source) + ": field '" + name + "' must be true or false");
}

std::vector<TextField> parse_text_proto(std::string_view text, std::string_view source) {
  return Parser(text, source).parse_all();
}

}  // namespace tickinfer::serving
