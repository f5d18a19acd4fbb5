// Shared by the libFuzzer targets in this folder.
//
// The harness convention: a surface either returns a value or throws axe::Error; anything else
// that escapes (std::out_of_range, std::bad_alloc, ...) reaches libFuzzer as an uncaught
// exception and is reported as a crash with a reproducer. A broken law calls broken(), which
// prints the law and the input and aborts, so libFuzzer saves the input too.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace axe::fuzz {

[[noreturn]] inline void broken(const char* law, std::string_view input, const std::string& detail) {
  std::fprintf(stderr, "LAW BROKEN: %s\n  input: '%.*s'\n  %s\n", law, static_cast<int>(input.size()),
               input.data(), detail.c_str());
  std::abort();
}

// `text` split at every `sep` (empty pieces kept).
inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t e = text.find(sep, pos);
    out.push_back(text.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
    if (e == std::string_view::npos) return out;
    pos = e + 1;
  }
}

}  // namespace axe::fuzz
