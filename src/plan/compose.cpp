// compose_message (axe/plan/compose.hpp): a message's send and receive boxes joined element for
// element.
#include "axe/plan/compose.hpp"

#include <algorithm>
#include <deque>

#include "plan/internal.hpp"

namespace axe {
namespace {

// One side of a box: where its elements lie in one buffer (row-major over the extents).
struct Side {
  ModeVector extents, strides;
  std::int64_t offset = 0;
  std::int64_t term = 0;
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (const auto e : extents) n *= e;
    return n;
  }
};

Side src_side(const Transfer& t) { return {t.extents, t.src_strides, t.src_offset, t.term}; }
Side dst_side(const Transfer& t) { return {t.extents, t.dst_strides, t.dst_offset, t.term}; }

// The pieces of `s` holding its elements [lo, hi), in order (internal::sub_boxes on a box whose
// both sides are `s`).
void cut(const Side& s, std::int64_t lo, std::int64_t hi, std::deque<Side>& front) {
  const Transfer t{s.extents, s.offset, s.strides, s.offset, s.strides, s.term};
  std::vector<Transfer> parts;
  internal::sub_boxes(t, lo, hi, parts);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) front.push_front(src_side(*it));
}

// The side without extent-1 modes (they move nothing), as (extents, strides).
Side squeezed(const Side& s) {
  Side r;
  r.offset = s.offset;
  r.term = s.term;
  for (std::size_t i = 0; i < s.extents.size(); ++i)
    if (s.extents[i] != 1) {
      r.extents.push_back(s.extents[i]);
      r.strides.push_back(s.strides[i]);
    }
  return r;
}

// Strides of side `s` (no extent-1 modes) over the refined modes between consecutive `bounds`
// (suffix products, descending from its element count to 1); nullopt when a bound falls inside a
// mode at a point that does not divide it evenly.
std::optional<ModeVector> refine(const Side& s, const std::vector<std::int64_t>& bounds) {
  const std::size_t n = s.extents.size();
  std::vector<std::int64_t> inner(n + 1, 1);  // inner[i]: elements of modes i..n-1
  for (std::size_t i = n; i-- > 0;) inner[i] = inner[i + 1] * s.extents[i];
  ModeVector strides;
  std::size_t mode = 0;
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
    const std::int64_t lo = bounds[j + 1];  // the refined mode spans suffix products (lo, hi]
    while (mode < n && inner[mode + 1] > lo) ++mode;  // the side's mode holding it
    if (mode >= n || inner[mode] < bounds[j] || lo % inner[mode + 1] != 0) return std::nullopt;
    strides.push_back(s.strides[mode] * (lo / inner[mode + 1]));
  }
  return strides;
}

// `a` (the sender's piece) and `b` (the receiver's) of equal element counts as one box, when
// their shapes have a common refinement.
std::optional<Transfer> join(const Side& a0, const Side& b0) {
  const Side a = squeezed(a0), b = squeezed(b0);
  std::vector<std::int64_t> bounds;
  for (const Side* s : {&a, &b}) {
    std::int64_t p = 1;
    bounds.push_back(p);
    for (std::size_t i = s->extents.size(); i-- > 0;) bounds.push_back(p *= s->extents[i]);
  }
  std::sort(bounds.begin(), bounds.end(), std::greater<>());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j)
    if (bounds[j] % bounds[j + 1] != 0) return std::nullopt;
  const auto sa = refine(a, bounds), sb = refine(b, bounds);
  if (!sa || !sb) return std::nullopt;
  Transfer t;
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j) t.extents.push_back(bounds[j] / bounds[j + 1]);
  if (t.extents.empty()) {  // one element
    t.extents.push_back(1);
    t.src_strides.push_back(1);
    t.dst_strides.push_back(1);
  } else {
    t.src_strides = *sa;
    t.dst_strides = *sb;
  }
  t.src_offset = a.offset;
  t.dst_offset = b.offset;
  t.term = b0.term;
  return t;
}

// The front piece of `q` as its first row (the elements of every moving mode but the outermost,
// at index 0 of it) and the rest: a cut that makes progress when two pieces of equal size do not
// join.
void split_first_row(std::deque<Side>& q) {
  const Side s = q.front();
  q.pop_front();
  const Side m = squeezed(s);  // the modes that move
  std::int64_t row = 1;
  for (std::size_t k = 1; k < m.extents.size(); ++k) row *= m.extents[k];
  const std::int64_t n = s.elements();
  if (m.extents.size() <= 1) row = n / 2;  // one mode: halve it (n >= 2 here: one element always joins)
  cut(s, row, n, q);
  cut(s, 0, row, q);
}

}  // namespace

std::optional<std::vector<Transfer>> compose_message(const std::vector<Transfer>& send,
                                                     const std::vector<Transfer>& recv, std::size_t max_boxes) {
  std::deque<Side> a, b;
  std::int64_t na = 0, nb = 0;
  for (const auto& t : send)
    if (t.elements() > 0) {
      a.push_back(src_side(t));
      na += t.elements();
    }
  for (const auto& t : recv)
    if (t.elements() > 0) {
      b.push_back(dst_side(t));
      nb += t.elements();
    }
  if (na != nb) return std::nullopt;
  std::vector<Transfer> out;
  while (!a.empty() && !b.empty()) {
    if (out.size() >= max_boxes) return std::nullopt;
    const std::int64_t ea = a.front().elements(), eb = b.front().elements();
    if (ea > eb) {  // cut the larger front at the smaller one's size
      const Side s = a.front();
      a.pop_front();
      cut(s, eb, ea, a);
      cut(s, 0, eb, a);
      continue;
    }
    if (eb > ea) {
      const Side s = b.front();
      b.pop_front();
      cut(s, ea, eb, b);
      cut(s, 0, ea, b);
      continue;
    }
    if (auto t = join(a.front(), b.front())) {
      out.push_back(std::move(*t));
      a.pop_front();
      b.pop_front();
      continue;
    }
    split_first_row(a.front().elements() >= b.front().elements() ? a : b);
  }
  return out;
}

void encode_send_boxes(const std::vector<Transfer>& boxes, std::vector<std::int64_t>& out) {
  out.push_back(static_cast<std::int64_t>(boxes.size()));
  for (const Transfer& t : boxes) {
    out.push_back(static_cast<std::int64_t>(t.extents.size()));
    out.insert(out.end(), t.extents.begin(), t.extents.end());
    out.push_back(t.src_offset);
    out.insert(out.end(), t.src_strides.begin(), t.src_strides.end());
    out.push_back(t.term);
  }
}

std::optional<std::vector<Transfer>> decode_send_boxes(std::span<const std::int64_t> words, std::size_t& at) {
  auto next = [&](std::int64_t& v) {
    if (at >= words.size()) return false;
    v = words[at++];
    return true;
  };
  std::int64_t n = 0;
  // Each box takes at least 3 words: a count above what is left cannot be right.
  if (!next(n) || n < 0 || static_cast<std::size_t>(n) > (words.size() - at) / 3) return std::nullopt;
  std::vector<Transfer> boxes(static_cast<std::size_t>(n));
  for (Transfer& t : boxes) {
    std::int64_t modes = 0;
    if (!next(modes) || modes < 0 || modes > 64) return std::nullopt;
    const auto m = static_cast<std::size_t>(modes);
    t.extents = ModeVector(m);
    t.src_strides = ModeVector(m);
    t.dst_strides = ModeVector(m);
    for (std::size_t i = 0; i < m; ++i)
      if (!next(t.extents[i]) || t.extents[i] < 0) return std::nullopt;
    if (!next(t.src_offset)) return std::nullopt;
    for (std::size_t i = 0; i < m; ++i)
      if (!next(t.src_strides[i])) return std::nullopt;
    if (!next(t.term)) return std::nullopt;
  }
  return boxes;
}

}  // namespace axe
