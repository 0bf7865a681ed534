// Keras' own naming rule for the weight paths of a `.keras` file (keras_config.hpp).
#include <cctype>
#include <string>

#include "formats/keras/keras_config.hpp"

namespace tickinfer::formats {

std::string keras_snake_case(const std::string& class_name) {
  // Mirrors keras.src.utils.naming.to_snake_case:
  //   drop \W; "(.)([A-Z][a-z]+)" -> "\1_\2"; "([a-z])([A-Z])" -> "\1_\2"; lower-case.
  auto is_upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto is_lower = [](char c) { return c >= 'a' && c <= 'z'; };
  std::string word;
  for (char c : class_name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') word += c;
  }
  std::string pass1;
  for (size_t i = 0; i < word.size();) {
    if (i + 2 < word.size() && is_upper(word[i + 1]) && is_lower(word[i + 2])) {
      pass1 += word[i];
      pass1 += '_';
      pass1 += word[i + 1];
      i += 2;
      while (i < word.size() && is_lower(word[i])) pass1 += word[i++];
    } else {
      pass1 += word[i++];
    }
  }
  std::string pass2;
  for (size_t i = 0; i < pass1.size();) {
    if (i + 1 < pass1.size() && is_lower(pass1[i]) && is_upper(pass1[i + 1])) {
      pass2 += pass1[i];
      pass2 += '_';
      pass2 += pass1[i + 1];
      i += 2;
    } else {
      pass2 += pass1[i++];
    }
  }
  for (char& c : pass2) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return pass2;
}

}  // namespace tickinfer::formats
