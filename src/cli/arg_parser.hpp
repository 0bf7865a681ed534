#pragma once
// A small command-line parser for one subcommand: required positionals, boolean flags and
// valued options (`--name value` or `--name=value`, optionally repeatable), plus the help text
// generated from the same declarations.
//
// Errors in what the user typed (unknown option, missing value, missing or extra positional,
// a number that does not parse or is out of range) throw UsageError, which main() turns into
// exit code 2. Asking for a name that was never declared is a programming error and throws
// std::logic_error.
#include <stdexcept>
#include <string>
#include <vector>

namespace tickinfer::cli {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

class ArgParser {
 public:
  // command: e.g. "predict"; summary: one line shown in `tickinfer help`.
  ArgParser(std::string command, std::string summary);

  void positional(std::string name, std::string help);
  void flag(std::string name, std::string help);  // name without dashes, e.g. "json"
  void option(std::string name, std::string value_name, std::string help,
              std::string default_value = "", bool repeatable = false);

  // Parses the arguments after the subcommand name. `--help`/`-h` anywhere sets
  // help_requested() and stops checking for missing positionals.
  void parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_requested_; }
  std::string help() const;
  const std::string& summary() const { return summary_; }

  const std::string& positional_value(const std::string& name) const;
  bool flag_set(const std::string& name) const;
  bool given(const std::string& name) const;  // the option appeared at least once
  // The last value given, or the declared default.
  const std::string& value(const std::string& name) const;
  // Every value given, in order (empty if none).
  const std::vector<std::string>& values(const std::string& name) const;
  // value(name) as a number; UsageError naming the option if it does not parse or lies
  // outside [min, max].
  double number(const std::string& name, double min, double max) const;
  long integer(const std::string& name, long min, long max) const;

 private:
  struct Spec {
    std::string name, value_name, help, default_value;
    bool is_flag = false, repeatable = false;
    std::vector<std::string> given;
    bool set = false;
  };
  Spec& find_option(const std::string& name);
  const Spec& find_declared(const std::string& name) const;

  std::string command_, summary_;
  std::vector<Spec> positionals_;
  std::vector<Spec> options_;
  bool help_requested_ = false;
};

}  // namespace tickinfer::cli
