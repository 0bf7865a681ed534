#include "serving/config_file_watcher.hpp"

#include <chrono>
#include <fstream>
#include <sstream>

#include "serving/model_repository.hpp"
#include "serving/server_config.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

ConfigFileWatcher::ConfigFileWatcher(std::string path, int seconds, ModelRepository& repo, std::string applied,
                                     std::FILE* log)
    : path_(std::move(path)), repo_(repo), applied_(std::move(applied)), log_(log) {
  thread_ = std::thread([this, seconds] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_; })) {
      lock.unlock();
      check();
      lock.lock();
    }
  });
}

ConfigFileWatcher::~ConfigFileWatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ConfigFileWatcher::check() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    if (failed_ != "\x01unreadable" && log_)
      std::fprintf(log_, "tickinfer serve: --model_config_file '%s' cannot be read; the models keep serving\n",
                   path_.c_str());
    failed_ = "\x01unreadable";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text == applied_ || text == failed_) return false;
  try {
    const std::vector<std::string> unavailable = repo_.reconfigure(parse_model_server_config(text, path_));
    applied_ = text;
    failed_.clear();
    ++applied_count_;
    if (log_) {
      std::fprintf(log_, "tickinfer serve: --model_config_file '%s' changed: applied\n", path_.c_str());
      for (const auto& n : unavailable)
        std::fprintf(log_, "tickinfer serve: model '%s' has no version available yet (GetModelStatus says why)\n",
                     n.c_str());
    }
    return true;
  } catch (const Error& e) {
    failed_ = text;
    if (log_) std::fprintf(log_, "tickinfer serve: --model_config_file changed but is not applied: %s\n", e.what());
    return false;
  }
}

}  // namespace tickinfer::serving
