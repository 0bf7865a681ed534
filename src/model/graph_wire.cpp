#include "model/graph_wire.hpp"

#include <cstring>
#include <type_traits>

#include "model/graph_fields.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

class Writer {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& v) {
    // Raw bytes only where every byte is the value's (no padding): a padded struct is visited
    // field by field instead (ActivationSpec), so one graph always encodes to the same bytes.
    static_assert(std::has_unique_object_representations_v<T> || std::is_floating_point_v<T>,
                  "a struct with padding: visit its fields (model/graph_fields.hpp)");
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void put(const ActivationSpec& a) {
    visit_activation_fields(a, [this](const auto& f) { put(f); });
  }
  void put(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(static_cast<uint64_t>(v.size()));
    if constexpr (std::is_trivially_copyable_v<T>) {
      static_assert(std::has_unique_object_representations_v<T> || std::is_floating_point_v<T>,
                    "a struct with padding: visit its fields (model/graph_fields.hpp)");
      if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    } else {
      for (const T& x : v) put(x);
    }
  }
  void put(const Weight& w) {
    visit_weight_fields(w, [this](const auto& f) { put(f); });
  }
  void put(const Node& n) {
    visit_node_fields(n, [this](const auto& f) { put(f); });
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void get(T& v) {
    need(sizeof(T));
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
  }
  void get(std::string& s) {
    const uint64_t n = count(1);
    s.assign(in_.data() + pos_, n);
    pos_ += n;
  }
  template <class T>
  void get(std::vector<T>& v) {
    const uint64_t n = count(std::is_trivially_copyable_v<T> ? sizeof(T) : 1);
    v.resize(n);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (n != 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));  // data() may be null when empty
      pos_ += n * sizeof(T);
    } else {
      for (T& x : v) get(x);
    }
  }
  void get(ActivationSpec& a) {
    visit_activation_fields(a, [this](auto& f) { get(f); });
  }
  void get(Weight& w) {
    visit_weight_fields(w, [this](auto& f) { get(f); });
  }
  void get(Node& n) {
    visit_node_fields(n, [this](auto& f) { get(f); });
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  // Reads an element count and checks that count * min_bytes more bytes exist.
  uint64_t count(size_t min_bytes) {
    uint64_t n = 0;
    get(n);
    if (n > (in_.size() - pos_) / min_bytes) throw Error("model graph encoding is truncated");
    return n;
  }
  void need(size_t n) const {
    if (in_.size() - pos_ < n) throw Error("model graph encoding is truncated");
  }
  const std::string& in_;
  size_t pos_ = 0;
};

}  // namespace

std::string encode_graph(const Graph& g) {
  Writer w;
  visit_graph_fields(g, [&w](const auto& f) { w.put(f); });
  return w.take();
}

Graph decode_graph(const std::string& bytes) {
  Reader r(bytes);
  Graph g;
  visit_graph_fields(g, [&r](auto& f) { r.get(f); });
  if (!r.done()) throw Error("model graph encoding has trailing bytes");
  return g;
}

}  // namespace tickinfer
