// `axe cute OP ARG...`: the CuTe layout algebra (DESIGN.md §2.1) on text operands.
//
// Operands use the reference vectors' text forms: layouts `((2,3),4):((1,2),6)` (an integer n is
// n:1), tilers `<8:1,_>`, coordinates `(1,_,(0,2))`, composed layouts `Sw<3,4,3> o 0 o L`.
// A layout result prints as its text form; with --json as
//   {"result": TEXT, "size": N, "cosize": C, "rank": R, "depth": D, "values": [L(0), ...],
//    "values_complete": BOOL}
// (values capped at util::kMaxListed).
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/int_tuple.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

using cute::IntTuple;
using cute::Layout;

constexpr const char* kCuteUsage =
    "cute OP ARG...  CuTe algebra; OP is one of:\n"
    "      composition A B | complement A [COTARGET] | coalesce A [PROFILE] | filter A |\n"
    "      flatten A | right_inverse A | left_inverse A | tile_to_shape A SHAPE |\n"
    "      logical_divide|zipped_divide|tiled_divide A TILER |\n"
    "      logical_product|zipped_product|tiled_product|blocked_product|raked_product A TILER |\n"
    "      slice A COORD | eval A | swizzle B M S [OFFSET...|LAYOUT]\n"
    "      (layouts ((2,3),4):((1,2),6) or n for n:1, tilers <8:1,_>, coords (1,_,(0,2)),\n"
    "       composed layouts 'Sw<3,4,3> o 0 o (8,64):(64,1)')";

// A function from a 1-D index to an offset, with what print_layout needs: the text, the size, the
// shape (for natural coordinates and the 2-D table) and the least cell width.
struct Evaluable {
  std::string text;
  std::int64_t size = 0;
  std::optional<std::int64_t> cosize;  // absent for an empty layout
  int rank = 0;
  int depth = 0;
  IntTuple shape;
  std::function<std::int64_t(std::int64_t)> at;
};

Evaluable evaluable(const Layout& l) {
  Evaluable e;
  e.text = cute::to_string(l);
  e.size = cute::size(l);
  if (e.size > 0) e.cosize = cute::cosize(l);
  e.rank = static_cast<int>(cute::rank(l));
  e.depth = cute::depth(l);
  e.shape = l.shape();
  e.at = [l](std::int64_t i) { return l(i); };
  return e;
}

Evaluable evaluable(const cute::ComposedLayout& c) {
  Evaluable e = evaluable(c.layout);
  e.text = cute::to_string(c);
  e.cosize.reset();
  if (e.size > 0) {
    std::int64_t mx = 0;
    for (std::int64_t i = 0; i < std::min(e.size, util::kMaxListed); ++i) mx = std::max(mx, c(i));
    e.cosize = mx + 1;
  }
  e.at = [c](std::int64_t i) { return c(i); };
  return e;
}

void print_json(std::ostream& out, const Evaluable& e, const std::string& extra = "") {
  std::int64_t n = std::min(e.size, util::kMaxListed);
  out << "{\"result\": " << json_string(e.text) << ", \"size\": " << e.size
      << ", \"cosize\": " << (e.cosize ? std::to_string(*e.cosize) : "null")
      << ", \"rank\": " << e.rank << ", \"depth\": " << e.depth << ", \"values\": [";
  for (std::int64_t i = 0; i < n; ++i) out << (i ? ", " : "") << e.at(i);
  out << "], \"values_complete\": " << (n == e.size ? "true" : "false") << extra << "}\n";
}

// print_layout for rank 2 (CuTe's format exactly), otherwise one "coord -> value" line each.
void print_values(std::ostream& out, const Evaluable& e) {
  if (e.size > util::kMaxListed) {
    fail(e.text + " has " + std::to_string(e.size) + " elements, too many to print (limit " +
         std::to_string(util::kMaxListed) + ")");
  }
  out << e.text << "\n";
  if (e.rank == 2 && !e.shape.is_int()) {
    std::int64_t rows = cute::product(e.shape.elems()[0]);
    std::int64_t cols = cute::product(e.shape.elems()[1]);
    util::print_table(
        out, rows, cols,
        [&](std::int64_t i, std::int64_t j) { return std::to_string(e.at(i + j * rows)); },
        e.cosize ? util::digits(*e.cosize) : 1);
    return;
  }
  for (std::int64_t i = 0; i < e.size; ++i) {
    out << cute::to_string(cute::idx2crd(i, e.shape)) << " -> " << e.at(i) << "\n";
  }
}

void print_result(const Args& args, std::ostream& out, const Layout& l) {
  if (args.json) {
    print_json(out, evaluable(l));
  } else {
    out << cute::to_string(l) << "\n";
  }
}

// Operands: CuTe itself allows extent-0 modes, but for the calculator an empty operand is almost
// always a typo, and several operations would only fail later with a less helpful message.
void check_extents(const Layout& l, std::string_view text) {
  for (const auto& leaf : cute::flatten_leaves(l.shape())) {
    if (leaf.value() <= 0) {
      fail("layout '" + std::string(text) + "' has extent " + std::to_string(leaf.value()) +
           "; extents must be positive");
    }
  }
}

void check_extents(const cute::Tiler& t, std::string_view text) {
  if (t.is_layout()) check_extents(t.layout(), text);
  if (t.is_tuple()) {
    for (const auto& e : t.elems()) check_extents(e, text);
  }
}

Layout layout_operand(std::string_view text) {
  Layout l = cute::parse_layout(text);
  check_extents(l, text);
  return l;
}

cute::Tiler tiler_operand(std::string_view text) {
  cute::Tiler t = cute::parse_tiler(text);
  check_extents(t, text);
  return t;
}

cute::ComposedLayout composed_operand(std::string_view text) {
  cute::ComposedLayout c = cute::parse_composed_layout(text);
  check_extents(c.layout, text);
  return c;
}

bool looks_composed(std::string_view text) {
  return text.rfind("Sw<", 0) == 0 || text.rfind("SW_", 0) == 0;
}

// --- the operations -----------------------------------------------------------------------------

using Binary = Layout (*)(const Layout&, const cute::Tiler&);

struct BinaryOp {
  const char* name;
  Binary fn;
};

Layout do_composition(const Layout& a, const cute::Tiler& b) {
  return cute::composition(a, b);
}
Layout do_logical_divide(const Layout& a, const cute::Tiler& b) {
  return cute::logical_divide(a, b);
}
Layout do_zipped_divide(const Layout& a, const cute::Tiler& b) {
  return cute::zipped_divide(a, b);
}
Layout do_tiled_divide(const Layout& a, const cute::Tiler& b) {
  return cute::tiled_divide(a, b);
}
Layout do_logical_product(const Layout& a, const cute::Tiler& b) {
  return cute::logical_product(a, b);
}
Layout do_zipped_product(const Layout& a, const cute::Tiler& b) {
  return cute::zipped_product(a, b);
}
Layout do_tiled_product(const Layout& a, const cute::Tiler& b) {
  return cute::tiled_product(a, b);
}
Layout do_blocked_product(const Layout& a, const cute::Tiler& b) {
  return cute::blocked_product(a, b);
}
Layout do_raked_product(const Layout& a, const cute::Tiler& b) {
  return cute::raked_product(a, b);
}

constexpr BinaryOp kBinary[] = {
    {"composition", &do_composition},         {"logical_divide", &do_logical_divide},
    {"zipped_divide", &do_zipped_divide},     {"tiled_divide", &do_tiled_divide},
    {"logical_product", &do_logical_product}, {"zipped_product", &do_zipped_product},
    {"tiled_product", &do_tiled_product},     {"blocked_product", &do_blocked_product},
    {"raked_product", &do_raked_product},
};

void expect_operands(const Args& args, std::size_t lo, std::size_t hi, const std::string& form) {
  std::size_t n = args.positional.size() - 1;
  if (n < lo || n > hi) {
    fail("cute " + args.positional[0] + ": " + (n < lo ? "missing operands" : "too many operands") +
         "; usage: axe cute " + form);
  }
}

int run_swizzle(const Args& args, std::ostream& out) {
  const auto& p = args.positional;
  if (p.size() < 4)
    fail("cute swizzle: missing operands; usage: axe cute swizzle B M S [OFFSET...]");
  auto bits = util::parse_int(p[1], "swizzle B");
  auto base = util::parse_int(p[2], "swizzle M");
  auto shift = util::parse_int(p[3], "swizzle S");
  auto narrow = [](std::int64_t v, const char* what) {
    if (v < -64 || v > 64)
      fail(std::string("swizzle ") + what + " = " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  };
  cute::Swizzle sw(narrow(bits, "B"), narrow(base, "M"), narrow(shift, "S"));
  if (p.size() == 5 && !p[4].empty() && (p[4].find(':') != std::string::npos || p[4][0] == '(')) {
    // A layout operand: the composed layout sw o 0 o L.
    cute::ComposedLayout c(sw, 0, layout_operand(p[4]));
    if (args.json) {
      print_json(out, evaluable(c));
    } else {
      print_values(out, evaluable(c));
    }
    return 0;
  }
  std::vector<std::int64_t> xs;
  for (std::size_t k = 4; k < p.size(); ++k) {
    auto x = util::parse_int(p[k], "swizzle OFFSET");
    if (x < 0) fail("swizzle OFFSET " + std::to_string(x) + " must be non-negative");
    xs.push_back(x);
  }
  std::int64_t period = sw.size();
  bool all = xs.empty();
  if (all) {
    for (std::int64_t x = 0; x < std::min(period, util::kMaxListed); ++x) xs.push_back(x);
  }
  std::vector<std::int64_t> ys;
  for (auto x : xs) ys.push_back(sw(x));
  if (args.json) {
    out << "{\"result\": " << json_string(cute::to_string(sw)) << ", \"size\": " << period
        << ", \"offsets\": " << util::json_array(xs) << ", \"values\": " << util::json_array(ys)
        << "}\n";
    return 0;
  }
  out << cute::to_string(sw) << "\n";
  for (std::size_t k = 0; k < xs.size(); ++k) out << xs[k] << " -> " << ys[k] << "\n";
  return 0;
}

int run_cute(const Args& args, std::ostream& out) {
  args.allow_only({});
  if (args.positional.empty()) fail(std::string("missing OP; usage: axe ") + kCuteUsage);
  const std::string& op = args.positional[0];
  const auto& p = args.positional;

  for (const auto& b : kBinary) {
    if (op == b.name) {
      expect_operands(args, 2, 2, op + " A B");
      print_result(args, out, b.fn(layout_operand(p[1]), tiler_operand(p[2])));
      return 0;
    }
  }
  if (op == "complement") {
    expect_operands(args, 1, 2, "complement A [COTARGET]");
    Layout a = layout_operand(p[1]);
    if (p.size() == 2) {
      print_result(args, out, cute::complement(a));
    } else if (!p[2].empty() && p[2][0] == '(') {
      print_result(args, out, cute::complement(a, cute::parse_int_tuple(p[2])));
    } else {
      auto cotarget = util::parse_int(p[2], "complement COTARGET");
      if (cotarget <= 0) {
        fail("complement COTARGET " + std::to_string(cotarget) + " must be positive");
      }
      print_result(args, out, cute::complement(a, cotarget));
    }
    return 0;
  }
  if (op == "coalesce") {
    expect_operands(args, 1, 2, "coalesce A [PROFILE]");
    Layout a = layout_operand(p[1]);
    print_result(
        args, out,
        p.size() == 3 ? cute::coalesce(a, cute::parse_int_tuple(p[2])) : cute::coalesce(a));
    return 0;
  }
  if (op == "right_inverse" || op == "left_inverse" || op == "filter" || op == "flatten") {
    expect_operands(args, 1, 1, op + " A");
    Layout a = layout_operand(p[1]);
    print_result(args, out,
                 op == "right_inverse"  ? cute::right_inverse(a)
                 : op == "left_inverse" ? cute::left_inverse(a)
                 : op == "filter"       ? cute::filter(a)
                                        : cute::flatten(a));
    return 0;
  }
  if (op == "tile_to_shape") {
    expect_operands(args, 2, 2, "tile_to_shape A SHAPE");
    print_result(args, out, cute::tile_to_shape(layout_operand(p[1]), cute::parse_int_tuple(p[2])));
    return 0;
  }
  if (op == "slice") {
    expect_operands(args, 2, 2, "slice A COORD");
    Layout a = layout_operand(p[1]);
    IntTuple coord = cute::parse_coord(p[2]);
    Layout r = cute::slice(coord, a);
    std::int64_t offset = cute::slice_offset(coord, a);
    if (args.json) {
      print_json(out, evaluable(r), ", \"offset\": " + std::to_string(offset));
    } else {
      out << cute::to_string(r) << "\noffset " << offset << "\n";
    }
    return 0;
  }
  if (op == "eval") {
    expect_operands(args, 1, 1, "eval A");
    Evaluable e =
        looks_composed(p[1]) ? evaluable(composed_operand(p[1])) : evaluable(layout_operand(p[1]));
    if (args.json) {
      print_json(out, e);
    } else {
      print_values(out, e);
    }
    return 0;
  }
  if (op == "swizzle") return run_swizzle(args, out);
  fail("unknown cute operation '" + op + "'; usage: axe " + kCuteUsage);
}

const bool registered = [] {
  register_command({"cute", kCuteUsage, &run_cute});
  return true;
}();

}  // namespace
}  // namespace axe::cli
