// What marks a directory as a SavedModel, apart from the protobuf reader (saved_model.cpp): a
// build without the protobuf formats (TICKINFER_PROTOBUF_FORMATS=OFF) still recognises one and
// says why it cannot load it.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/savedmodel/saved_model.hpp"

namespace tickinfer::formats {

namespace fs = std::filesystem;

bool is_saved_model_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && (fs::exists(fs::path(path) / "saved_model.pb", ec) || fs::exists(fs::path(path) / "saved_model.pbtxt", ec));
}

std::string not_a_saved_model_message(const std::string& dir) {
  std::string msg = dir + ": is a directory but not a SavedModel (no saved_model.pb)";
  std::vector<std::string> versions;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && versions.size() < 8; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && is_saved_model_dir(it->path().string())) versions.push_back(name);
  }
  std::sort(versions.begin(), versions.end());
  if (!versions.empty()) {
    msg += "; it holds the version folder(s)";
    for (const auto& v : versions) msg += " " + v;
    msg += " of a TensorFlow Serving base path: give one of them";
  }
  return msg;
}

}  // namespace tickinfer::formats
