#pragma once
// TFLite builtin operator names for error messages and inspect output.
#include <string>

namespace tickinfer::formats {

// The upstream enum name ("FULLY_CONNECTED", "WHILE"), or nullptr for a code this table does
// not know (newer schema).
const char* tflite_builtin_name(int code);
// The name, or "builtin op <code>" when unknown.
std::string tflite_builtin_label(int code);

}  // namespace tickinfer::formats
