// `tickinfer inspect MODEL`: what a model is made of (layers with their static cost, inputs and
// outputs) and what compile() makes of it (kernel set, arena size, plan steps).
#include <algorithm>
#include <map>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "formats/array_file.hpp"
#include "cli/commands.hpp"
#include "cli/load_warnings.hpp"
#include "cli/plan_options.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

using formats::shape_text;

namespace {

std::vector<int64_t> widen(const Shape& shape) { return {shape.begin(), shape.end()}; }

// Renders rows as aligned columns separated by two spaces; columns 0, 1 and 6 (names, class,
// lowered-from ops) left-aligned, the rest right-aligned (they are numbers or shapes).
std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c) line += "  ";
      line += (c < 2 || c == 6) ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

nlohmann::json tensors_json(const std::vector<TensorInfo>& tensors) {
  auto arr = nlohmann::json::array();
  for (const auto& t : tensors) arr.push_back({{"name", t.name}, {"shape", t.shape}});
  return arr;
}

std::string tensors_text(const std::vector<TensorInfo>& tensors) {
  std::string s;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) s += ", ";
    s += tensors[i].name + " " + shape_text(widen(tensors[i].shape));
  }
  return s;
}

// For SavedModel and ONNX files: the source ops each layer was lowered from, by layer name
// (empty for Keras files, whose layers are the graph's nodes one to one).
std::map<std::string, std::string> lowered_from(const Graph& g) {
  std::map<std::string, std::string> out;
  for (const auto& n : g.nodes) {
    if (!n.origin.empty()) out[n.name] = n.origin;
  }
  return out;
}

// Which engine runs the model, and for a TFLite file on the interpreter why it was not lifted
// to the graph engine (formats/tflite/tflite_graph_lift.hpp).
struct EngineInfo {
  std::string name;  // "graph" or "interpreter"
  std::string note;
};
EngineInfo engine_info(const Model& model, const LoadOptions& load) {
  if (!model.program()) {
    return {"graph", model.graph().source_format == "tflite" ? "lifted from the TFLite program" : ""};
  }
  if (model.program()->source_format != "tflite") return {"interpreter", ""};
  if (load.tflite_engine == TfliteEngine::Interpreter) return {"interpreter", "--tflite-engine interpreter"};
  return {"interpreter", "not lifted: " + formats::lift_tflite_program(*model.program()).refusal};
}

}  // namespace

ArgParser inspect_parser() {
  ArgParser p("inspect", "show a model's layers, cost and compiled plan");
  p.positional("MODEL",
               "a model: .keras (Keras 3), .h5 (Keras 2), .tflite, .onnx, .tkq file or a SavedModel directory");
  p.flag("json", "print one JSON object instead of tables");
  declare_plan_options(p);
  declare_load_options(p);
  return p;
}

// A pruned layer's share of exact zeros ("80%"); "" for a layer without weights.
std::string zero_share(int64_t zeros, int64_t params) {
  if (params == 0) return "";
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * static_cast<double>(zeros) / static_cast<double>(params));
  return b;
}

int run_inspect(const ArgParser& args) {
  const std::string& path = args.positional_value("MODEL");
  CompileOptions options = plan_options(args);
  const LoadOptions load = load_options(args);
  const Model model = Model::load(path, load);
  print_load_warnings(model, path);
  const ModelStats stats = model.stats();
  const auto inputs = model.inputs();
  const auto outputs = model.outputs();
  const auto origins = lowered_from(model.graph());
  const EngineInfo engine = engine_info(model, load);
  const bool stream_only = is_stream_only(model);
  default_mode_for(model, args, options);

  // A model that loads but cannot be compiled (e.g. stream mode over a Conv1D) is still worth
  // describing; the compile error is reported after the description, with exit code 1.
  std::string compile_error;
  std::optional<Plan> plan;
  try {
    plan.emplace(compile(model, options));
  } catch (const Error& e) {
    compile_error = e.what();
  }

  if (args.flag_set("json")) {
    nlohmann::json j;
    j["model"] = path;
    j["name"] = model.graph().name;
    j["format"] = model.graph().source_format;
    j["engine"] = engine.name;
    j["stream_only"] = stream_only;
    if (!engine.note.empty()) j["engine_note"] = engine.note;
    j["inputs"] = tensors_json(inputs);
    j["outputs"] = tensors_json(outputs);
    auto layers = nlohmann::json::array();
    for (const auto& l : stats.layers) {
      layers.push_back({{"name", l.name},
                        {"class", l.keras_class},
                        {"output_shape", l.output_shape},
                        {"params", l.params},
                        {"flops", l.flops},
                        {"weight_bytes", l.weight_bytes},
                        {"zero_weights", l.zero_weights}});
      if (auto it = origins.find(l.name); it != origins.end()) layers.back()["lowered_from"] = it->second;
    }
    j["layers"] = std::move(layers);
    j["totals"] = {{"params", stats.params},
                   {"flops", stats.flops},
                   {"weight_bytes", stats.weight_bytes},
                   {"zero_weights", stats.zero_weights}};
    if (plan) {
      j["plan"] = {{"isa", plan->isa()},
                   {"mode", mode_name(plan->mode())},
                   {"arena_bytes", plan->arena_bytes()},
                   {"steps", split_lines(plan->describe())}};
    } else {
      j["plan"] = {{"error", compile_error}};
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("model    %s\n", path.c_str());
    std::printf("name     %s (%s)\n", model.graph().name.c_str(), model.graph().source_format.c_str());
    std::printf("engine   %s%s%s\n", engine.name == "graph" ? "graph compiler" : "tensor-program interpreter",
                engine.note.empty() ? "" : ", ", engine.note.c_str());
    if (stream_only) std::printf("calls    one tick each, the state carried (quantized with --stream): stream mode only\n");
    std::printf("inputs   %s\n", tensors_text(inputs).c_str());
    std::printf("outputs  %s\n\n", tensors_text(outputs).c_str());
    std::vector<std::vector<std::string>> rows = {
        {"layer", "class", "output", "params", "zeros", "FLOPs", "weight bytes"}};
    if (!origins.empty()) rows[0].push_back("lowered from");
    for (const auto& l : stats.layers) {
      rows.push_back({l.name, l.keras_class, shape_text(widen(l.output_shape)), std::to_string(l.params),
                      zero_share(l.zero_weights, l.params), std::to_string(l.flops), std::to_string(l.weight_bytes)});
      if (!origins.empty()) {
        auto it = origins.find(l.name);
        rows.back().push_back(it == origins.end() ? "" : it->second);
      }
    }
    rows.push_back({"total", "", "", std::to_string(stats.params), zero_share(stats.zero_weights, stats.params),
                    std::to_string(stats.flops), std::to_string(stats.weight_bytes)});
    std::fputs(render_table(rows).c_str(), stdout);
    if (plan) {
      std::printf("\nplan     isa %s, mode %s, arena %zu bytes\n", plan->isa(), mode_name(plan->mode()),
                  plan->arena_bytes());
      for (const auto& line : split_lines(plan->describe())) std::printf("  %s\n", line.c_str());
    } else {
      std::printf("\nplan     not compiled (%s mode)\n", mode_name(options.mode));
    }
  }
  if (!plan) throw Error(compile_error);
  return 0;
}

}  // namespace tickinfer::cli
