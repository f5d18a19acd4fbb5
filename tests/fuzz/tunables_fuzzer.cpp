// libFuzzer target for the AXE_* environment variables (core/tunables): the value text of one
// declared tunable, set in the environment, read by check_tunables() and by the typed getter of its kind.
//
// Input: the first byte picks the tunable (modulo the table's size), the rest (up to a NUL, which
// an environment value cannot hold) is its value. The laws:
//   - check_tunables() and the typed getter either return or throw axe::Error, and they agree:
//     both throw or both succeed (only the one variable is set);
//   - a value read is in the declared range: integers and byte counts in [min, max], seconds
//     finite, > 0 and <= max, byte lists non-empty with every entry > 0;
//   - unset (or empty) reads the default, which is itself valid.
// Text and Path tunables are read where they are used (the backend name and the calibration
// mesh by the MPI runtime, not fuzzed here); this target only checks that reading them returns
// the text.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;
using K = axe::TunableKind;

// Reads t through its typed getter; returns false when it threw axe::Error.
bool read_typed(const axe::Tunable& t, std::string_view input) {
  try {
    switch (t.kind) {
      case K::Integer:
      case K::Bytes: {
        if (axe::tunable(t.name).empty()) return true;  // no value, no default: not read
        const auto v = axe::tunable_int(t.name);
        if (v < t.min || v > t.max) broken("an integer tunable is in [min, max]", input, std::string(t.name));
        break;
      }
      case K::Seconds: {
        const double s = axe::tunable_seconds(t.name);
        if (!std::isfinite(s) || !(s > 0) || s > static_cast<double>(t.max))
          broken("a seconds tunable is finite, > 0 and <= max", input, std::string(t.name));
        break;
      }
      case K::ByteList: {
        const auto v = axe::tunable_byte_list(t.name);
        for (auto b : v)
          if (b <= 0) broken("a byte-list tunable lists sizes > 0", input, std::string(t.name));
        if (axe::tunable_set(t.name) && v.empty())
          broken("a set byte-list tunable is not empty", input, std::string(t.name));
        break;
      }
      case K::Text:
      case K::Path:
        if (axe::tunable_set(t.name) && axe::tunable(t.name) != *axe::environment(t.name))
          broken("a text tunable reads as its environment value", input, std::string(t.name));
        break;
    }
  } catch (const axe::Error&) {
    return false;
  }
  return true;
}

// Sets `name` to `value` ("" reads as unset). Not setenv: glibc never frees a value setenv
// replaced (the program may still hold it), so millions of calls would grow memory without
// bound. One buffer per tunable, given to putenv once and rewritten in place.
void set_value(const std::string& name, const std::string& value) {
  static std::map<std::string, std::vector<char>> slots;
  auto& slot = slots[name];
  const bool fresh = slot.empty();
  if (fresh) slot.resize(name.size() + 2 + 4096);
  const std::string text = name + "=" + value.substr(0, 4096);
  std::copy(text.begin(), text.end(), slot.begin());
  slot[text.size()] = '\0';
  if (fresh) putenv(slot.data());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Start from a clean environment: the laws assume only the fuzzed variable is set.
  for (const auto& t : axe::tunables()) unsetenv(std::string(t.name).c_str());
  // Every default is valid.
  for (const auto& t : axe::tunables())
    if (!read_typed(t, "(defaults)")) broken("every default is valid", "(none)", std::string(t.name));
  axe::check_tunables();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto table = axe::tunables();
  const axe::Tunable& t = table[data[0] % table.size()];
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string value(input.substr(1));
  if (auto nul = value.find('\0'); nul != std::string::npos) value.resize(nul);
  const std::string name(t.name);
  set_value(name, value);
  bool checked = true;
  try {
    axe::check_tunables();
  } catch (const axe::Error&) {
    checked = false;
  }
  const bool typed = read_typed(t, input);
  set_value(name, "");
  if (checked != typed)
    broken("check_tunables() and the typed getter agree", input,
           name + "='" + value + "': check_tunables " + (checked ? "accepted" : "threw") + ", getter " +
               (typed ? "accepted" : "threw"));
  return 0;
}
