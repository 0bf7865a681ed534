#pragma once
// A parser for the subset of the protobuf text format that TF Serving's config files use
// (ModelServerConfig, MonitoringConfig, BatchingParameters):
//
//   field: scalar          scalar = number | identifier (true, false, enum) | "string" | 'string'
//   field: [s1, s2]        repeated scalar in list form
//   field { ... }          message; `field: { ... }` and `field < ... >` are accepted too
//   # comment to end of line; fields may be separated by whitespace, ',' or ';'
//
// The parser is schema-less: it returns a tree of fields in file order, each with the line and
// column where it starts, and the typed accessors on TextField check what the schema expects.
// Every error is tickinfer::Error "SOURCE:LINE:COL: what is wrong". Nesting is limited to 64
// levels and input to 16 MiB, so hostile input cannot exhaust the stack.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving {

struct TextField {
  std::string name;
  int line = 0, col = 0;
  bool is_message = false;
  // Scalars: the token as written (strings unescaped); quoted tells strings from identifiers.
  std::string scalar;
  bool quoted = false;
  std::vector<TextField> children;  // when is_message

  // Typed reads; each throws tickinfer::Error "SOURCE:LINE:COL: field 'name' ..." on mismatch.
  std::string as_string(std::string_view source) const;
  int64_t as_int64(std::string_view source) const;
  bool as_bool(std::string_view source) const;
  void expect_message(std::string_view source) const;
  std::string where(std::string_view source) const;  // "SOURCE:LINE:COL"
};

// Parses `text` (the whole file); `source` names it in errors. The result is the top-level
// message's fields.
std::vector<TextField> parse_text_proto(std::string_view text, std::string_view source);

}  // namespace tickinfer::serving
