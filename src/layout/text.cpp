// The text form of Axe layouts: `S[(8,2):(4@lane,1)] + R[2:4@warp] + P<max>[2:1@gpu] + 5@warp`.
#include <cctype>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "core/scan.hpp"
#include "layout/internal.hpp"

namespace axe {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  AxeLayout parse() {
    skip_ws();
    expect_char('S', "'S[' opening the shard list");
    skip_ws();
    std::vector<Iter> d = iter_list();
    std::vector<Iter> r, p;
    bool have_r = false, have_p = false;
    ReduceOp op = ReduceOp::Sum;
    std::vector<std::pair<Axis, std::int64_t>> offsets;
    for (;;) {
      skip_ws();
      if (at_end()) break;
      expect_char('+', "'+' joining another part, or the end of the layout");
      skip_ws();
      std::size_t start = pos_;
      if (peek() == 'R') {
        if (have_r) error(start, "at most one R[...] part");
        ++pos_;
        skip_ws();
        r = iter_list();
        have_r = true;
      } else if (peek() == 'P') {
        if (have_p) error(start, "at most one P[...] part");
        ++pos_;
        skip_ws();
        if (peek() == '<') {
          ++pos_;
          skip_ws();
          std::size_t at = pos_;
          std::string name = identifier("a reduction name (sum, avg, max, min, prod)");
          try {
            op = parse_reduce_op(name);
          } catch (const Error&) {
            error(at, "a reduction name (sum, avg, max, min, prod)");
          }
          skip_ws();
          expect_char('>', "'>' closing the reduction");
          skip_ws();
        }
        p = iter_list();
        have_p = true;
      } else if (peek() == '-' || std::isdigit(static_cast<unsigned char>(peek()))) {
        std::int64_t v = integer();
        Axis a = maybe_axis();
        for (const auto& [ax, val] : offsets) {
          if (ax == a) error(start, "an offset on an axis not already offset");
        }
        offsets.emplace_back(a, v);
      } else {
        error(pos_, "'R[', 'P[', 'P<' or an integer offset");
      }
    }
    return AxeLayout(std::move(d), std::move(r), std::move(p), std::move(offsets), op);
  }

 private:
  [[noreturn]] void error(std::size_t at, std::string_view expected) {
    throw ParseError(t_, at, expected);
  }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  void skip_ws() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  void expect_char(char c, std::string_view expected) {
    if (peek() != c) error(pos_, expected);
    ++pos_;
  }

  std::int64_t integer() {
    std::size_t start = pos_;
    std::int64_t v = 0;
    switch (internal::scan_int64(t_, pos_, v)) {
      case internal::ScanInt::Ok: break;
      case internal::ScanInt::NotAnInteger: error(start, "an integer");
      case internal::ScanInt::TooLarge: error(start, "an integer that fits in 64 bits");
    }
    return v;
  }

  std::string identifier(std::string_view expected) {
    std::size_t start = pos_;
    auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
    if (!alpha(peek())) error(start, expected);
    while (alpha(peek()) || std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    return std::string(t_.substr(start, pos_ - start));
  }

  // `@axis` after a stride or offset; absent means the memory axis.
  Axis maybe_axis() {
    std::size_t save = pos_;
    skip_ws();
    if (peek() != '@') {
      pos_ = save;
      return Axis::memory();
    }
    ++pos_;
    skip_ws();
    return Axis(identifier("an axis name ([A-Za-z_][A-Za-z0-9_]*) after '@'"));
  }

  // `[e:s]`, `[(e0,e1):(s0,s1)]` or `[():()]`.
  std::vector<Iter> iter_list() {
    expect_char('[', "'[' opening an iter list");
    skip_ws();
    std::vector<std::int64_t> extents;
    std::vector<std::size_t> extent_pos;
    std::vector<std::pair<std::int64_t, Axis>> strides;
    std::size_t strides_pos;
    if (peek() == '(') {
      ++pos_;
      skip_ws();
      if (peek() != ')') {
        for (;;) {
          skip_ws();
          extent_pos.push_back(pos_);
          extents.push_back(integer());
          skip_ws();
          if (peek() == ',') {
            ++pos_;
            continue;
          }
          break;
        }
      }
      expect_char(')', "',' or ')' in the extent list");
      skip_ws();
      expect_char(':', "':' between extents and strides");
      skip_ws();
      strides_pos = pos_;
      expect_char('(', "'(' opening the stride list");
      skip_ws();
      if (peek() != ')') {
        for (;;) {
          skip_ws();
          std::int64_t s = integer();
          strides.emplace_back(s, maybe_axis());
          skip_ws();
          if (peek() == ',') {
            ++pos_;
            continue;
          }
          break;
        }
      }
      expect_char(')', "',' or ')' in the stride list");
    } else {
      extent_pos.push_back(pos_);
      extents.push_back(integer());
      skip_ws();
      expect_char(':', "':' between extent and stride");
      skip_ws();
      strides_pos = pos_;
      std::int64_t s = integer();
      strides.emplace_back(s, maybe_axis());
    }
    skip_ws();
    expect_char(']', "']' closing the iter list");
    if (strides.size() != extents.size()) {
      error(strides_pos, std::to_string(extents.size()) + " stride(s) to match the " +
                             std::to_string(extents.size()) + " extent(s), got " +
                             std::to_string(strides.size()));
    }
    std::vector<Iter> out;
    for (std::size_t i = 0; i < extents.size(); ++i) {
      if (extents[i] <= 0) error(extent_pos[i], "a positive extent");
      out.push_back(Iter{extents[i], strides[i].first, strides[i].second});
    }
    return out;
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

std::string list_to_string(const std::vector<Iter>& v) {
  if (v.empty()) return "():()";
  return internal::iters_to_string(v);
}

}  // namespace

std::string to_string(const AxeLayout& l) {
  std::string s = "S[" + list_to_string(l.shard()) + "]";
  if (!l.replica().empty()) s += " + R[" + list_to_string(l.replica()) + "]";
  if (!l.partial().empty()) {
    s += " + P";
    if (l.reduce_op() != ReduceOp::Sum) s += "<" + std::string(to_string(l.reduce_op())) + ">";
    s += "[" + list_to_string(l.partial()) + "]";
  }
  for (const auto& [a, v] : l.offset()) {
    s += " + " + std::to_string(v);
    if (!a.is_memory()) s += "@" + std::string(a.name());
  }
  return s;
}

AxeLayout parse_axe_layout(std::string_view text) { return Parser(text).parse(); }

}  // namespace axe
