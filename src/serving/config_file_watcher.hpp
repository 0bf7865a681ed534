#pragma once
// --model_config_file_poll_wait_seconds: the model config file re-read every N seconds, as
// tensorflow_model_server re-reads it. When its bytes changed and they parse, the repository is
// reconfigured with the new list (added models load, removed ones end, kept ones keep their
// versions and take the new policy and labels); when they do not parse, the models keep serving
// as they were and the error is logged once per distinct content. Never on a request path.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace tickinfer::serving {

class ModelRepository;

class ConfigFileWatcher {
 public:
  // `applied`: the file's content the server started with (not applied again).
  ConfigFileWatcher(std::string path, int seconds, ModelRepository& repo, std::string applied, std::FILE* log);
  ~ConfigFileWatcher();  // stops and joins
  ConfigFileWatcher(const ConfigFileWatcher&) = delete;
  ConfigFileWatcher& operator=(const ConfigFileWatcher&) = delete;

  // One check now (tests, and the thread's each period): true when a new config was applied.
  bool check();
  unsigned applied_count() const { return applied_count_; }

 private:
  std::string path_;
  ModelRepository& repo_;
  std::string applied_, failed_;  // the last content applied, the last that failed
  unsigned applied_count_ = 0;
  std::FILE* log_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tickinfer::serving
