#include "engine/device_options.hpp"

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer::engine {

int cuda_device_index(const std::string& device) {
  if (device.empty() || device == "cpu") return -1;
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.size() < 9 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos)
    return std::stoi(device.substr(5));
  throw Error("device '" + device + "': expected cpu, cuda or cuda:N");
}

std::string cuda_options_error(const CompileOptions& options) {
  const std::string& f = options.cuda_form;
  if (!f.empty() && f != "auto" && f != "graph" && f != "program")
    return "cuda_form '" + f + "': expected auto, graph or program";
  try {
    parse_cuda_precision(options.cuda_precision);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

LayerStorage StorageFormats::of(const std::string& layer) const {
  const auto it = by_layer.find(layer);
  return it == by_layer.end() ? all : it->second;
}

const char* storage_format_name(int32_t format) {
  return format == cuda::kWeightsFp16 ? "fp16" : format == cuda::kWeightsBf16 ? "bf16" : "fp32";
}

StorageFormats parse_cuda_precision(const std::string& spec) {
  auto one = [&](const std::string& name) {
    if (name == "fp32") return int32_t(cuda::kWeightsFp32);
    if (name == "fp16") return int32_t(cuda::kWeightsFp16);
    if (name == "bf16") return int32_t(cuda::kWeightsBf16);
    throw Error("--cuda-precision '" + spec + "': '" + name + "' is not fp32, fp16 or bf16");
  };
  auto format = [&](const std::string& text) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos) return LayerStorage{one(text), cuda::kWeightsFp32};
    return LayerStorage{one(text.substr(0, slash)), one(text.substr(slash + 1))};
  };
  StorageFormats f;
  size_t at = 0;
  for (bool first = true; at <= spec.size() && !spec.empty(); first = false) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, comma - at);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (!first) throw Error("--cuda-precision '" + spec + "': only the first item may omit LAYER=");
      f.all = format(item);
    } else {
      if (eq == 0) throw Error("--cuda-precision '" + spec + "': a LAYER=FORMAT item without the layer");
      f.by_layer[item.substr(0, eq)] = format(item.substr(eq + 1));
    }
    at = comma + 1;
  }
  return f;
}

std::string layer_storage_spec(const LayerStorage& l) {
  std::string s = storage_format_name(l.weights);
  if (l.activations != cuda::kWeightsFp32) s += std::string("/") + storage_format_name(l.activations);
  return s;
}

std::string cuda_precision_spec(const StorageFormats& f) {
  std::string s = layer_storage_spec(f.all);
  for (const auto& [layer, storage] : f.by_layer) s += "," + layer + "=" + layer_storage_spec(storage);
  return s;
}

}  // namespace tickinfer::engine
