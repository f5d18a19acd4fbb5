// libFuzzer target for the text parsers: parse_axe_layout, cute::parse_layout, cute::parse_tiler,
// cute::parse_coord and cute::parse_composed_layout.
//
// Every input goes through every parser. The laws:
//   - a parser either returns a value or throws axe::Error; nothing else escapes, nothing crashes
//     (ASan/UBSan run alongside);
//   - the text form round-trips: parse(to_string(v)) succeeds, equals v (where the type has ==)
//     and prints the same text again.
//   - evaluating what was parsed at its first and last index (and size/cosize) returns a value or
//     throws axe::Error: the parsers' validation must leave no overflow for later.
// A broken law aborts with the input and the two texts, so libFuzzer saves a reproducer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"

namespace {

[[noreturn]] void broken(const char* law, std::string_view input, const std::string& a,
                         const std::string& b) {
  std::fprintf(stderr, "LAW BROKEN: %s\n  input: '%.*s'\n  first:  '%s'\n  second: '%s'\n", law,
               static_cast<int>(input.size()), input.data(), a.c_str(), b.c_str());
  std::abort();
}

// Parses `input`; on success checks that the printed form re-parses to an equal value that
// prints identically. `equal` compares two parsed values.
template <class Parse, class Print, class Equal, class Use>
void check(const char* name, std::string_view input, Parse parse, Print print, Equal equal,
           Use use) {
  std::optional<std::decay_t<decltype(parse(input))>> value;
  try {
    value.emplace(parse(input));
  } catch (const axe::Error&) {
    return;  // rejected with a user error: expected for most inputs
  }
  std::string first = print(*value);
  try {
    auto again = parse(first);
    std::string second = print(again);
    if (!equal(*value, again)) broken(name, input, first, second);
    if (second != first) broken(name, input, first, second);
  } catch (const axe::Error& e) {
    broken(name, input, first, std::string("re-parse threw: ") + e.what());
  }
  try {
    use(*value);
  } catch (const axe::Error&) {
    // e.g. 64-bit overflow of a cosize: reported, not undefined behaviour
  }
}

void use_axe(const axe::AxeLayout& l) {
  auto n = l.size();
  std::int64_t copies = 0;
  // forward() returns every replica and term: only ask when that fits in memory.
  if (!__builtin_mul_overflow(l.replicas(), l.terms(), &copies) && copies <= 4096) {
    (void)l.forward(0);
    (void)l.forward(n - 1);
  }
  for (const auto& a : l.axes()) (void)l.span(a);
}

void use_cute(const axe::cute::Layout& l) {
  auto n = axe::cute::size(l);
  (void)axe::cute::cosize(l);
  if (n > 0) {
    (void)l(0);
    (void)l(n - 1);
  }
}

void use_tiler(const axe::cute::Tiler& t) {
  if (t.is_layout()) use_cute(t.layout());
  if (t.is_tuple()) {
    for (const auto& e : t.elems()) use_tiler(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  check(
      "parse_axe_layout(to_string(l)) == l", input,
      [](std::string_view s) { return axe::parse_axe_layout(s); },
      [](const axe::AxeLayout& l) { return axe::to_string(l); },
      [](const axe::AxeLayout& a, const axe::AxeLayout& b) { return a == b; }, use_axe);

  check(
      "cute::parse_layout(to_string(l)) == l", input,
      [](std::string_view s) { return axe::cute::parse_layout(s); },
      [](const axe::cute::Layout& l) { return axe::cute::to_string(l); },
      [](const axe::cute::Layout& a, const axe::cute::Layout& b) { return a == b; }, use_cute);

  check(
      "cute::parse_tiler(to_string(t)) == t", input,
      [](std::string_view s) { return axe::cute::parse_tiler(s); },
      [](const axe::cute::Tiler& t) { return axe::cute::to_string(t); },
      [](const axe::cute::Tiler& a, const axe::cute::Tiler& b) { return a == b; }, use_tiler);

  check(
      "cute::parse_coord(to_string(c)) == c", input,
      [](std::string_view s) { return axe::cute::parse_coord(s); },
      [](const axe::cute::IntTuple& c) { return axe::cute::to_string(c); },
      [](const axe::cute::IntTuple& a, const axe::cute::IntTuple& b) { return a == b; },
      [](const axe::cute::IntTuple& c) { (void)axe::cute::depth(c); });

  check(
      "cute::parse_composed_layout(to_string(c)) == c", input,
      [](std::string_view s) { return axe::cute::parse_composed_layout(s); },
      [](const axe::cute::ComposedLayout& c) { return axe::cute::to_string(c); },
      [](const axe::cute::ComposedLayout& a, const axe::cute::ComposedLayout& b) { return a == b; },
      [](const axe::cute::ComposedLayout& c) {
        use_cute(c.layout);
        if (axe::cute::size(c) > 0) (void)c(0);
      });
  return 0;
}
