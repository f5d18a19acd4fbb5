// The text form of thread layouts (thread_spec.hpp): a small recursive-descent parser over the
// whole spec, so that a syntax error inside a slice's parent still reports its position in the
// text the user wrote. Syntax errors are ParseError; everything the layout functions refuse is
// rethrown once, at the top, with the spec and the shape in front.
#include "axe/linear/thread_spec.hpp"

#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/linear_layout.hpp"
#include "axe/linear/thread_layouts.hpp"
#include "core/scan.hpp"

namespace axe::linear {
namespace {

using Ints = std::vector<std::int64_t>;

std::string list_text(std::span<const std::int64_t> v, const char* open = "(",
                      const char* close = ")") {
  std::string s = open;
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + close;
}

// The kind at text[pos]: one or more letters followed by ':' (the ':' not included).
std::optional<std::string_view> kind_at(std::string_view text, std::size_t pos) {
  std::size_t end = pos;
  while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
  if (end == pos || end >= text.size() || text[end] != ':') return std::nullopt;
  return text.substr(pos, end - pos);
}

class SpecParser {
 public:
  explicit SpecParser(std::string_view text) : t_(text) {}

  // The Triton form at the current position on `shape`; it must run to the end of the text.
  LinearLayout form(std::span<const std::int64_t> shape) {
    std::size_t start = pos_;
    auto kind = kind_at(t_, pos_);
    if (!kind) error(start, "a kind (blocked:, mma:, wgmma:, slice: or linear:)");
    pos_ += kind->size() + 1;
    if (*kind == "blocked") return blocked(shape);
    if (*kind == "mma") {
      Ints wpc = ints("warps per CTA");
      expect_end("the end of the spec (mma:WPC)");
      return mma_accumulator(shape, wpc);
    }
    if (*kind == "wgmma") {
      std::int64_t n = integer("the instruction N");
      expect_char('/', "'/' and the warps per CTA (wgmma:N/WPC)");
      Ints wpc = ints("warps per CTA");
      expect_end("the end of the spec (wgmma:N/WPC)");
      return wgmma_accumulator(shape, n, wpc);
    }
    if (*kind == "slice") return slice(shape);
    if (*kind == "linear") return linear(shape);
    fail("unknown kind '" + std::string(*kind) +
         "' (expected blocked, mma, wgmma, slice or linear, or an Axe layout S[...])");
  }

 private:
  LinearLayout blocked(std::span<const std::int64_t> shape) {
    Ints spt = ints("size per thread");
    expect_char('/', "'/' and the threads per warp (blocked:SPT/TPW/WPC[/ORDER])");
    Ints tpw = ints("threads per warp");
    expect_char('/', "'/' and the warps per CTA (blocked:SPT/TPW/WPC[/ORDER])");
    Ints wpc = ints("warps per CTA");
    Ints order;
    if (peek() == '/') {
      ++pos_;
      order = ints("order");
    }
    expect_end("'/' and the order, or the end of the spec (blocked:SPT/TPW/WPC[/ORDER])");
    return blocked_layout(shape, spt, tpw, wpc, order);
  }

  LinearLayout slice(std::span<const std::int64_t> shape) {
    std::int64_t d = integer("the sliced dim");
    expect_char(':', "':' and the parent (slice:D:PARENT)");
    auto rank = static_cast<std::int64_t>(shape.size());
    if (d < 0 || d > rank) {
      fail("slice dim " + std::to_string(d) + " is not in 0.." + std::to_string(rank) +
           " (the parent has rank " + std::to_string(rank + 1) + ")");
    }
    Ints parent_shape(shape.begin(), shape.end());
    parent_shape.insert(parent_shape.begin() + d, 1);
    LinearLayout parent;
    try {
      parent = form(parent_shape);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      fail("slice dim " + std::to_string(d) + ", the parent on " + list_text(parent_shape) + ": " +
           e.what());
    }
    return slice_layout(parent, static_cast<int>(d));
  }

  // linear:{"reg":[[..]],"lane":[[..]],"warp":[[..]]}: a strict JSON object of lists of bases.
  LinearLayout linear(std::span<const std::int64_t> shape) {
    (void)logical_dims(shape);                                     // powers of two, named by dim
    std::vector<std::pair<std::string, std::vector<Ints>>> given;  // reg, lane, warp
    for (const char* name : {"reg", "lane", "warp"}) given.emplace_back(name, std::vector<Ints>{});
    std::vector<bool> seen(3, false);
    skip_ws();
    expect_char('{',
                "'{' opening the bases (linear:{\"reg\":[...],\"lane\":[...],\"warp\":[...]})");
    skip_ws();
    if (peek() != '}') {
      for (;;) {
        std::size_t at = pos_;
        std::string key = json_key();
        skip_ws();
        expect_char(':', "':' after the key");
        skip_ws();
        std::vector<Ints> bases = json_bases();
        std::size_t slot;
        if (key == "reg" || key == "register" || key == "m") {
          slot = 0;
        } else if (key == "lane") {
          slot = 1;
        } else if (key == "warp") {
          slot = 2;
        } else if (key == "block" && bases.empty()) {
          slot = 3;  // one CTA: Triton's empty block bases
        } else if (key == "block") {
          fail("block has " + std::to_string(bases.size()) +
               " bases: one CTA only (\"block\" must be empty)");
        } else {
          fail("unknown key '" + key + "' at position " + std::to_string(at) +
               " (expected reg, lane or warp)");
        }
        if (slot < 3) {
          if (seen[slot]) fail("the " + given[slot].first + " bases are given twice");
          seen[slot] = true;
          given[slot].second = std::move(bases);
        }
        skip_ws();
        if (peek() == ',') {
          ++pos_;
          skip_ws();
          continue;
        }
        break;
      }
    }
    expect_char('}', "',' and another key, or '}' closing the bases");
    skip_ws();
    expect_end("the end of the spec after the JSON object");

    LinearLayout::InBases in;
    const char* in_names[] = {"m", "lane", "warp"};
    std::size_t rank = shape.size();
    for (std::size_t s = 0; s < 3; ++s) {
      std::vector<LinearLayout::Basis> list;
      const auto& bases = given[s].second;
      for (std::size_t i = 0; i < bases.size(); ++i) {
        const Ints& b = bases[i];
        std::string which =
            given[s].first + " basis " + std::to_string(i) + " " + list_text(b, "[", "]");
        if (b.size() != rank) {
          fail(which + " has " + std::to_string(b.size()) + " coordinates but the shape " +
               list_text(shape) + " has rank " + std::to_string(rank));
        }
        for (std::size_t k = 0; k < rank; ++k) {
          if (b[k] < 0 || b[k] >= shape[k]) {
            fail(which + ": coordinate " + std::to_string(b[k]) + " of dim " + std::to_string(k) +
                 " is outside 0.." + std::to_string(shape[k] - 1) + " of the shape " +
                 list_text(shape));
          }
        }
        list.emplace_back(b.rbegin(), b.rend());  // [dim{n-1}, ..., dim0]
      }
      in.emplace_back(in_names[s], std::move(list));
    }
    LinearLayout::OutSizes outs;
    for (std::size_t k = rank; k-- > 0;) outs.emplace_back("dim" + std::to_string(k), shape[k]);
    return LinearLayout(std::move(in), std::move(outs), /*require_surjective=*/false);
  }

  std::string json_key() {
    std::size_t start = pos_;
    expect_char('"', "'\"' opening a key (reg, lane or warp)");
    std::size_t end = t_.find('"', pos_);
    if (end == std::string_view::npos) error(start, "a key in double quotes");
    std::string key(t_.substr(pos_, end - pos_));
    if (key.find('\\') != std::string::npos) error(start, "a key without escapes");
    pos_ = end + 1;
    return key;
  }

  // [[x, y], [x, y], ...]
  std::vector<Ints> json_bases() {
    std::vector<Ints> bases;
    expect_char('[', "'[' opening a list of bases");
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return bases;
    }
    for (;;) {
      skip_ws();
      expect_char('[', "'[' opening a basis (its logical coordinates [dim0, dim1, ...])");
      Ints b;
      skip_ws();
      if (peek() != ']') {
        for (;;) {
          skip_ws();
          b.push_back(integer("a coordinate"));
          skip_ws();
          if (peek() != ',') break;
          ++pos_;
        }
      }
      expect_char(']', "',' and another coordinate, or ']' closing the basis");
      bases.push_back(std::move(b));
      skip_ws();
      if (peek() != ',') break;
      ++pos_;
    }
    expect_char(']', "',' and another basis, or ']' closing the list of bases");
    return bases;
  }

  // One or more comma-separated integers.
  Ints ints(const char* what) {
    Ints v{integer(what)};
    while (peek() == ',') {
      ++pos_;
      v.push_back(integer(what));
    }
    return v;
  }

  std::int64_t integer(const char* what) {
    std::size_t start = pos_;
    std::int64_t v = 0;
    switch (internal::scan_int64(t_, pos_, v)) {
      case internal::ScanInt::Ok:
        return v;
      case internal::ScanInt::NotAnInteger:
        error(start, std::string("an integer (") + what + ")");
      case internal::ScanInt::TooLarge:
        error(start, std::string("an integer that fits in 64 bits (") + what + ")");
    }
    error(start, "an integer");
  }

  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  void expect_char(char c, const std::string& expected) {
    if (peek() != c || pos_ >= t_.size()) error(pos_, expected);
    ++pos_;
  }
  void expect_end(const std::string& expected) {
    if (pos_ != t_.size()) error(pos_, expected);
  }
  [[noreturn]] void error(std::size_t at, const std::string& expected) const {
    throw ParseError(t_, at, expected);
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

}  // namespace

AxeLayout parse_thread_layout(std::string_view spec, std::span<const std::int64_t> shape) {
  if (!kind_at(spec, 0)) return parse_axe_layout(spec);
  try {
    SpecParser p(spec);
    return from_linear(p.form(shape)).layout;
  } catch (const ParseError&) {
    throw;
  } catch (const Error& e) {
    fail("thread layout '" + std::string(spec) + "' on " + list_text(shape) + ": " + e.what());
  }
}

std::string thread_layout_spec_help() {
  return "SPEC, THREADS: an Axe layout (S[...]) or a thread-layout spec on the tile --shape:\n"
         "    blocked:SPT/TPW/WPC[/ORDER]  Triton BlockedLayout: size per thread, threads per\n"
         "                                 warp, warps per CTA, order (dims fastest first;\n"
         "                                 default row-major), comma-separated lists,\n"
         "                                 e.g. blocked:1,4/8,4/4,1/1,0\n"
         "    mma:WPC                      mma.sync m16n8 accumulator, e.g. mma:2,2\n"
         "    wgmma:N/WPC                  wgmma 16xNx16 accumulator, e.g. wgmma:128/4,1\n"
         "    slice:D:PARENT               PARENT on the shape with extent 1 inserted at D,\n"
         "                                 dim D dropped, e.g. slice:1:mma:4,1\n"
         "    linear:{\"reg\":[[..]],\"lane\":[[..]],\"warp\":[[..]]}\n"
         "                                 bases as logical coordinates [dim0, dim1, ...],\n"
         "                                 as `axe linear --json` prints \"in\"";
}

}  // namespace axe::linear
