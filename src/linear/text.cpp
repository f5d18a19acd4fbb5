// Text form of linear layouts: `{in1: [(1,1),(0,1)], in2: [(1,0),(1,2)]} -> [out1:4, out2:4]`.
#include <cctype>
#include <limits>

#include "axe/core/error.hpp"
#include "axe/linear/linear_layout.hpp"
#include "linear/internal.hpp"

namespace axe::linear {

std::string to_string(const LinearLayout& l) {
  bool plain = l.out_dims().size() == 1;
  std::string s = "{";
  for (std::size_t k = 0; k < l.in_dims().size(); ++k) {
    const auto& d = l.in_dims()[k];
    s += (k ? ", " : "") + d.name + ": [";
    for (int i = 0; i < d.bits; ++i) {
      auto b = l.basis(d.name, i);
      s += i ? "," : "";
      if (plain) {
        s += std::to_string(b[0]);
      } else {
        s += "(";
        for (std::size_t j = 0; j < b.size(); ++j) s += (j ? "," : "") + std::to_string(b[j]);
        s += ")";
      }
    }
    s += "]";
  }
  s += "} -> [";
  for (std::size_t k = 0; k < l.out_dims().size(); ++k) {
    s += (k ? ", " : "") + l.out_dims()[k].name + ":" + std::to_string(l.out_dims()[k].size());
  }
  return s + "]";
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  LinearLayout layout() {
    LinearLayout::InBases bases;
    expect('{');
    if (!eat('}')) {
      do {
        std::string name = identifier("an input dim name");
        expect(':');
        expect('[');
        std::vector<LinearLayout::Basis> list;
        if (!eat(']')) {
          do list.push_back(basis());
          while (eat(','));
          expect(']');
        }
        if (list.size() > 62) {
          throw ParseError(t_, i_, "at most 62 bases per input dim");
        }
        bases.emplace_back(std::move(name), std::move(list));
      } while (eat(','));
      expect('}');
    }
    expect('-');
    if (i_ >= t_.size() || t_[i_] != '>') throw ParseError(t_, i_, "'->'");
    ++i_;
    expect('[');
    LinearLayout::OutSizes outs;
    if (!eat(']')) {
      do {
        std::string name = identifier("an output dim name");
        expect(':');
        outs.emplace_back(std::move(name), integer());
      } while (eat(','));
      expect(']');
    }
    ws();
    if (i_ != t_.size()) throw ParseError(t_, i_, "the end of the layout");
    return LinearLayout(std::move(bases), std::move(outs), false);
  }

 private:
  void ws() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) throw ParseError(t_, i_, std::string("'") + c + "'");
  }
  std::string identifier(const char* what) {
    ws();
    std::size_t start = i_;
    if (i_ < t_.size() && (std::isalpha(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) {
      ++i_;
      while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) ++i_;
    }
    if (i_ == start) throw ParseError(t_, i_, what);
    return std::string(t_.substr(start, i_ - start));
  }
  std::int64_t integer() {
    ws();
    std::size_t start = i_;
    std::int64_t v = 0;
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) {
      int d = t_[i_] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) {
        throw ParseError(t_, start, "a non-negative integer that fits in 64 bits");
      }
      v = v * 10 + d;
      ++i_;
    }
    if (i_ == start) throw ParseError(t_, i_, "a non-negative integer");
    return v;
  }
  LinearLayout::Basis basis() {
    LinearLayout::Basis b;
    if (eat('(')) {
      if (!eat(')')) {
        do {
          if (b.size() >= 64) throw ParseError(t_, i_, "at most 64 values per basis");
          b.push_back(integer());
        } while (eat(','));
        expect(')');
      }
      return b;
    }
    b.push_back(integer());
    return b;
  }

  std::string_view t_;
  std::size_t i_ = 0;
};

}  // namespace

LinearLayout parse_linear_layout(std::string_view text) { return Parser(text).layout(); }

}  // namespace axe::linear
