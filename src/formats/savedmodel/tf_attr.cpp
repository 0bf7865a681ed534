#include "formats/savedmodel/tf_attr.hpp"

#include "tensorflow/core/framework/node_def.pb.h"

namespace tickinfer::formats {

const tensorflow::AttrValue* find_attr(const tensorflow::NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it == node.attr().end() ? nullptr : &it->second;
}

int64_t attr_int(const tensorflow::NodeDef& node, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(node, name);
  if (a == nullptr) return fallback;
  if (a->value_case() == tensorflow::AttrValue::kI) return a->i();
  if (a->value_case() == tensorflow::AttrValue::kType) return a->type();
  return fallback;
}

float attr_float(const tensorflow::NodeDef& node, const std::string& name, float fallback) {
  const auto* a = find_attr(node, name);
  return a != nullptr && a->value_case() == tensorflow::AttrValue::kF ? a->f() : fallback;
}

bool attr_bool(const tensorflow::NodeDef& node, const std::string& name, bool fallback) {
  const auto* a = find_attr(node, name);
  return a != nullptr && a->value_case() == tensorflow::AttrValue::kB ? a->b() : fallback;
}

std::string attr_string(const tensorflow::NodeDef& node, const std::string& name, const std::string& fallback) {
  const auto* a = find_attr(node, name);
  return a != nullptr && a->value_case() == tensorflow::AttrValue::kS ? a->s() : fallback;
}

std::vector<int64_t> attr_ints(const tensorflow::NodeDef& node, const std::string& name) {
  const auto* a = find_attr(node, name);
  if (a == nullptr || a->value_case() != tensorflow::AttrValue::kList) return {};
  return {a->list().i().begin(), a->list().i().end()};
}

std::string attr_func(const tensorflow::NodeDef& node, const std::string& name) {
  const auto* a = find_attr(node, name);
  return a != nullptr && a->value_case() == tensorflow::AttrValue::kFunc ? a->func().name() : std::string();
}

}  // namespace tickinfer::formats
