#include "serving/model_repository.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>

#include "serving/warmup.hpp"
#include "tickinfer/error.hpp"

namespace fs = std::filesystem;

namespace tickinfer::serving {

const char* version_state_name(VersionState s) {
  switch (s) {
    case VersionState::Unknown: return "UNKNOWN";
    case VersionState::Start: return "START";
    case VersionState::Loading: return "LOADING";
    case VersionState::Available: return "AVAILABLE";
    case VersionState::Unloading: return "UNLOADING";
    case VersionState::End: return "END";
  }
  return "UNKNOWN";
}

std::shared_ptr<const Servable> ModelSnapshot::find_version(int64_t v) const {
  for (const auto& s : available) {
    if (s->version() == v) return s;
  }
  return nullptr;
}

const ModelSnapshot* RepositorySnapshot::find(std::string_view name) const {
  for (const auto& m : models) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

namespace {

// absl::SimpleAtoi-like: optional leading '+', digits only, fits int64, >= 0.
bool parse_version(const std::string& name, int64_t& v) {
  const char* b = name.data();
  const char* e = b + name.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  for (const char* p = b; p != e; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  const auto r = std::from_chars(b, e, v);
  return r.ec == std::errc() && r.ptr == e;
}

// What identifies the bytes a load would read: changes when the file is rewritten.
std::string signature_of(const std::string& version_dir) {
  std::error_code ec;
  std::string sig;
  for (const auto& e : fs::recursive_directory_iterator(version_dir, ec)) {
    std::error_code ec2;
    if (!e.is_regular_file(ec2)) continue;
    const auto size = e.file_size(ec2);
    const auto mtime = e.last_write_time(ec2).time_since_epoch().count();
    sig += e.path().string() + ":" + std::to_string(size) + ":" + std::to_string(mtime) + ";";
  }
  return sig;
}

}  // namespace

ModelRepository::ModelRepository(std::vector<ModelConfig> models, RepositoryOptions options,
                                 Metrics* metrics)
    : options_(options), metrics_(metrics) {
  std::set<std::string> names;
  for (auto& c : models) {
    if (!names.insert(c.name).second) throw Error("model '" + c.name + "' configured twice");
    ModelState m;
    m.metrics = metrics ? &metrics->for_model(c.name) : nullptr;
    m.config = std::move(c);
    models_.push_back(std::move(m));
  }
  publish();
}

ModelRepository::~ModelRepository() { stop(); }

void ModelRepository::poll_once() {
  std::lock_guard<std::mutex> lock(poll_mutex_);
  poll_all();
}

std::vector<std::string> ModelRepository::reconfigure(std::vector<ModelConfig> models) {
  std::set<std::string> names;
  for (const auto& c : models)
    if (!names.insert(c.name).second) throw Error("model '" + c.name + "' configured more than once");
  std::lock_guard<std::mutex> lock(poll_mutex_);
  for (const auto& old : models_)  // removed: its gauge says 0 versions from now on
    if (!names.count(old.config.name) && old.metrics) old.metrics->versions_available.store(0);
  std::vector<ModelState> next;
  std::vector<std::string> added;
  for (auto& c : models) {
    auto it = std::find_if(models_.begin(), models_.end(), [&](const ModelState& m) { return m.config.name == c.name; });
    if (it != models_.end()) {
      // Kept: its versions stay loaded; the new base path, policy and labels apply from this pass.
      ModelState m = std::move(*it);
      m.config = std::move(c);
      next.push_back(std::move(m));
    } else {
      ModelState m;
      m.metrics = metrics_ ? &metrics_->add_model(c.name) : nullptr;
      added.push_back(c.name);
      m.config = std::move(c);
      next.push_back(std::move(m));
    }
  }
  // A removed model's versions are released with the old states here; a request in flight
  // holds its snapshot (and so its servable) until it finishes.
  models_ = std::move(next);
  poll_all();
  std::vector<std::string> unavailable;
  for (const auto& name : added)
    for (const auto& m : models_)
      if (m.config.name == name && m.loaded.empty()) unavailable.push_back(name);
  return unavailable;
}

namespace {
// Runs jobs[i]() for every i on up to `threads` threads (0 or 1: here, one after another).
void run_jobs(std::vector<std::function<void()>>& jobs, int threads) {
  if (threads <= 1 || jobs.size() <= 1) {
    for (auto& j : jobs) j();
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  const size_t n = std::min<size_t>(static_cast<size_t>(threads), jobs.size());
  for (size_t t = 0; t < n; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < jobs.size();) jobs[i]();
    });
  for (auto& t : pool) t.join();
}
}  // namespace

// One pass: every model's scan and aspired versions, then the loads (on up to num_load_threads
// threads at once; one at a time by default, each published as soon as it is warm), then the
// unloads, which wait for every load of the pass.
void ModelRepository::poll_all() {
  std::vector<PassPlan> plans(models_.size());
  for (size_t i = 0; i < models_.size(); ++i) plans[i] = plan_model(models_[i]);
  if (options_.load_threads <= 1) {
    for (size_t i = 0; i < models_.size(); ++i)
      for (auto& job : plans[i].loads) {
        load_version(job);
        install(models_[i], job);
        publish();
      }
  } else {
    std::vector<std::function<void()>> jobs;
    for (auto& p : plans)
      for (auto& job : p.loads) jobs.emplace_back([this, &job] { load_version(job); });
    run_jobs(jobs, options_.load_threads);
    for (size_t i = 0; i < models_.size(); ++i)
      for (auto& job : plans[i].loads) install(models_[i], job);
    publish();
  }
  for (size_t i = 0; i < models_.size(); ++i) unload_unaspired(models_[i], plans[i]);
  publish();
  if (listener_) listener_(ready());
}

ModelRepository::PassPlan ModelRepository::plan_model(ModelState& m) {
  const ModelConfig& c = m.config;
  PassPlan plan;
  std::error_code ec;
  std::map<int64_t, std::string>& present = plan.present;  // version -> folder
  m.scan_error.clear();
  if (!fs::is_directory(c.base_path, ec)) {
    m.scan_error = "base path '" + c.base_path + "' of model '" + c.name + "' is not a directory";
  } else {
    for (const auto& e : fs::directory_iterator(c.base_path, ec)) {
      std::error_code ec2;
      if (!e.is_directory(ec2)) continue;
      int64_t v = 0;
      if (parse_version(e.path().filename().string(), v)) present[v] = e.path().string();
    }
    if (ec) m.scan_error = "cannot list '" + c.base_path + "': " + ec.message();
  }
  // A failure is forgotten when the folder disappears or its files change (then it is retried).
  for (auto it = m.failed.begin(); it != m.failed.end();) {
    const auto p = present.find(it->first);
    if (p == present.end() || signature_of(p->second) != it->second.signature) it = m.failed.erase(it);
    else ++it;
  }
  // Candidates: present versions that have not failed with their current contents.
  std::vector<int64_t> candidates;
  for (const auto& [v, dir] : present) {
    if (!m.failed.count(v)) candidates.push_back(v);
  }
  std::set<int64_t>& aspired = plan.aspired;
  switch (c.policy.kind) {
    case VersionPolicy::Kind::Latest: {
      const size_t n = static_cast<size_t>(c.policy.num_versions);
      for (size_t i = 0; i < candidates.size() && i < n; ++i) aspired.insert(candidates[candidates.size() - 1 - i]);
      break;
    }
    case VersionPolicy::Kind::All:
      aspired.insert(candidates.begin(), candidates.end());
      break;
    case VersionPolicy::Kind::Specific:
      for (int64_t v : c.policy.versions) {
        if (present.count(v) && !m.failed.count(v)) aspired.insert(v);
      }
      break;
  }
  for (int64_t v : aspired)
    if (!m.loaded.count(v)) plan.loads.push_back(LoadJob{v, present[v], signature_of(present[v]), nullptr, ""});
  return plan;
}

// A version loaded, compiled and warmed: no repository state is touched (several run at once).
void ModelRepository::load_version(LoadJob& job) const {
  try {
    auto s = Servable::load(job.dir, job.version, ServableOptions{options_.num_plans, options_.saved_model_tags, options_.per_model_batching,
                                                                   options_.method_name_check, options_.load, options_.device,
                                                                   options_.cuda_precision});
    if (options_.warmup) warm_up(*s, job.dir, options_.warmup_iterations);
    job.servable = std::move(s);
  } catch (const std::exception& e) {
    job.error = e.what();
  }
}

void ModelRepository::install(ModelState& m, LoadJob& job) {
  if (job.servable) {
    m.loaded[job.version] = Loaded{std::move(job.servable)};
    m.ended.erase(job.version);
  } else {
    m.failed[job.version] = Failure{job.signature, job.error};
  }
}

void ModelRepository::unload_unaspired(ModelState& m, const PassPlan& plan) {
  for (auto it = m.loaded.begin(); it != m.loaded.end();) {
    if (plan.aspired.count(it->first)) {
      ++it;
      continue;
    }
    // Keep serving an old version when nothing newer could be loaded in its place: only
    // unload when at least one aspired version is available (availability preserving).
    bool other_available = false;
    for (const auto& [v, l] : m.loaded) {
      if (plan.aspired.count(v)) other_available = true;
    }
    if (!other_available && plan.present.count(it->first)) {
      ++it;
      continue;
    }
    m.ended[it->first] = VersionState::End;
    it = m.loaded.erase(it);
  }
}

void ModelRepository::publish() {
  auto snap = std::make_shared<RepositorySnapshot>();
  for (const auto& m : models_) {
    ModelSnapshot s;
    s.name = m.config.name;
    s.metrics = m.metrics;
    std::map<int64_t, VersionStatus> st;
    for (const auto& [v, state] : m.ended) st[v] = VersionStatus{v, VersionState::End, StatusCode::Ok, ""};
    for (const auto& [v, f] : m.failed) {
      st[v] = VersionStatus{v, VersionState::End, StatusCode::Unknown, f.message};
    }
    for (const auto& [v, l] : m.loaded) {
      st[v] = VersionStatus{v, VersionState::Available, StatusCode::Ok, ""};
      s.available.push_back(l.servable);
    }
    for (auto& [v, x] : st) s.statuses.push_back(std::move(x));
    for (const auto& [label, v] : m.config.labels) {
      if (options_.allow_labels_for_unavailable || m.loaded.count(v)) s.labels[label] = v;
    }
    if (m.metrics) m.metrics->versions_available.store(static_cast<int64_t>(m.loaded.size()));
    snap->models.push_back(std::move(s));
  }
  snapshot_.store(std::move(snap));
}

bool ModelRepository::ready() const {
  const auto s = snapshot();
  for (const auto& m : s->models) {
    if (m.available.empty()) return false;
  }
  return true;
}

void ModelRepository::start_polling(double seconds) {
  stop();
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = false;
  }
  const auto period = std::chrono::duration<double>(seconds);
  poller_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    while (!stop_cv_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      poll_once();
      lock.lock();
    }
  });
}

void ModelRepository::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

}  // namespace tickinfer::serving
