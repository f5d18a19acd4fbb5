// libFuzzer target for the `axe` calculator's command lines: parse_args and each registered
// command's run(), writing to an std::ostringstream, exactly as main() calls them.
//
// Input: the argv words after `axe`, one per line ("eval\nS[(4,2):(1@gpu,1)]\n--at\n3,1"); the
// first word names the command. The laws:
//   - a command returns an exit status (0, or 1 for "not held" / "invalid" / MISMATCH answers) or
//     throws axe::Error for bad input; nothing else escapes, nothing crashes, nothing hangs
//     (libFuzzer's -timeout) and nothing allocates without bound (-malloc_limit_mb);
//   - with --json the output (or the error main would print) is JSON.
// Not fuzzed: --dump DIR and --cost FILE (they touch the file system; the cost-model text has
// its own fuzzer). `plan` and `simulate` are bounded by the harness to meshes of <= 16 devices
// and shapes of <= 4096 elements: simulate holds every rank's buffers in this process, and
// plan_commands.cpp has no size guard yet (see tests/fuzz/README.md).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/dist/mesh.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;

// A small JSON checker: one value, then only whitespace. Enough to catch unescaped text.
struct Json {
  std::string_view s;
  std::size_t i = 0;
  int depth = 0;
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool lit(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  bool string() {
    if (!lit("\"")) return false;
    while (i < s.size() && s[i] != '"') {
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      if (s[i] == '\\') {
        ++i;
        if (i >= s.size()) return false;
        if (s[i] == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
        } else if (std::string_view("\"\\/bfnrt").find(s[i]) == std::string_view::npos) {
          return false;
        }
      }
      ++i;
    }
    return lit("\"");
  }
  bool number() {
    std::size_t b = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                            s[i] == 'E' || s[i] == '+' || s[i] == '-'))
      ++i;
    return i > b && std::isdigit(static_cast<unsigned char>(s[i - 1]));
  }
  bool value() {
    if (++depth > 64) return false;
    ws();
    bool ok = false;
    if (i >= s.size()) return false;
    if (s[i] == '{') {
      ++i;
      ws();
      if (lit("}")) ok = true;
      else {
        while (true) {
          ws();
          if (!string()) return false;
          ws();
          if (!lit(":") || !value()) return false;
          ws();
          if (lit("}")) break;
          if (!lit(",")) return false;
        }
        ok = true;
      }
    } else if (s[i] == '[') {
      ++i;
      ws();
      if (lit("]")) ok = true;
      else {
        while (true) {
          if (!value()) return false;
          ws();
          if (lit("]")) break;
          if (!lit(",")) return false;
        }
        ok = true;
      }
    } else if (s[i] == '"') {
      ok = string();
    } else if (lit("true") || lit("false") || lit("null")) {
      ok = true;
    } else {
      ok = number();
    }
    --depth;
    return ok;
  }
  // One or more values separated by whitespace, nothing else.
  bool values() {
    ws();
    if (i == s.size()) return false;
    while (i < s.size()) {
      if (!value()) return false;
      ws();
    }
    return true;
  }
};

bool small_enough(const axe::cli::Args& args) {
  for (const char* key : {"mesh", "to-mesh"}) {
    if (!args.has(key)) continue;
    try {
      if (axe::parse_mesh(args.get(key)).size() > 16) return false;
    } catch (const axe::Error&) {
    }
  }
  if (args.has("shape")) {
    try {
      long long n = 1;
      for (auto v : axe::cli::util::parse_ints(args.get("shape"), "--shape")) {
        if (v > 4096 || v < -4096) return false;
        n *= v < 0 ? -v : (v == 0 ? 1 : v);
        if (n > 4096) return false;
      }
    } catch (const axe::Error&) {
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto words_v = axe::fuzz::split(input, '\n');
  std::vector<std::string> words(words_v.begin(), words_v.end());
  if (words.size() > 32) return 0;
  for (const auto& w : words)
    if (w.rfind("--dump", 0) == 0 || w.rfind("--cost", 0) == 0) return 0;
  const axe::cli::Command* found = nullptr;
  for (const auto& c : axe::cli::commands())
    if (words[0] == c.name) found = &c;
  bool json = false;
  for (const auto& w : words) json = json || w == "--json";
  std::ostringstream out;
  int status = 0;
  std::string error;
  try {
    auto args = axe::cli::parse_args(std::vector<std::string>(words.begin() + 1, words.end()));
    if (!found) return 0;
    const std::string_view name = found->name;
    if ((name == "plan" || name == "simulate" || name == "convert-layout") && !small_enough(args)) return 0;
    status = found->run(args, out);
  } catch (const axe::Error& e) {
    error = e.what();
  }
  if (error.empty() && status != 0 && status != 1)
    broken("a command returns 0 or 1 (or throws axe::Error)", input, "status " + std::to_string(status));
  if (json) {
    // main prints {"error": json_string(what)} for an error: check that too.
    const std::string text = error.empty() ? out.str() : "{\"error\": " + axe::cli::json_string(error) + "}\n";
    if (!Json{text}.values()) broken("--json prints JSON", input, text);
  }
  return 0;
}
