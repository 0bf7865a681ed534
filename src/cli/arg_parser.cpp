#include "cli/arg_parser.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tickinfer::cli {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void ArgParser::positional(std::string name, std::string help) {
  Spec s;
  s.name = std::move(name);
  s.help = std::move(help);
  positionals_.push_back(std::move(s));
}

void ArgParser::flag(std::string name, std::string help) {
  Spec s;
  s.name = std::move(name);
  s.help = std::move(help);
  s.is_flag = true;
  options_.push_back(std::move(s));
}

void ArgParser::option(std::string name, std::string value_name, std::string help,
                       std::string default_value, bool repeatable) {
  Spec s;
  s.name = std::move(name);
  s.value_name = std::move(value_name);
  s.help = std::move(help);
  s.default_value = std::move(default_value);
  s.repeatable = repeatable;
  options_.push_back(std::move(s));
}

ArgParser::Spec& ArgParser::find_option(const std::string& name) {
  for (auto& s : options_) {
    if (s.name == name) return s;
  }
  throw UsageError("unknown option '--" + name + "' for '" + command_ + "'");
}

const ArgParser::Spec& ArgParser::find_declared(const std::string& name) const {
  for (const auto& s : options_) {
    if (s.name == name) return s;
  }
  for (const auto& s : positionals_) {
    if (s.name == name) return s;
  }
  throw std::logic_error("ArgParser: '" + name + "' was never declared for '" + command_ + "'");
}

void ArgParser::parse(const std::vector<std::string>& args) {
  size_t next_positional = 0;
  bool only_positionals = false;  // after "--"
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!only_positionals && (arg == "--help" || arg == "-h")) {
      help_requested_ = true;
      return;
    }
    if (!only_positionals && arg == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9')) {
      if (arg.rfind("--", 0) != 0) {
        throw UsageError("unknown option '" + arg + "' for '" + command_ + "' (options start with --)");
      }
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      Spec& spec = find_option(name);
      if (spec.is_flag) {
        if (eq != std::string::npos) throw UsageError("option '--" + name + "' takes no value");
        spec.set = true;
        continue;
      }
      std::string value;
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        throw UsageError("option '--" + name + "' needs a value (" + spec.value_name + ")");
      }
      if (spec.set && !spec.repeatable) {
        throw UsageError("option '--" + name + "' given more than once");
      }
      spec.set = true;
      spec.given.push_back(std::move(value));
      continue;
    }
    if (next_positional >= positionals_.size()) {
      throw UsageError("unexpected argument '" + arg + "' for '" + command_ + "'");
    }
    positionals_[next_positional].given.push_back(arg);
    positionals_[next_positional].set = true;
    ++next_positional;
  }
  if (next_positional < positionals_.size()) {
    throw UsageError("'" + command_ + "' needs " + positionals_[next_positional].name);
  }
}

std::string ArgParser::help() const {
  std::string out = "usage: tickinfer " + command_;
  for (const auto& p : positionals_) out += " " + p.name;
  if (!options_.empty()) out += " [options]";
  out += "\n\n" + summary_ + "\n";
  size_t width = 0;
  std::vector<std::string> left;
  for (const auto& p : positionals_) left.push_back(p.name);
  for (const auto& o : options_) {
    left.push_back("--" + o.name + (o.is_flag ? "" : " " + o.value_name));
  }
  for (const auto& l : left) width = std::max(width, l.size());
  size_t k = 0;
  auto line = [&](const Spec& s) {
    std::string text = "  " + left[k] + std::string(width - left[k].size() + 2, ' ') + s.help;
    if (!s.default_value.empty()) text += " (default " + s.default_value + ")";
    if (s.repeatable) text += " (repeatable)";
    ++k;
    return text + "\n";
  };
  if (!positionals_.empty()) out += "\narguments:\n";
  for (const auto& p : positionals_) out += line(p);
  if (!options_.empty()) out += "\noptions:\n";
  for (const auto& o : options_) out += line(o);
  return out;
}

const std::string& ArgParser::positional_value(const std::string& name) const {
  const Spec& s = find_declared(name);
  if (s.given.empty()) throw std::logic_error("ArgParser: positional '" + name + "' not parsed");
  return s.given.front();
}

bool ArgParser::flag_set(const std::string& name) const { return find_declared(name).set; }

bool ArgParser::given(const std::string& name) const { return find_declared(name).set; }

const std::string& ArgParser::value(const std::string& name) const {
  const Spec& s = find_declared(name);
  return s.given.empty() ? s.default_value : s.given.back();
}

const std::vector<std::string>& ArgParser::values(const std::string& name) const {
  return find_declared(name).given;
}

double ArgParser::number(const std::string& name, double min, double max) const {
  const std::string& text = value(name);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    throw UsageError("option '--" + name + "': '" + text + "' is not a number");
  }
  if (v < min || v > max) {
    char range[96];
    std::snprintf(range, sizeof range, "[%g, %g]", min, max);
    throw UsageError("option '--" + name + "': " + text + " is outside " + range);
  }
  return v;
}

long ArgParser::integer(const std::string& name, long min, long max) const {
  const std::string& text = value(name);
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw UsageError("option '--" + name + "': '" + text + "' is not an integer");
  }
  if (v < min || v > max) {
    throw UsageError("option '--" + name + "': " + text + " is outside [" + std::to_string(min) +
                     ", " + std::to_string(max) + "]");
  }
  return v;
}

}  // namespace tickinfer::cli
