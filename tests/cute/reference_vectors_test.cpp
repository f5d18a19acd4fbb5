// Checks every case of ../shared/testdata/cute_reference_vectors.json (schema in
// ../shared/testdata/README.md; path overridable with AXE_CUTE_VECTORS).
//
// * A case without `cpp_model`, with `post_ok` not false and without `negative_strides` must match
//   the reference exactly: printed form, size, rank, depth, cosize, values and samples (plus the
//   idx2crd/crd2idx/modes lists of op `layout`, the offset of `slice`, the masks of `swizzle`);
//   where the reference raised, we must throw axe::Error.
// * A case with `cpp_model` follows C++ CuTe: reject for kind cpp_rejects, otherwise print
//   cpp_model.str (and satisfy the post-conditions when cpp_model.post_ok).
// * Other cases (post_ok false, negative strides) must satisfy the operation's post-conditions
//   (checkers below, in the style of CuTe's test_complement).
//
// Two documented divergences are counted separately (they do not fail the test):
// * idx2crd of a per-mode index list: pycute's idx2crd((i0,i1,...), shape) uses the prefix-product
//   strides of the WHOLE shape inside each mode, e.g. idx2crd((1,3), (2,(2,2))) gives (1,(1,0)),
//   which is not even consistent with pycute's own crd2idx((1,3)) == 7. C++ CuTe (and we) give
//   (1,(1,1)). We check our answer round-trips through crd2idx and that the reference's entry is
//   exactly pycute's formula.
// * cpp_model strings with a negative extent, e.g. complement((4):(-1), 2) == "(-1,0):(1,-4)" and
//   left_inverse(4:-1) == "(-1,4):(0,1)": C++ CuTe (negative strides are beta there) builds a
//   layout with a negative extent; axe::cute::Layout forbids negative extents, so we reject those
//   inputs with axe::Error instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "axe/cute/layout.hpp"
#include "axe/cute/swizzle.hpp"
#include "json_reader.hpp"
#include "support/test_support.hpp"

namespace {

using axe::cute::ComposedLayout;
using axe::cute::IntTuple;
using axe::cute::Layout;
using axe::cute::Swizzle;
using axe::cute::Tiler;
namespace json = axe::test::json;
namespace cu = axe::cute;

IntTuple to_tuple(const json::Value& v) {
  if (v.is_null()) return cu::underscore();
  if (v.is_int()) return v.as_int();
  std::vector<IntTuple> e;
  for (const json::Value& x : v.items()) e.push_back(to_tuple(x));
  return IntTuple::tuple(std::move(e));
}

// Builds the layout from shape/stride and checks that its text form round-trips.
Layout to_layout(const json::Value& v, std::vector<std::string>& problems) {
  Layout l(to_tuple(v.at("shape")), to_tuple(v.at("stride")));
  if (const json::Value* s = v.find("str")) {
    if (cu::to_string(l) != s->as_string()) {
      problems.push_back("input prints as " + cu::to_string(l) + ", expected " + s->as_string());
    }
    if (!(cu::parse_layout(s->as_string()) == l)) problems.push_back("input text does not parse");
  }
  return l;
}

Tiler to_tiler(const json::Value& v, std::vector<std::string>& problems) {
  const std::string& kind = v.at("kind").as_string();
  if (kind == "none") return Tiler::none();
  if (kind == "int") return Tiler::of_int(v.at("value").as_int());
  if (kind == "layout") return Tiler(to_layout(v, problems));
  std::vector<Tiler> elems;
  for (const json::Value& e : v.at("elems").items()) elems.push_back(to_tiler(e, problems));
  return Tiler::tuple(std::move(elems));
}

bool has_negative_leaf(const IntTuple& t) {
  for (const IntTuple& e : cu::flatten_leaves(t)) {
    if (e.is_int() && e.value() < 0) return true;
  }
  return false;
}

// Indices to evaluate for a function check: everything up to 4096, else a strided sample that
// includes the last index.
std::vector<std::int64_t> indices(std::int64_t n) {
  std::vector<std::int64_t> out;
  if (n <= 4096) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::int64_t step = n / 4096 + 1;
  for (std::int64_t i = 0; i < n; i += step) out.push_back(i);
  out.push_back(n - 1);
  return out;
}

std::string str(const Layout& l) {
  return cu::to_string(l);
}

// ---- post-condition checkers (empty string = ok) ----

std::string check_same_function(const Layout& want, const Layout& got, std::int64_t n) {
  for (std::int64_t i : indices(n)) {
    if (want(i) != got(i)) {
      return "value at " + std::to_string(i) + ": " + std::to_string(got(i)) +
             " != " + std::to_string(want(i));
    }
  }
  return "";
}

std::string check_composition(const Layout& a, const Tiler& b, const Layout& r) {
  if (b.is_none()) return r == a ? "" : "composition with _ changed the layout";
  if (b.is_tuple()) {
    if (cu::rank(r) != b.elems().size()) return "rank of a by-mode composition";
    for (std::size_t k = 0; k < b.elems().size(); ++k) {
      std::string e = check_composition(a.mode(k), b.elems()[k], r.mode(k));
      if (!e.empty()) return "mode<" + std::to_string(k) + ">: " + e;
    }
    return "";
  }
  const Layout& bl = b.layout();
  if (!cu::compatible(bl.shape(), r.shape())) return "not compatible(B,R)";
  for (std::int64_t i : indices(cu::size(bl))) {
    if (r(i) != a(bl(i))) return "R(" + std::to_string(i) + ") != A(B(i))";
  }
  return "";
}

std::string check_logical_divide(const Layout& a, const Tiler& b, const Layout& r) {
  if (b.is_none()) return r == a ? "" : "divide by _ changed the layout";
  if (b.is_tuple()) {
    for (std::size_t k = 0; k < b.elems().size(); ++k) {
      std::string e = check_logical_divide(a.mode(k), b.elems()[k], r.mode(k));
      if (!e.empty()) return "mode<" + std::to_string(k) + ">: " + e;
    }
    for (std::size_t k = b.elems().size(); k < cu::rank(a); ++k) {
      if (!(r.mode(k) == a.mode(k))) return "untiled mode changed";
    }
    return "";
  }
  if (cu::rank(r) != 2) return "rank != 2";
  return check_composition(a, b, r.mode(0));
}

std::string check_logical_product(const Layout& a, const Tiler& b, const Layout& r) {
  if (b.is_none()) return r == a ? "" : "product with _ changed the layout";
  if (b.is_tuple()) {
    for (std::size_t k = 0; k < b.elems().size(); ++k) {
      std::string e = check_logical_product(a.mode(k), b.elems()[k], r.mode(k));
      if (!e.empty()) return "mode<" + std::to_string(k) + ">: " + e;
    }
    return "";
  }
  if (cu::rank(r) != 2) return "rank != 2";
  if (!(r.mode(0) == a)) return "R0 != A";
  if (!cu::compatible(b.layout().shape(), r.mode(1).shape())) return "not compatible(B,R1)";
  return "";
}

std::string check_complement(const Layout& a, std::int64_t cotarget, const Layout& r) {
  if (cu::size(r) <= 0) return "size>0";
  for (const IntTuple& e : cu::flatten_leaves(r.shape())) {
    if (e.value() == 0) return "no-zero-extent";
  }
  if (cu::cosize(cu::make_layout({a, r})) < cotarget) return "cosize(L,R)>=cotarget";
  std::set<std::int64_t> image;
  for (std::int64_t j = 0; j < cu::size(a); ++j) image.insert(a(j));
  for (std::int64_t i = 1; i < cu::size(r); ++i) {
    if (!(r(i - 1) < r(i))) return "ordered";
    if (image.count(r(i))) return "disjoint";
  }
  return "";
}

// ---- one case ----

struct Outcome {
  bool pass = true;
  std::string why;
  std::string divergence;  // the documented divergence this passing case relies on, if any
};

class CaseRunner {
 public:
  explicit CaseRunner(const json::Value& c) : c_(c), in_(c.at("input")) {
    op_ = c.at("op").as_string();
  }

  Outcome run() {
    if (op_ == "swizzle") return run_swizzle();
    if (op_ == "swizzle_layout") return run_swizzle_layout();

    std::optional<Layout> got;
    std::string err;
    try {
      got = compute();
    } catch (const axe::Error& e) {
      err = e.what();
    } catch (const std::exception& e) {
      return fail(std::string("unexpected exception type: ") + e.what());
    }
    for (const std::string& p : problems_) return fail(p);

    const json::Value* cpp = c_.find("cpp_model");
    const bool negative = c_.has("negative_strides");
    const json::Value* post_ok = c_.find("post_ok");
    if (cpp) {
      if (cpp->at("kind").as_string() == "cpp_rejects") {
        return got ? fail("C++ rejects (" + cpp->at("rejects").as_string() + "), we returned " +
                          str(*got))
                   : Outcome{};
      }
      const std::string& want = cpp->at("str").as_string();
      if (has_negative_leaf(cu::parse_int_tuple(want.substr(0, want.find(':'))))) {
        Outcome o;
        o.divergence = "cpp_model has a negative extent, we reject";
        if (got) return fail("C++ gives " + want + " (negative extent); we must reject");
        return o;
      }
      if (!got) return fail("C++ gives " + want + ", we threw: " + err);
      if (str(*got) != want) return fail("got " + str(*got) + ", C++ gives " + want);
      if (cpp->find("post_ok") && cpp->at("post_ok").as_bool()) {
        std::string e = check_post(*got);
        if (!e.empty()) return fail("post-condition: " + e);
      }
      return {};
    }
    if (c_.has("error")) {
      if (!got) return {};
      if (negative) {
        std::string e = check_post(*got);
        if (e.empty()) return {};
        return fail("reference rejects; our result " + str(*got) + " fails: " + e);
      }
      return fail("reference rejects, we returned " + str(*got));
    }
    if (!got) return fail("we threw: " + err);
    const json::Value& res = c_.at("result");
    if ((post_ok && !post_ok->as_bool()) || negative) {
      std::string e = check_post(*got);
      if (!e.empty()) return fail("post-condition: " + e + " (got " + str(*got) + ")");
      if (!has_post_conditions()) {
        // No named post-conditions (layout, filter, slice, zipped/tiled ops): the form and the
        // values must match; cosize differs by definition for negative strides.
        std::string e2 = compare(*got, res, /*with_cosize=*/false);
        if (!e2.empty()) return fail(e2);
      }
      return {};
    }
    std::string e = compare(*got, res, /*with_cosize=*/true);
    if (!e.empty()) return fail(e);
    return extras(*got, res);
  }

  const std::string& op() const { return op_; }

 private:
  Outcome fail(std::string why) {
    Outcome o;
    o.pass = false;
    o.why = std::move(why);
    return o;
  }

  bool has_post_conditions() const {
    static const std::set<std::string> ops = {
        "coalesce",        "coalesce_profile", "complement",    "composition",   "logical_divide",
        "logical_product", "blocked_product",  "raked_product", "right_inverse", "left_inverse"};
    return ops.count(op_) > 0;
  }

  Layout input_layout() { return to_layout(in_.at("layout"), problems_); }
  Layout a() { return to_layout(in_.at("a"), problems_); }
  Tiler b() {
    Tiler t = to_tiler(in_.at("b"), problems_);
    if (const json::Value* s = in_.find("b_str")) {
      if (!(cu::parse_tiler(s->as_string()) == t)) {
        problems_.push_back("tiler text " + s->as_string() + " parses differently");
      }
    }
    return t;
  }

  Layout compute() {
    if (op_ == "layout") return input_layout();
    if (op_ == "coalesce") return cu::coalesce(input_layout());
    if (op_ == "coalesce_profile") return cu::coalesce(input_layout(), to_tuple(in_.at("profile")));
    if (op_ == "filter") return cu::filter(input_layout());
    if (op_ == "complement") return cu::complement(input_layout(), in_.at("cotarget").as_int());
    if (op_ == "right_inverse") return cu::right_inverse(input_layout());
    if (op_ == "left_inverse") return cu::left_inverse(input_layout());
    if (op_ == "slice") {
      IntTuple coord = to_tuple(in_.at("coord"));
      if (cu::to_string(coord) != in_.at("coord_str").as_string() ||
          !(cu::parse_coord(in_.at("coord_str").as_string()) == coord)) {
        problems_.push_back("coordinate text does not round-trip");
      }
      return cu::slice(coord, input_layout());
    }
    static const std::map<std::string, std::function<Layout(const Layout&, const Tiler&)>> ops = {
        {"composition", [](const Layout& x, const Tiler& y) { return cu::composition(x, y); }},
        {"logical_divide", cu::logical_divide},
        {"zipped_divide", cu::zipped_divide},
        {"tiled_divide", cu::tiled_divide},
        {"logical_product", cu::logical_product},
        {"zipped_product", cu::zipped_product},
        {"tiled_product", cu::tiled_product},
        {"blocked_product",
         [](const Layout& x, const Tiler& y) { return cu::blocked_product(x, y); }},
        {"raked_product", [](const Layout& x, const Tiler& y) { return cu::raked_product(x, y); }},
    };
    auto it = ops.find(op_);
    if (it == ops.end()) throw std::runtime_error("unknown op " + op_);
    Layout x = a();
    Tiler y = b();
    return it->second(x, y);
  }

  std::string check_post(const Layout& r) {
    if (op_ == "coalesce") {
      Layout l = input_layout();
      if (cu::depth(r) > 1) return "depth<=1";
      if (cu::size(r) != cu::size(l)) return "size";
      return check_same_function(l, r, cu::size(l));
    }
    if (op_ == "coalesce_profile") {
      Layout l = input_layout();
      return check_same_function(l, r, cu::size(l));
    }
    if (op_ == "complement") {
      return check_complement(input_layout(), in_.at("cotarget").as_int(), r);
    }
    if (op_ == "composition") return check_composition(a(), b(), r);
    if (op_ == "logical_divide") return check_logical_divide(a(), b(), r);
    if (op_ == "logical_product") return check_logical_product(a(), b(), r);
    if (op_ == "blocked_product" || op_ == "raked_product") {
      Layout x = a();
      Layout y = b().layout();
      if (cu::size(r) != cu::size(x) * cu::size(y)) return "size";
      return "";
    }
    if (op_ == "right_inverse") {
      Layout l = input_layout();
      for (std::int64_t i : indices(cu::size(r))) {
        if (l(r(i)) != i) return "L(R(i))==i at " + std::to_string(i);
      }
      return "";
    }
    if (op_ == "left_inverse") {
      Layout l = input_layout();
      for (std::int64_t i : indices(cu::size(l))) {
        if (l(r(l(i))) != l(i)) return "L(R(L(i)))==L(i) at " + std::to_string(i);
      }
      return "";
    }
    return "";
  }

  // Exact comparison with a reference result layout.
  std::string compare(const Layout& got, const json::Value& res, bool with_cosize) {
    if (str(got) != res.at("str").as_string()) {
      return "got " + str(got) + ", reference " + res.at("str").as_string();
    }
    if (cu::size(got) != res.at("size").as_int()) return "size";
    if (static_cast<std::int64_t>(cu::rank(got)) != res.at("rank").as_int()) return "rank";
    if (cu::depth(got) != res.at("depth").as_int()) return "depth";
    const json::Value& cs = res.at("cosize");
    if (with_cosize && !cs.is_null() && cu::cosize(got) != cs.as_int()) return "cosize";
    const auto& vals = res.at("values").items();
    for (std::size_t i = 0; i < vals.size(); ++i) {
      if (got(static_cast<std::int64_t>(i)) != vals[i].as_int()) {
        return "value at " + std::to_string(i);
      }
    }
    if (const json::Value* samples = res.find("samples")) {
      for (const json::Value& s : samples->items()) {
        if (got(s[0].as_int()) != s[1].as_int())
          return "sample at " + std::to_string(s[0].as_int());
      }
    }
    return "";
  }

  Outcome extras(const Layout& got, const json::Value& res) {
    Outcome o;
    if (op_ == "slice") {
      std::int64_t off = cu::slice_offset(to_tuple(in_.at("coord")), input_layout());
      if (off != res.at("offset").as_int()) return fail("slice offset " + std::to_string(off));
    }
    if (op_ != "layout") return o;
    for (const json::Value& pair : res.at("idx2crd").items()) {
      IntTuple in = to_tuple(pair[0]);
      IntTuple want = to_tuple(pair[1]);
      IntTuple ours = cu::idx2crd(in, got.shape());
      if (ours == want) continue;
      // Documented pycute quirk for per-mode index lists (see the file comment).
      if (in.is_tuple() && want == pycute_idx2crd(in, got.shape(), prefix_product(got.shape())) &&
          cu::crd2idx(ours, got.shape()) == cu::crd2idx(in, got.shape())) {
        o.divergence = "pycute idx2crd of a per-mode index list";
        continue;
      }
      return fail("idx2crd(" + cu::to_string(in) + ") = " + cu::to_string(ours) + ", reference " +
                  cu::to_string(want));
    }
    for (const json::Value& pair : res.at("crd2idx").items()) {
      IntTuple crd = to_tuple(pair[0]);
      if (got(crd) != pair[1].as_int()) return fail("crd2idx(" + cu::to_string(crd) + ")");
    }
    const auto& modes = res.at("modes").items();
    if (modes.size() != cu::rank(got)) return fail("number of modes");
    for (std::size_t i = 0; i < modes.size(); ++i) {
      if (str(got.mode(i)) != modes[i].as_string()) return fail("mode " + std::to_string(i));
    }
    return o;
  }

  // pycute's prefix_product: exclusive prefix products of the leaves (no zeroing of extent 1).
  static IntTuple prefix_product(const IntTuple& shape) {
    std::int64_t current = 1;
    std::function<IntTuple(const IntTuple&)> go = [&](const IntTuple& s) -> IntTuple {
      if (s.is_int()) {
        IntTuple d = current;
        current *= s.value();
        return d;
      }
      std::vector<IntTuple> out;
      for (const IntTuple& e : s.elems()) out.push_back(go(e));
      return IntTuple::tuple(std::move(out));
    };
    return go(shape);
  }

  // pycute's idx2crd(idx, shape, stride) with stride = prefix_product(shape) of the whole shape.
  static IntTuple pycute_idx2crd(const IntTuple& idx, const IntTuple& shape,
                                 const IntTuple& stride) {
    if (idx.is_tuple()) {
      std::vector<IntTuple> out;
      for (std::size_t i = 0; i < idx.rank(); ++i) {
        out.push_back(pycute_idx2crd(idx[i], shape[i], stride[i]));
      }
      return IntTuple::tuple(std::move(out));
    }
    if (shape.is_tuple()) {
      std::vector<IntTuple> out;
      for (std::size_t i = 0; i < shape.rank(); ++i) {
        out.push_back(pycute_idx2crd(idx, shape[i], stride[i]));
      }
      return IntTuple::tuple(std::move(out));
    }
    return (idx.value() / stride.value()) % shape.value();
  }

  Outcome run_swizzle() {
    int bits = static_cast<int>(in_.at("bits").as_int());
    int base = static_cast<int>(in_.at("base").as_int());
    int shift = static_cast<int>(in_.at("shift").as_int());
    std::optional<Swizzle> sw;
    try {
      sw = Swizzle(bits, base, shift);
    } catch (const axe::Error&) {
    }
    if (c_.has("error")) return sw ? fail("reference rejects this swizzle") : Outcome{};
    if (!sw) return fail("we rejected a valid swizzle");
    const json::Value& res = c_.at("result");
    if (cu::to_pycute_string(*sw) != res.at("str").as_string()) return fail("str");
    if (!(cu::parse_swizzle(res.at("str").as_string()) == *sw)) return fail("parse of str");
    if (sw->size() != res.at("size").as_int()) return fail("size");
    if (sw->yyy_mask() != res.at("yyy_mask").as_int()) return fail("yyy_mask");
    if (sw->zzz_mask() != res.at("zzz_mask").as_int()) return fail("zzz_mask");
    const auto& vals = res.at("values").items();
    for (std::size_t x = 0; x < vals.size(); ++x) {
      if ((*sw)(static_cast<std::int64_t>(x)) != vals[x].as_int()) {
        return fail("value at " + std::to_string(x));
      }
    }
    return {};
  }

  Outcome run_swizzle_layout() {
    const json::Value& s = in_.at("swizzle");
    Swizzle sw(static_cast<int>(s.at("bits").as_int()), static_cast<int>(s.at("base").as_int()),
               static_cast<int>(s.at("shift").as_int()));
    ComposedLayout cl(sw, in_.at("offset").as_int(), input_layout());
    for (const std::string& p : problems_) return fail(p);
    const json::Value& res = c_.at("result");
    if (cu::to_pycute_string(cl) != res.at("str").as_string()) return fail("str");
    if (!(cu::parse_composed_layout(res.at("str").as_string()) == cl)) return fail("parse");
    if (!(cu::parse_composed_layout(cu::to_string(cl)) == cl)) return fail("C++ form parse");
    if (cu::size(cl) != res.at("size").as_int()) return fail("size");
    const auto& vals = res.at("values").items();
    for (std::size_t i = 0; i < vals.size(); ++i) {
      if (cl(static_cast<std::int64_t>(i)) != vals[i].as_int()) return fail("value");
    }
    if (const json::Value* v2 = res.find("values_2d")) {
      for (std::size_t i = 0; i < v2->size(); ++i) {
        for (std::size_t j = 0; j < (*v2)[i].size(); ++j) {
          IntTuple crd =
              IntTuple::tuple({static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)});
          if (cl(crd) != (*v2)[i][j].as_int()) return fail("values_2d");
        }
      }
    }
    return {};
  }

  const json::Value& c_;
  const json::Value& in_;
  std::string op_;
  std::vector<std::string> problems_;
};

std::string vectors_path() {
  const std::string p = axe::tunable("AXE_CUTE_VECTORS");
  return p.empty() ? axe::test::testdata_dir() + "/cute_reference_vectors.json" : p;
}

TEST(ReferenceVectors, EveryCaseMatchesCuTe) {
  json::Value doc = json::parse_file(vectors_path());
  const auto& cases = doc.at("cases").items();
  ASSERT_EQ(static_cast<std::int64_t>(cases.size()), doc.at("meta").at("n_cases").as_int());

  std::map<std::string, std::pair<int, int>> per_op;  // passed, total
  std::vector<std::string> failures;
  std::map<std::string, std::vector<std::string>> divergences;  // kind -> ids
  for (const json::Value& c : cases) {
    const std::string id = c.at("id").as_string();
    Outcome o;
    std::string op = c.at("op").as_string();
    try {
      CaseRunner runner(c);
      o = runner.run();
    } catch (const std::exception& e) {
      o.pass = false;
      o.why = std::string("exception: ") + e.what();
    }
    auto& [passed, total] = per_op[op];
    ++total;
    if (o.pass) ++passed;
    if (!o.pass) failures.push_back(id + ": " + o.why);
    if (o.pass && !o.divergence.empty()) divergences[o.divergence].push_back(id);
  }

  std::ostringstream report;
  int all_passed = 0;
  int all_total = 0;
  for (const auto& [op, pt] : per_op) {
    report << "  " << op << ": " << pt.first << "/" << pt.second << "\n";
    all_passed += pt.first;
    all_total += pt.second;
  }
  report << "  total: " << all_passed << "/" << all_total << "\n";
  for (const auto& [kind, ids] : divergences) {
    report << "  documented divergence '" << kind << "' (passing): " << ids.size() << " cases:";
    for (std::size_t i = 0; i < ids.size() && i < 12; ++i) report << " " << ids[i];
    if (ids.size() > 12) report << " ...";
    report << "\n";
  }
  std::cout << "[reference vectors]\n" << report.str() << "\n";

  std::ostringstream fails;
  for (std::size_t i = 0; i < failures.size() && i < 40; ++i) fails << "  " << failures[i] << "\n";
  if (failures.size() > 40) fails << "  ... and " << failures.size() - 40 << " more\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " failing cases:\n" << fails.str();
}

}  // namespace
