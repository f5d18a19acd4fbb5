#include <cctype>
#include <cstdio>
#include <string>

#include "axe/core/error.hpp"
#include "cli/cli.hpp"

namespace axe::cli {

const std::string& Args::get(std::string_view key) const {
  auto it = options.find(key);
  if (it == options.end()) fail("missing --" + std::string(key));
  return it->second;
}

void Args::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : options) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == key;
    if (!ok) fail("unknown option --" + key);
  }
}

Args parse_args(const std::vector<std::string>& argv) {
  Args args;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "--json") {
      args.json = true;
    } else if (w == "--simulate") {  // a flag of `convert-layout`: no value
      if (args.has("simulate")) fail("option --simulate given twice");
      args.options.emplace("simulate", "");
    } else if (w.size() > 2 && w.rfind("--", 0) == 0) {
      std::string key = w.substr(2);
      std::string value;
      if (auto eq = key.find('='); eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else {
        if (i + 1 >= argv.size()) fail("option --" + key + " needs a value");
        value = argv[++i];
      }
      if (args.has(key)) fail("option --" + key + " given twice");
      args.options.emplace(key, value);
    } else {
      args.positional.push_back(w);
    }
  }
  return args;
}

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace

bool register_command(const Command& command) {
  registry().push_back(command);
  return true;
}

const std::vector<Command>& commands() { return registry(); }

std::string json_string(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r + "\"";
}

}  // namespace axe::cli
