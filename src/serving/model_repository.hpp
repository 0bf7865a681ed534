#pragma once
// The versioned model repository, laid out as TF Serving lays it out: one folder per model
// (base_path), one child folder per version whose name parses as a non-negative int64
// ("00000123" is version 123; other entries are ignored).
//
// poll_once() rescans every base path and applies each model's version policy (latest{N},
// all{}, specific{versions}). A version that should serve is loaded, compiled and warmed in the
// polling thread first, and published only then (state AVAILABLE); a version that should no
// longer serve is unpublished only after every new version of that pass is available. Requests
// take the current snapshot (SnapshotCell below), so a request in flight keeps the version
// it started with alive until it finishes: a reload never fails or blocks a request.
//
// A version folder that fails to load (no model file, a half-written or corrupt file, a bad
// warmup file) is reported with state END and its error in the status, is not retried until
// its model file changes (size or mtime), and does not displace the versions already serving.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serving/metrics.hpp"
#include "serving/server_config.hpp"
#include "serving/servable.hpp"

namespace tickinfer::serving {

enum class VersionState : int { Unknown = 0, Start = 10, Loading = 20, Available = 30, Unloading = 40, End = 50 };
const char* version_state_name(VersionState s);

struct VersionStatus {
  int64_t version = 0;
  VersionState state = VersionState::Unknown;
  StatusCode error_code = StatusCode::Ok;
  std::string error_message;
};

struct ModelSnapshot {
  std::string name;
  std::map<std::string, int64_t, std::less<>> labels;  // transparent: found by string_view
  std::vector<VersionStatus> statuses;                 // every version known, ascending
  std::vector<std::shared_ptr<const Servable>> available;  // AVAILABLE, ascending by version
  ModelMetrics* metrics = nullptr;

  const Servable* latest() const { return available.empty() ? nullptr : available.back().get(); }
  std::shared_ptr<const Servable> find_version(int64_t v) const;
};

struct RepositorySnapshot {
  std::vector<ModelSnapshot> models;
  const ModelSnapshot* find(std::string_view name) const;
};

struct RepositoryOptions {
  size_t num_plans = 1;             // one per serving thread
  bool warmup = true;
  int warmup_iterations = 1;        // --num_request_iterations_for_warmup
  bool allow_labels_for_unavailable = false;
  std::string saved_model_tags = "serve";  // --saved_model_tags
  LoadOptions load;                 // --tflite_engine
  int load_threads = 0;             // --num_load_threads: versions loaded at once (0/1: one at a time)
  bool per_model_batching = false;  // --enable_per_model_batching_parameters
  bool method_name_check = false;   // --enable_signature_method_name_check
  std::string device = "cpu";       // --device
  std::string cuda_precision = "fp32";  // --cuda_precision
};

// The current snapshot, shared between the polling thread (store) and request threads (load).
// A load copies the shared_ptr (one reference-count increment) inside a spin section of a few
// instructions, taken and released with acquire/release ordering; a store swaps the pointer in
// the same section and drops the old snapshot outside it. No mutex, no syscall, no allocation.
// (std::atomic<std::shared_ptr> in libstdc++ 12 releases its internal lock with relaxed order
// after a load, which ThreadSanitizer rightly reports; this cell orders it properly.)
class SnapshotCell {
 public:
  std::shared_ptr<const RepositorySnapshot> load() const noexcept {
    lock();
    std::shared_ptr<const RepositorySnapshot> p = ptr_;
    unlock();
    return p;
  }
  void store(std::shared_ptr<const RepositorySnapshot> p) noexcept {
    lock();
    ptr_.swap(p);
    unlock();
  }  // the old snapshot (now in p) is released here, outside the section

 private:
  void lock() const noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void unlock() const noexcept { locked_.store(false, std::memory_order_release); }
  mutable std::atomic<bool> locked_{false};
  std::shared_ptr<const RepositorySnapshot> ptr_;
};

class ModelRepository {
 public:
  // Throws tickinfer::Error for a config it cannot serve (e.g. duplicate names).
  ModelRepository(std::vector<ModelConfig> models, RepositoryOptions options, Metrics* metrics);
  ~ModelRepository();
  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  // One scan + load/unload pass over every model. Never throws: problems go into the status.
  void poll_once();
  // A new model list (HandleReloadConfigRequest, a re-read --model_config_file): models kept by
  // name keep their loaded versions under their new base path, policy and labels; new ones are
  // added; missing ones are removed (their versions end). Then one pass, which loads what the
  // new list asks for before returning. Returns the added models with no version available
  // after it. Throws tickinfer::Error (nothing changed) for duplicate names.
  std::vector<std::string> reconfigure(std::vector<ModelConfig> models);
  // Polls every `seconds` (> 0) on a background thread until stop() or destruction.
  void start_polling(double seconds);
  void stop();

  std::shared_ptr<const RepositorySnapshot> snapshot() const { return snapshot_.load(); }
  // True when every configured model has at least one AVAILABLE version.
  bool ready() const;
  // Called (on the polling thread) after every poll pass with ready(); set before polling starts.
  void set_ready_listener(std::function<void(bool)> listener) { listener_ = std::move(listener); }

 private:
  struct Loaded {
    std::shared_ptr<const Servable> servable;
  };
  struct Failure {
    std::string signature;  // model file path + size + mtime when it failed
    std::string message;
  };
  struct ModelState {
    ModelConfig config;
    ModelMetrics* metrics = nullptr;
    std::map<int64_t, Loaded> loaded;
    std::map<int64_t, Failure> failed;
    std::map<int64_t, VersionState> ended;  // unloaded versions, reported as END
    std::string scan_error;
  };

  // One pass over one model: what its folder holds, what its policy asks for, what to load.
  struct LoadJob {
    int64_t version = 0;
    std::string dir, signature;
    std::shared_ptr<const Servable> servable;  // set by load_version, or
    std::string error;                         // why it failed
  };
  struct PassPlan {
    std::map<int64_t, std::string> present;  // version -> folder
    std::set<int64_t> aspired;
    std::vector<LoadJob> loads;
  };
  void poll_all();  // under poll_mutex_
  PassPlan plan_model(ModelState& m);
  void load_version(LoadJob& job) const;
  static void install(ModelState& m, LoadJob& job);
  static void unload_unaspired(ModelState& m, const PassPlan& plan);
  void publish();

  RepositoryOptions options_;
  Metrics* metrics_ = nullptr;
  std::vector<ModelState> models_;      // touched only under poll_mutex_
  std::mutex poll_mutex_;               // one poll pass at a time (never on the request path)
  SnapshotCell snapshot_;
  std::function<void(bool)> listener_;
  std::thread poller_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace tickinfer::serving
