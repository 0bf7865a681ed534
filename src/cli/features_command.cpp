// `tickinfer features SPEC --input TICKS --output OUT`: runs a feature specification over a file
// of ticks (the batch path of the live pipeline: same code, same definitions) and writes the
// feature matrix for research and training sets. With --model, first checks that the model's
// feature signature (features.toml beside it) and input width match SPEC.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/capture_tick_source.hpp"
#include "pipeline/itch_book_ticks.hpp"
#include "cli/commands.hpp"
#include "cli/itch_options.hpp"
#include "cli/plan_options.hpp"
#include "features/batch.hpp"
#include "features/signature.hpp"
#include "features/tick_source.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

using pipeline::CaptureTickSource;
namespace {

std::string lower_extension(const std::string& path) {
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return "";
  std::string e = path.substr(dot + 1);
  for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

// The tick source for a file, by extension. Readers of other formats (the feed's capture files)
// are added here: one more branch returning a features::TickSource.
std::unique_ptr<features::TickSource> make_tick_source(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == "csv") return features::CsvTickSource::open(path);
  if (ext == "cap") {
    auto src = CaptureTickSource::open(path);
    const auto& st = src->stats();
    std::fprintf(stderr,
                 "capture %s: %llu records, %llu messages in sequence order, %llu A/B duplicates dropped, "
                 "%llu lost in %llu ranges, %llu bad packets, %llu undecodable, %llu corrupt records%s\n",
                 path.c_str(), static_cast<unsigned long long>(st.records),
                 static_cast<unsigned long long>(st.delivered), static_cast<unsigned long long>(st.duplicates),
                 static_cast<unsigned long long>(st.lost), static_cast<unsigned long long>(st.lost_ranges),
                 static_cast<unsigned long long>(st.bad_packets), static_cast<unsigned long long>(st.undecodable),
                 static_cast<unsigned long long>(st.corrupt_records), st.truncated_tail ? ", truncated tail" : "");
    return src;
  }
  throw Error("ticks '" + path + "': unsupported tick file type '." + ext +
              "' (expected .csv, .cap, or an ITCH 5.0 day file or capture with --symbols)");
}

// An ITCH 5.0 day file (raw or gzip) or capture through the full-depth books: the spec's
// instrument i + 1 is the i-th of --symbols.
features::FeatureMatrix compute_itch_features(const features::FeatureSpec& spec, const ArgParser& args) {
  const std::string path = args.value("input");
  pipeline::ItchBookTickConfig cfg;
  for (const std::string& v : args.values("symbols"))
    for (std::string& s : split_symbol_list(v)) cfg.symbols.push_back(std::move(s));
  if (cfg.symbols.empty()) throw UsageError("--symbols A,B,...: name the symbols (instrument i + 1 is the i-th)");
  const std::optional<itch::Date> date = trading_date(args, path);
  if (!date) throw UsageError("--date YYYY-MM-DD is required: the file name does not carry the trading date");
  cfg.date = *date;
  cfg.depth = spec.book_depth();
  pipeline::ItchFileBookTicks source(path, cfg, capture_options(args));
  features::FeatureMatrix m = features::compute_book_features(spec, source);
  const itch::SourceStats& st = source.source_stats();
  const itch::DecodeCounters& d = source.decode_counters();
  const book::Integrity& t = source.integrity();
  std::fprintf(stderr,
               "itch %s (%s): %llu records, %llu lost, %llu undecodable; %llu book ticks of the %zu symbols; "
               "books: unknown_ref %llu, crossed %llu, locked %llu, capacity_rejects %llu%s%s\n",
               path.c_str(), itch::to_string(st.kind), (unsigned long long)st.records, (unsigned long long)st.lost,
               (unsigned long long)(d.total_unknown_type + d.total_wrong_length), (unsigned long long)source.ticks(),
               cfg.symbols.size(), (unsigned long long)t.unknown_ref, (unsigned long long)t.crossed,
               (unsigned long long)t.locked, (unsigned long long)t.capacity_rejects,
               st.error.empty() ? "" : "; source error: ", st.error.c_str());
  if (!st.error.empty()) throw Error("itch '" + path + "': " + st.error);
  return m;
}

}  // namespace

ArgParser features_parser() {
  ArgParser p("features", "compute a feature specification over a tick file, or watch a shm feature store");
  p.positional("SPEC", "feature specification (.toml, see docs/features.md)");
  p.option("input", "TICKS", "tick file: .csv with columns ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side, a .cap capture (tickinfer feed record), or with --symbols an ITCH 5.0 day file (raw or gzip) or pcap/pcapng capture");
  p.option("symbols", "A,B,...", "ITCH input: the symbols, instrument i + 1 is the i-th", "", true);
  p.option("date", "YYYY-MM-DD", "ITCH input: the trading date (default: from a Nasdaq file name)");
  declare_capture_options(p);
  p.option("output", "OUT", "feature matrix: .npy (float64 [rows, columns]) or .csv");
  p.flag("raw", "write raw features even when the spec standardizes them");
  p.option("model", "MODEL", "refuse to run unless MODEL's features.toml and input width match SPEC");
  p.flag("counters", "print the pipeline counters (validation, gaps, rows)");
  p.option("watch", "shm:NAME", "instead: watch a running pipeline's feature store (tickinfer help features --watch)");
  declare_load_options(p);
  return p;
}

int run_features_main(const std::vector<std::string>& args) {
  bool watch = false;
  for (const auto& a : args) watch = watch || a == "--watch" || a.rfind("--watch=", 0) == 0;
  ArgParser p = watch ? features_watch_parser() : features_parser();
  p.parse(args);
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return 0;
  }
  return watch ? run_features_watch(p) : run_features(p);
}

int run_features(const ArgParser& args) {
  const std::string spec_path = args.positional_value("SPEC");
  if (!args.given("input")) throw UsageError("--input TICKS is required");
  if (!args.given("output")) throw UsageError("--output OUT is required");
  const features::FeatureSpec spec = features::load_feature_spec(spec_path);
  if (args.given("model")) {
    const std::string model_path = args.value("model");
    features::check_signature(spec, features::load_model_signature(model_path), model_path);
    const Model model = Model::load(model_path, load_options(args));
    const auto inputs = model.inputs();
    if (inputs.size() != 1 || inputs[0].shape.empty())
      throw Error("model '" + model_path + "': expected one input with a feature axis");
    features::check_input_width(spec, static_cast<std::size_t>(inputs[0].shape.back()), model_path);
  }
  features::FeatureMatrix m;
  if (args.given("symbols")) {
    m = compute_itch_features(spec, args);
  } else {
    auto source = make_tick_source(args.value("input"));
    m = features::compute_features(spec, *source);
  }
  const bool standardized = spec.standardize.mode != features::StandardizeMode::None && !args.flag_set("raw");
  features::write_feature_matrix(args.value("output"), m, standardized);
  const auto& c = m.counters;
  std::printf("%s: %zu rows x %zu columns (%s features) -> %s\n", spec.name.c_str(), m.rows, m.columns.size(),
              standardized ? "standardized" : "raw", args.value("output").c_str());
  std::printf("events %llu, accepted %llu, invalid %llu (policy %s), rows: observed %llu, interpolated %llu, "
              "edge-filled %llu, invalid %llu\n",
              static_cast<unsigned long long>(c.events), static_cast<unsigned long long>(c.accepted),
              static_cast<unsigned long long>(c.invalid_total()), features::invalid_policy_name(spec.invalid_policy),
              static_cast<unsigned long long>(c.rows_observed), static_cast<unsigned long long>(c.rows_interpolated),
              static_cast<unsigned long long>(c.rows_edge_filled), static_cast<unsigned long long>(c.rows_invalid));
  if (args.flag_set("counters")) std::fputs(features::format_counters(c).c_str(), stdout);
  return 0;
}

}  // namespace tickinfer::cli
