#include "axe/core/bytes.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "axe/core/error.hpp"

namespace axe {

std::int64_t parse_bytes(std::string_view text, std::string_view what) {
  auto bad = [&](const std::string& why) {
    fail(std::string(what) + ": expected a byte count (an integer >= 0 with an optional K, M or G suffix, "
         "1K = 1024), got '" + std::string(text) + "' (" + why + ")");
  };
  std::size_t n = 0;
  while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
  if (n == 0)
    bad(text.size() > 1 && text[0] == '-' && std::isdigit(static_cast<unsigned char>(text[1])) ? "negative"
                                                                                                : "no digits");
  std::string suffix;
  for (char c : text.substr(n)) suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty()) shift = 0;
  else if (suffix == "k" || suffix == "kib") shift = 10;
  else if (suffix == "m" || suffix == "mib") shift = 20;
  else if (suffix == "g" || suffix == "gib") shift = 30;
  else bad("unknown suffix '" + std::string(text.substr(n)) + "'");
  std::int64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int d = text[i] - '0';
    if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) bad("does not fit in 64 bits");
    v = v * 10 + d;
  }
  if (v > (std::numeric_limits<std::int64_t>::max() >> shift)) bad("does not fit in 64 bits");
  return v << shift;
}

std::vector<std::int64_t> parse_byte_list(std::string_view text, std::string_view what) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t e = text.find(',', pos);
    const std::int64_t v = parse_bytes(text.substr(pos, e == std::string_view::npos ? e : e - pos), what);
    if (v <= 0) fail(std::string(what) + ": '" + std::string(text) + "' lists a size of 0 bytes");
    out.push_back(v);
    if (e == std::string_view::npos) return out;
    pos = e + 1;
  }
}

std::string bytes_text(double b) {
  char buf[32];
  if (b >= (1 << 30)) std::snprintf(buf, sizeof buf, "%gG", b / (1 << 30));
  else if (b >= (1 << 20)) std::snprintf(buf, sizeof buf, "%gM", b / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%gK", b / 1024);
  else std::snprintf(buf, sizeof buf, "%g", b);
  return buf;
}

}  // namespace axe
