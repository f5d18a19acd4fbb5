#include "cli/cli_util.hpp"

#include <cctype>
#include <limits>

#include "axe/core/error.hpp"
#include "axe/linear/thread_spec.hpp"

namespace axe::cli::util {
namespace {

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// Splits on ',' keeping empty items (so "8,,16" is reported, not silently read as "8,16").
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> items;
  std::size_t pos = 0;
  while (true) {
    std::size_t end = text.find(sep, pos);
    items.push_back(
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return items;
}

std::string_view strip_parens(std::string_view t) {
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  return t;
}

}  // namespace

std::int64_t parse_int(std::string_view text, std::string_view what) {
  std::size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
  if (i >= text.size()) {
    fail(std::string(what) + ": expected an integer, got " + quoted(text));
  }
  // Accumulate negatively so that INT64_MIN parses.
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      fail(std::string(what) + ": expected an integer, got " + quoted(text) + " (bad character '" +
           text[i] + "' at position " + std::to_string(i) + ")");
    }
    int d = text[i] - '0';
    if (v < (std::numeric_limits<std::int64_t>::min() + d) / 10) {
      fail(std::string(what) + ": " + quoted(text) + " does not fit in a 64-bit integer");
    }
    v = v * 10 - d;
  }
  if (!neg) {
    if (v == std::numeric_limits<std::int64_t>::min()) {
      fail(std::string(what) + ": " + quoted(text) + " does not fit in a 64-bit integer");
    }
    v = -v;
  }
  return v;
}

std::vector<std::int64_t> parse_ints(std::string_view text, std::string_view what) {
  std::string_view t = strip_parens(text);
  if (t.empty()) fail(std::string(what) + ": expected a comma-separated list of integers, got ''");
  std::vector<std::int64_t> out;
  for (auto item : split(t, ',')) out.push_back(parse_int(item, what));
  return out;
}

std::vector<std::int64_t> parse_shape(std::string_view text, std::string_view what) {
  auto shape = parse_ints(text, what);
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] <= 0) {
      fail(std::string(what) + ": extent " + std::to_string(shape[k]) + " of dim " +
           std::to_string(k) + " in " + quoted(text) + " must be positive");
    }
  }
  product(shape, what);
  return shape;
}

Mesh parse_mesh_option(std::string_view text, std::string_view what) {
  if (text.empty()) fail(std::string(what) + ": expected NAME=SIZE,... (e.g. gpu=4), got ''");
  try {
    return parse_mesh(text);
  } catch (const Error& e) {
    fail(std::string(what) + ": " + e.what());
  }
}

std::int64_t product(std::span<const std::int64_t> v, std::string_view what) {
  std::int64_t p = 1;
  for (auto e : v) p = checked_mul(p, e, std::string(what) + " " + tuple_text(v));
  return p;
}

std::vector<std::pair<std::string, std::int64_t>> parse_named_ints(std::string_view text,
                                                                   std::string_view what) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  if (text.empty()) fail(std::string(what) + ": expected name=value,..., got ''");
  for (auto item : split(text, ',')) {
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      fail(std::string(what) + ": expected name=value, got " + quoted(item) + " in " +
           quoted(text));
    }
    std::string name(item.substr(0, eq));
    for (const auto& [n, v] : out) {
      if (n == name) fail(std::string(what) + ": " + name + " given twice in " + quoted(text));
    }
    out.emplace_back(name, parse_int(item.substr(eq + 1), std::string(what) + " " + name));
  }
  return out;
}

std::string tuple_text(std::span<const std::int64_t> v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + ")";
}

std::string json_array(std::span<const std::int64_t> v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

std::int64_t flatten(std::span<const std::int64_t> coord, std::span<const std::int64_t> shape) {
  std::int64_t x = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) x = x * shape[k] + coord[k];
  return x;
}

std::vector<std::int64_t> unflatten(std::int64_t x, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    c[k] = x % shape[k];
    x /= shape[k];
  }
  return c;
}

AxeLayout thread_layout_option(const Args& args, std::string_view key,
                               std::span<const std::int64_t> shape) {
  const std::string& text = args.get(key);
  std::string option = "--" + std::string(key);
  try {
    return linear::parse_thread_layout(text, shape);
  } catch (const ParseError& e) {
    fail(option + " " + quoted(text) + ": " + e.what());
  } catch (const Error& e) {
    // A spec's errors already name it ("thread layout 'SPEC' on (SHAPE): ...").
    std::string why = e.what();
    if (why.rfind("thread layout '", 0) == 0) fail(option + ": " + why);
    fail(option + " " + quoted(text) + ": " + why);
  }
}

void expect_positional(const Args& args, std::size_t lo, std::size_t hi, std::string_view usage) {
  std::size_t n = args.positional.size();
  if (n < lo || n > hi) {
    fail(std::string(n < lo ? "missing arguments" : "too many arguments") + "; usage: axe " +
         std::string(usage));
  }
}

std::size_t digits(std::int64_t v) {
  return std::to_string(v).size();
}

}  // namespace axe::cli::util
