#pragma once
// Typed access to a NodeDef's attrs with the op registry's defaults (SavedModels strip attrs that
// equal their default, so an absent attr means the default).
#include <cstdint>
#include <string>
#include <vector>

namespace tensorflow {
class NodeDef;
class AttrValue;
}

namespace tickinfer::formats {

const tensorflow::AttrValue* find_attr(const tensorflow::NodeDef& node, const std::string& name);
int64_t attr_int(const tensorflow::NodeDef& node, const std::string& name, int64_t fallback);  // i or type
float attr_float(const tensorflow::NodeDef& node, const std::string& name, float fallback);
bool attr_bool(const tensorflow::NodeDef& node, const std::string& name, bool fallback);
std::string attr_string(const tensorflow::NodeDef& node, const std::string& name, const std::string& fallback);
std::vector<int64_t> attr_ints(const tensorflow::NodeDef& node, const std::string& name);  // list(int); {} if absent
std::string attr_func(const tensorflow::NodeDef& node, const std::string& name);  // func name; "" if absent

}  // namespace tickinfer::formats
