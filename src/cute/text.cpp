// Text forms of the CuTe types: printing and a small recursive-descent parser shared by all of
// them. Every parse error reports the 0-based position and what was expected there.
#include <cctype>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "core/scan.hpp"

namespace axe::cute {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  [[noreturn]] void error(std::string_view expected) const {
    throw ParseError(text_, pos_, expected);
  }
  [[noreturn]] void error_at(std::size_t pos, std::string_view expected) const {
    throw ParseError(text_, pos, expected);
  }

  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip_ws();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool at_end() {
    skip_ws();
    return pos_ >= text_.size();
  }
  bool accept(char c) {
    if (peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view expected) {
    if (!accept(c)) error(expected);
  }
  void expect_end(std::string_view what) {
    if (!at_end()) error(std::string("end of input after the ") + std::string(what));
  }
  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }
  std::string_view rest() const { return text_.substr(pos_); }

  bool at_integer() {
    char c = peek();
    return c == '-' || std::isdigit(static_cast<unsigned char>(c));
  }

  std::int64_t integer() {
    skip_ws();
    std::size_t start = pos_;
    std::int64_t v = 0;
    switch (axe::internal::scan_int64(text_, pos_, v)) {
      case axe::internal::ScanInt::Ok: break;
      case axe::internal::ScanInt::NotAnInteger: error_at(start, "an integer");
      case axe::internal::ScanInt::TooLarge: error_at(start, "an integer that fits in 64 bits");
    }
    return v;
  }

  // int_tuple := integer | "_" (when allowed) | "(" [int_tuple ("," int_tuple)*] ")"
  IntTuple int_tuple(bool allow_underscore, int level = 0) {
    if (level > 256) error("a less deeply nested tuple");
    char c = peek();
    if (c == '(') {
      ++pos_;
      std::vector<IntTuple> elems;
      if (accept(')')) return IntTuple::tuple({});
      while (true) {
        elems.push_back(int_tuple(allow_underscore, level + 1));
        if (accept(')')) break;
        expect(',', "',' or ')'");
      }
      return IntTuple::tuple(std::move(elems));
    }
    if (c == '_' && allow_underscore) {
      ++pos_;
      return underscore();
    }
    if (at_integer()) return integer();
    error(allow_underscore ? "an integer, '_' or '('" : "an integer or '('");
  }

  // layout := int_tuple ":" int_tuple | integer (n means n:1)
  Layout layout() {
    std::size_t start = (skip_ws(), pos_);
    IntTuple shape = int_tuple(false);
    if (!accept(':')) {
      if (shape.is_int()) return Layout(shape, 1);
      error("':' after the shape");
    }
    std::size_t stride_pos = (skip_ws(), pos_);
    IntTuple stride = int_tuple(false);
    if (!congruent(shape, stride)) {
      error_at(stride_pos, "a stride congruent with the shape " + to_string(shape));
    }
    try {
      return Layout(shape, stride);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      error_at(start, std::string("a valid layout (") + e.what() + ")");
    }
  }

  // tiler := "_" | "<" tiler ("," tiler)* ">" | layout
  Tiler tiler(int level = 0) {
    if (level > 256) error("a less deeply nested tiler");
    char c = peek();
    if (c == '_') {
      ++pos_;
      return Tiler::none();
    }
    if (c == '<') {
      ++pos_;
      std::vector<Tiler> elems;
      while (true) {
        elems.push_back(tiler(level + 1));
        if (accept('>')) break;
        expect(',', "',' or '>'");
      }
      return Tiler::tuple(std::move(elems));
    }
    if (at_integer()) {  // a bare integer n (no ':') is the integer tiler n
      std::size_t start = pos_;
      std::int64_t n = integer();
      if (peek() != ':') {
        if (n < 0) error_at(start, "a non-negative integer tiler");
        return Tiler::of_int(n);
      }
      pos_ = start;
    }
    if (c == '(' || at_integer()) return Tiler(layout());
    error("a layout, '_' or '<'");
  }

  int small_int(std::string_view what) {
    std::size_t start = (skip_ws(), pos_);
    std::int64_t v = integer();
    if (v < -1000 || v > 1000) error_at(start, what);
    return static_cast<int>(v);
  }

  // swizzle := "Sw<" int "," int "," int ">" | "SW_" int "_" int "_" int
  Swizzle swizzle() {
    std::size_t start = (skip_ws(), pos_);
    std::string_view r = rest();
    // The two spellings differ only in their separator and the closing '>'.
    const bool angle = r.substr(0, 3) == "Sw<";
    if (!angle && r.substr(0, 3) != "SW_") error("'Sw<' or 'SW_'");
    pos_ += 3;
    const char sep = angle ? ',' : '_';
    const std::string sep_text = std::string("'") + sep + "'";
    const int b = small_int("a swizzle parameter");
    expect(sep, sep_text);
    const int m = small_int("a swizzle parameter");
    expect(sep, sep_text);
    const int s = small_int("a swizzle parameter");
    if (angle) expect('>', "'>'");
    try {
      return Swizzle(b, m, s);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      error_at(start, std::string("a valid swizzle (") + e.what() + ")");
    }
  }

  void expect_o() {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == 'o') {
      ++pos_;
      return;
    }
    error("'o'");
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

void print(const IntTuple& t, std::string& out) {
  if (t.is_int()) {
    out += std::to_string(t.value());
  } else if (t.is_underscore_leaf()) {
    out += '_';
  } else {
    out += '(';
    for (std::size_t i = 0; i < t.rank(); ++i) {
      if (i) out += ',';
      print(t[i], out);
    }
    out += ')';
  }
}

// `rule` over the whole of `text`; anything left after it is an error naming `what`.
template <class Rule>
auto parse_whole(std::string_view text, std::string_view what, Rule rule) {
  Parser p(text);
  auto v = rule(p);
  p.expect_end(what);
  return v;
}

}  // namespace

std::string to_string(const IntTuple& t) {
  std::string out;
  print(t, out);
  return out;
}

IntTuple parse_int_tuple(std::string_view text) {
  return parse_whole(text, "integer tuple", [](Parser& p) { return p.int_tuple(false); });
}

IntTuple parse_coord(std::string_view text) {
  return parse_whole(text, "coordinate", [](Parser& p) { return p.int_tuple(true); });
}

std::string to_string(const Layout& l) {
  return to_string(l.shape()) + ":" + to_string(l.stride());
}

Layout parse_layout(std::string_view text) {
  return parse_whole(text, "layout", [](Parser& p) { return p.layout(); });
}

std::string to_string(const Tiler& t) {
  if (t.is_none()) return "_";
  if (t.is_int()) return std::to_string(t.layout().shape().value());
  if (t.is_layout()) return to_string(t.layout());
  std::string out = "<";
  for (std::size_t i = 0; i < t.elems().size(); ++i) {
    if (i) out += ',';
    out += to_string(t.elems()[i]);
  }
  return out + ">";
}

Tiler parse_tiler(std::string_view text) {
  return parse_whole(text, "tiler", [](Parser& p) { return p.tiler(); });
}

std::string to_string(const Swizzle& s) {
  return "Sw<" + std::to_string(s.bits) + "," + std::to_string(s.base) + "," +
         std::to_string(s.shift) + ">";
}

std::string to_pycute_string(const Swizzle& s) {
  return "SW_" + std::to_string(s.bits) + "_" + std::to_string(s.base) + "_" +
         std::to_string(s.shift);
}

Swizzle parse_swizzle(std::string_view text) {
  return parse_whole(text, "swizzle", [](Parser& p) { return p.swizzle(); });
}

std::string to_string(const ComposedLayout& c) {
  return to_string(c.swizzle) + " o " + std::to_string(c.offset) + " o " + to_string(c.layout);
}

std::string to_pycute_string(const ComposedLayout& c) {
  return to_pycute_string(c.swizzle) + " o " + std::to_string(c.offset) + " o " +
         to_string(c.layout);
}

ComposedLayout parse_composed_layout(std::string_view text) {
  Parser p(text);
  Swizzle s = p.swizzle();
  p.expect_o();
  std::int64_t offset = p.integer();
  p.expect_o();
  Layout l = p.layout();
  p.expect_end("composed layout");
  return ComposedLayout(s, offset, std::move(l));
}

std::ostream& operator<<(std::ostream& os, const IntTuple& t) {
  return os << to_string(t);
}
std::ostream& operator<<(std::ostream& os, const Layout& l) {
  return os << to_string(l);
}
std::ostream& operator<<(std::ostream& os, const Tiler& t) {
  return os << to_string(t);
}
std::ostream& operator<<(std::ostream& os, const Swizzle& s) {
  return os << to_string(s);
}
std::ostream& operator<<(std::ostream& os, const ComposedLayout& c) {
  return os << to_string(c);
}

}  // namespace axe::cute
