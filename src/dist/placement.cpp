#include "axe/dist/placement.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "axe/core/error.hpp"
#include "dist/internal.hpp"

namespace axe {

using internal::shape_text;

namespace {
AxisPlacement placement(AxisPlacement::Kind kind, int dim, ReduceOp op,
                        std::initializer_list<std::string_view> axes) {
  AxisPlacement p;
  p.kind = kind;
  p.dim = dim;
  p.op = op;
  for (auto a : axes) p.axes.emplace_back(a);
  return p;
}
}  // namespace

AxisPlacement Shard(int dim) { return placement(AxisPlacement::Kind::Shard, dim, ReduceOp::Sum, {}); }
AxisPlacement Shard(int dim, std::initializer_list<std::string_view> axes) {
  return placement(AxisPlacement::Kind::Shard, dim, ReduceOp::Sum, axes);
}
AxisPlacement Replicate() { return AxisPlacement{}; }
AxisPlacement Partial(ReduceOp op) { return placement(AxisPlacement::Kind::Partial, 0, op, {}); }
AxisPlacement Partial(ReduceOp op, std::initializer_list<std::string_view> axes) {
  return placement(AxisPlacement::Kind::Partial, 0, op, axes);
}

namespace {
std::string axes_text(const std::vector<Axis>& axes) {
  std::string s = "{";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::string(axes[i].name());
  return s + "}";
}
}  // namespace

std::string to_string(const AxisPlacement& p) {
  switch (p.kind) {
    case AxisPlacement::Kind::Replicate: return "R";
    case AxisPlacement::Kind::Shard:
      return "S(" + std::to_string(p.dim) + (p.axes.empty() ? "" : "," + axes_text(p.axes)) + ")";
    case AxisPlacement::Kind::Partial:
      if (p.op == ReduceOp::Sum && p.axes.empty()) return "P";
      return "P(" + std::string(to_string(p.op)) + (p.axes.empty() ? "" : "," + axes_text(p.axes)) + ")";
  }
  return "?";
}

std::vector<AxisPlacement> parse_placements(std::string_view text) {
  std::vector<AxisPlacement> out;
  std::size_t i = 0;
  auto ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto expect = [&](char c, const char* what) {
    ws();
    if (i >= text.size() || text[i] != c) throw ParseError(text, i, what);
    ++i;
  };
  auto word = [&] {
    ws();
    std::size_t b = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '-'))
      ++i;
    return text.substr(b, i - b);
  };
  auto axes = [&](AxisPlacement& p) {
    expect('{', "'{' starting a list of mesh axes");
    while (true) {
      auto w = word();
      if (w.empty()) throw ParseError(text, i, "a mesh axis name");
      p.axes.emplace_back(w);
      ws();
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      break;
    }
    expect('}', "'}' closing the list of mesh axes");
  };
  while (true) {
    ws();
    std::size_t start = i;
    auto w = word();
    AxisPlacement p;
    if (w == "R" || w == "Replicate") {
      p = Replicate();
      ws();
      if (i + 1 < text.size() && text[i] == '(' && text[i + 1] == ')') i += 2;
    } else if (w == "S" || w == "Shard") {
      expect('(', "'(' after S");
      auto num = word();
      int dim = 0;
      try {
        std::size_t used = 0;
        dim = std::stoi(std::string(num), &used);
        if (used != num.size()) throw std::invalid_argument("x");
      } catch (const std::exception&) {
        throw ParseError(text, start, "a dim number in S(d)");
      }
      p = Shard(dim);
      ws();
      if (i < text.size() && text[i] == ',') {
        ++i;
        axes(p);
      }
      expect(')', "')' closing S(");
    } else if (w == "P" || w == "Partial") {
      p = Partial();
      ws();
      if (i < text.size() && text[i] == '(') {
        ++i;
        ws();
        if (i < text.size() && text[i] == '{') {
          axes(p);
        } else if (i < text.size() && text[i] != ')') {
          auto op = word();
          try {
            p.op = parse_reduce_op(op);
          } catch (const Error&) {
            throw ParseError(text, start, "a reduction sum, avg, max, min or prod in P(op)");
          }
          ws();
          if (i < text.size() && text[i] == ',') {
            ++i;
            axes(p);
          }
        }
        expect(')', "')' closing P(");
      }
    } else {
      throw ParseError(text, start, "a placement S(d), R or P(op)");
    }
    out.push_back(std::move(p));
    ws();
    if (i == text.size()) break;
    expect(',', "',' between placements");
  }
  return out;
}

std::string to_string(const Sharding& s) {
  std::string r;
  for (std::size_t a = 0; a < s.per_axis.size(); ++a) r += (a ? "," : "") + to_string(s.per_axis[a]);
  return r;
}

Sharding make_sharding(std::size_t ndim, const Mesh& mesh, std::span<const AxisPlacement> ps) {
  Sharding s;
  s.per_axis.assign(mesh.ndim(), Replicate());
  s.dim_axes.assign(ndim, {});
  bool named = !ps.empty() && !ps[0].axes.empty();
  std::string all;
  for (std::size_t i = 0; i < ps.size(); ++i) all += (i ? "," : "") + to_string(ps[i]);
  std::vector<bool> used(mesh.ndim(), false);
  std::optional<ReduceOp> op;
  auto take = [&](std::size_t a, const AxisPlacement& p) {
    if (used[a])
      fail("placements '" + all + "': mesh axis '" + std::string(mesh.axes()[a].name()) + "' used twice");
    used[a] = true;
    AxisPlacement q = p;
    q.axes.clear();
    if (p.kind == AxisPlacement::Kind::Shard) {
      int d = p.dim < 0 ? p.dim + static_cast<int>(ndim) : p.dim;
      if (d < 0 || d >= static_cast<int>(ndim))
        fail("placements '" + all + "': " + to_string(p) + " names dim " + std::to_string(p.dim) +
             " of a " + std::to_string(ndim) + "-d tensor");
      q.dim = d;
      s.dim_axes[static_cast<std::size_t>(d)].push_back(a);
    } else if (p.kind == AxisPlacement::Kind::Partial) {
      if (op && *op != p.op)
        fail("placements '" + all + "': two different Partial reductions (" +
             std::string(to_string(*op)) + " and " + std::string(to_string(p.op)) + ")");
      op = p.op;
    }
    s.per_axis[a] = q;
  };
  s.nested = !named;
  if (!named) {
    if (ps.size() != mesh.ndim())
      fail("placements '" + all + "': " + std::to_string(ps.size()) + " placements for mesh " +
           to_string(mesh) + " with " + std::to_string(mesh.ndim()) + " axes (one per axis)");
    for (std::size_t a = 0; a < ps.size(); ++a) {
      if (!ps[a].axes.empty())
        fail("placements '" + all + "': mixes per-axis placements with named axes");
      take(a, ps[a]);
    }
  } else {
    for (const auto& p : ps) {
      if (p.axes.empty())
        fail("placements '" + all + "': mixes named axes with per-axis placements");
      if (p.kind == AxisPlacement::Kind::Replicate) continue;
      for (Axis ax : p.axes) {
        auto a = mesh.axis_index(ax);
        if (!a)
          fail("placements '" + all + "': unknown mesh axis '" + std::string(ax.name()) +
               "' (mesh " + to_string(mesh) + ")");
        take(*a, p);
      }
    }
  }
  return s;
}

DistLayout shard(std::span<const std::int64_t> shape, const Mesh& mesh, const Sharding& s) {
  const std::size_t nd = shape.size();
  if (s.per_axis.size() != mesh.ndim() || s.dim_axes.size() != nd)
    fail("sharding '" + to_string(s) + "' does not match mesh " + to_string(mesh) + " and shape " +
         shape_text({shape.begin(), shape.end()}));
  std::vector<std::int64_t> chunk(nd), padded(nd);
  for (std::size_t d = 0; d < nd; ++d) {
    if (shape[d] < 1) fail("global shape " + shape_text({shape.begin(), shape.end()}) + " has a dim < 1");
    std::int64_t p = 1;
    for (auto a : s.dim_axes[d]) p *= mesh.sizes()[a];
    chunk[d] = (shape[d] + p - 1) / p;
    padded[d] = checked_mul(chunk[d], p, "padded dim");
  }
  std::vector<std::int64_t> mstride(nd);
  std::int64_t st = 1;
  for (std::size_t d = nd; d-- > 0;) {
    mstride[d] = st;
    st = checked_mul(st, chunk[d], "local size");
  }
  std::vector<Iter> D, R, P;
  ReduceOp op = ReduceOp::Sum;
  for (std::size_t d = 0; d < nd; ++d) {
    for (auto a : s.dim_axes[d]) D.push_back({mesh.sizes()[a], 1, mesh.axes()[a]});
    D.push_back({chunk[d], mstride[d], Axis()});
  }
  for (std::size_t a = 0; a < mesh.ndim(); ++a) {
    const auto& p = s.per_axis[a];
    if (p.kind == AxisPlacement::Kind::Replicate) R.push_back({mesh.sizes()[a], 1, mesh.axes()[a]});
    if (p.kind == AxisPlacement::Kind::Partial) {
      P.push_back({mesh.sizes()[a], 1, mesh.axes()[a]});
      op = p.op;
    }
  }
  std::vector<std::vector<std::int64_t>> nest(nd);
  if (s.nested)
    for (std::size_t d = 0; d < nd; ++d)
      if (s.dim_axes[d].size() >= 2)
        for (auto a : s.dim_axes[d]) nest[d].push_back(mesh.sizes()[a]);
  DistLayout l(std::vector<std::int64_t>(shape.begin(), shape.end()), AxeLayout(D, R, P, {}, op), mesh, padded,
               std::move(nest));
  l.sharding_ = s;
  return l;
}

DistLayout shard(std::span<const std::int64_t> shape, const Mesh& mesh,
                 std::span<const AxisPlacement> placements) {
  return shard(shape, mesh, make_sharding(shape.size(), mesh, placements));
}

DistLayout::DistLayout(std::vector<std::int64_t> shape, AxeLayout layout, Mesh mesh,
                       std::vector<std::int64_t> padded, std::vector<std::vector<std::int64_t>> nest)
    : shape_(std::move(shape)), layout_(std::move(layout)), mesh_(std::move(mesh)) {
  for (auto e : shape_)
    if (e < 1) fail("global shape " + shape_text(shape_) + " has a dim < 1");
  if (padded.empty()) {
    padded_ = internal::infer_padded(layout_, shape_);
  } else {
    padded_ = std::move(padded);
    std::int64_t n = 1;
    for (auto e : padded_) n = checked_mul(n, e, "padded size");
    if (padded_.size() != shape_.size() || n != layout_.size())
      fail("layout '" + to_string(layout_) + "' of size " + std::to_string(layout_.size()) +
           " does not admit padded shape " + shape_text(padded_));
    for (std::size_t k = 0; k < shape_.size(); ++k)
      if (padded_[k] < shape_[k])
        fail("padded shape " + shape_text(padded_) + " is smaller than global shape " + shape_text(shape_));
  }
  if (!nest.empty()) {
    if (nest.size() != shape_.size())
      fail("nested bounds for " + std::to_string(nest.size()) + " dims of global shape " + shape_text(shape_));
    bool any = false;
    for (std::size_t k = 0; k < nest.size(); ++k) {
      if (nest[k].size() < 2) {
        nest[k].clear();
        continue;
      }
      std::int64_t p = 1;
      for (auto e : nest[k]) {
        if (e < 1) fail("nested bound of dim " + std::to_string(k) + " has a part < 1: " + shape_text(nest[k]));
        p = checked_mul(p, e, "nested parts");
      }
      if (checked_mul(p, (shape_[k] + p - 1) / p, "nested padded dim") != padded_[k])
        fail("nested bound " + shape_text(nest[k]) + " of dim " + std::to_string(k) + " (size " +
             std::to_string(shape_[k]) + ") needs padded extent " + std::to_string(p * ((shape_[k] + p - 1) / p)) +
             ", layout '" + to_string(layout_) + "' has " + std::to_string(padded_[k]));
      auto segs = internal::nest_segments(shape_[k], padded_[k], nest[k]);
      if (segs.size() == 1 && segs[0].shift == 0) nest[k].clear();  // the plain bound
      any = any || !nest[k].empty();
    }
    if (any) nest_ = std::move(nest);
  }
  internal::Side s = internal::make_side(*this);
  local_elements_ = internal::check_side(s);
}

bool DistLayout::nested() const { return !nest_.empty(); }

std::int64_t DistLayout::padded_index(std::size_t k, std::int64_t i) const {
  if (nest_.empty() || nest_[k].empty()) return i;
  std::int64_t size = shape_[k], P = padded_[k], res = 0;
  for (auto p : nest_[k]) {
    const std::int64_t c = (size + p - 1) / p, block = P / p;
    const std::int64_t q = c > 0 ? i / c : 0;
    res += q * block;
    i -= q * c;
    size = std::clamp<std::int64_t>(size - q * c, 0, c);
    P = block;
  }
  return res + i;
}

std::optional<std::int64_t> DistLayout::logical_index(std::size_t k, std::int64_t pi) const {
  if (pi < 0 || pi >= padded_[k]) return std::nullopt;
  if (nest_.empty() || nest_[k].empty()) {
    if (pi < shape_[k]) return pi;
    return std::nullopt;
  }
  std::int64_t size = shape_[k], P = padded_[k], res = 0;
  for (auto p : nest_[k]) {
    const std::int64_t c = (size + p - 1) / p, block = P / p;
    const std::int64_t q = pi / block;
    res += q * c;
    pi -= q * block;
    size = std::clamp<std::int64_t>(size - q * c, 0, c);
    P = block;
  }
  if (pi < size) return res + pi;
  return std::nullopt;
}

std::int64_t DistLayout::elements() const {
  std::int64_t n = 1;
  for (auto e : shape_) n *= e;
  return n;
}

std::string to_string(const DistLayout& l) {
  std::string s = to_string(l.layout()) + " on " + to_string(l.mesh()) + " shape " + shape_text(l.shape());
  if (l.padded_shape() != l.shape()) s += " padded " + shape_text(l.padded_shape());
  if (l.nested())
    for (std::size_t k = 0; k < l.nest().size(); ++k)
      if (!l.nest()[k].empty()) s += " nested d" + std::to_string(k) + ":" + shape_text(l.nest()[k]);
  return s;
}

std::int64_t StridedRegion::elements() const {
  std::int64_t n = 1;
  for (const auto& m : modes) n *= m.extent;
  return n;
}

std::string to_string(const StridedRegion& r) {
  // A box when every dim has at most one unit-step mode.
  std::vector<int> count(r.begin.size(), 0);
  bool box = true;
  for (const auto& m : r.modes) {
    if (m.step != 1 || count[static_cast<std::size_t>(m.dim)]++) box = false;
  }
  std::string s = "[";
  if (box) {
    for (std::size_t d = 0; d < r.begin.size(); ++d) {
      std::int64_t e = 1;
      for (const auto& m : r.modes)
        if (m.dim == static_cast<int>(d)) e = m.extent;
      s += (d ? ", " : "") + std::to_string(r.begin[d]) + ":" + std::to_string(r.begin[d] + e);
    }
    return s + "]";
  }
  s += "begin " + shape_text(r.begin);
  for (const auto& m : r.modes)
    s += ", dim " + std::to_string(m.dim) + " " + std::to_string(m.extent) + "x" + std::to_string(m.step);
  return s + "]";
}

LocalShard local_shard(const DistLayout& l, std::int64_t rank) {
  LocalShard out;
  out.storage = storage(l.layout());
  const std::size_t nd = l.shape().size();
  out.shape.assign(nd, 0);
  if (!l.mesh().contains(rank)) return out;
  out.buffer_elements = l.local_elements();
  const internal::Side side = internal::make_side(l);
  internal::held_regions(side, rank, out.regions, out.terms);
  // Distinct indices per dim over the regions of term 0, replica chosen.
  for (std::size_t d = 0; d < nd; ++d) {
    std::vector<bool> seen(static_cast<std::size_t>(l.shape()[d]), false);
    std::int64_t count = 0;
    for (const auto& r : out.regions) {
      std::vector<std::int64_t> ext, step;
      for (const auto& m : r.modes)
        if (m.dim == static_cast<int>(d)) {
          ext.push_back(m.extent);
          step.push_back(m.step);
        }
      std::vector<std::int64_t> idx(ext.size(), 0);
      while (true) {
        std::int64_t x = r.begin[d];
        for (std::size_t j = 0; j < ext.size(); ++j) x += idx[j] * step[j];
        if (x < l.shape()[d] && !seen[static_cast<std::size_t>(x)]) {
          seen[static_cast<std::size_t>(x)] = true;
          ++count;
        }
        std::size_t j = ext.size();
        while (j > 0 && ++idx[j - 1] == ext[j - 1]) idx[--j] = 0;
        if (j == 0) break;
      }
    }
    out.shape[d] = count;
  }
  if (out.regions.empty()) {
    for (std::size_t d = 0; d < nd; ++d) {
      bool split = false;
      for (const auto& it : side.dims[d]) split = split || it.axis < side.naxes;
      out.shape[d] = split ? 0 : l.shape()[d];
    }
  }
  return out;
}

}  // namespace axe
