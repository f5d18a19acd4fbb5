#include "axe/linear/f2.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace axe::linear::f2 {
namespace {

// Incremental elimination: vectors are added in order; each kept vector is reduced against the
// earlier ones (so it has none of their pivots) and remembers which inputs it combines. Reducing
// against the kept vectors in insertion order then clears every pivot bit.
struct Eliminator {
  struct Row {
    Vec v;
    Vec combo;
    int pivot;
  };
  std::vector<Row> rows;

  // v reduced against the rows; `combo` accumulates the inputs used.
  Vec reduce(Vec v, Vec& combo) const {
    for (const auto& r : rows) {
      if (v >> r.pivot & 1) {
        v ^= r.v;
        combo ^= r.combo;
      }
    }
    return v;
  }
  // Adds input `index`; returns false (and leaves the rows unchanged) when v is dependent, with
  // `combo` then the dependency (including the input itself).
  bool add(Vec v, int index, Vec& combo) {
    combo = Vec{1} << index;
    Vec r = reduce(v, combo);
    if (r == 0) return false;
    rows.push_back({r, combo, std::countr_zero(r)});
    return true;
  }
};

}  // namespace

int pivot(Vec v) {
  assert(v != 0);
  return std::countr_zero(v);
}

std::vector<Vec> row_echelon(std::span<const Vec> vs) {
  std::vector<Vec> basis;
  for (Vec v : vs) {
    for (Vec b : basis) {
      if (v >> pivot(b) & 1) v ^= b;
    }
    if (v == 0) continue;
    // v has none of the existing pivots; clear v's pivot from the others.
    int p = pivot(v);
    for (Vec& b : basis) {
      if (b >> p & 1) b ^= v;
    }
    basis.push_back(v);
  }
  // Clearing a new pivot from an old vector can lower nothing below that vector's own pivot
  // (the old pivot bit stays set, being absent from v), so pivots are stable; sort by them.
  std::sort(basis.begin(), basis.end(), [](Vec a, Vec b) { return pivot(a) < pivot(b); });
  return basis;
}

int rank(std::span<const Vec> vs) { return static_cast<int>(row_echelon(vs).size()); }

Vec combine(std::span<const Vec> columns, std::uint64_t x) {
  Vec r = 0;
  for (std::size_t k = 0; k < columns.size() && k < 64; ++k) {
    if (x >> k & 1) r ^= columns[k];
  }
  return r;
}

bool in_span(std::span<const Vec> vs, Vec v) {
  for (Vec b : row_echelon(vs)) {
    if (v >> pivot(b) & 1) v ^= b;
  }
  return v == 0;
}

std::optional<Vec> solve(std::span<const Vec> columns, Vec target) {
  assert(columns.size() <= 64);
  Eliminator e;
  Vec combo = 0;
  for (std::size_t j = 0; j < columns.size(); ++j) e.add(columns[j], static_cast<int>(j), combo);
  Vec x = 0;
  if (e.reduce(target, x) != 0) return std::nullopt;
  return x;
}

Vec free_columns(std::span<const Vec> columns) {
  assert(columns.size() <= 64);
  Eliminator e;
  Vec mask = 0, combo = 0;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (!e.add(columns[j], static_cast<int>(j), combo)) mask |= Vec{1} << j;
  }
  return mask;
}

std::vector<Vec> null_space(std::span<const Vec> columns) {
  assert(columns.size() <= 64);
  Eliminator e;
  std::vector<Vec> out;
  Vec combo = 0;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (!e.add(columns[j], static_cast<int>(j), combo)) out.push_back(combo);
  }
  return out;
}

std::vector<Vec> complement(std::span<const Vec> vs, int n) {
  assert(n >= 0 && n <= 64);
  Vec pivots = 0;
  for (Vec b : row_echelon(vs)) pivots |= Vec{1} << pivot(b);
  std::vector<Vec> out;
  for (int i = 0; i < n; ++i) {
    if (!(pivots >> i & 1)) out.push_back(Vec{1} << i);
  }
  return out;
}

std::vector<Vec> intersection(std::span<const Vec> a, std::span<const Vec> b) {
  // Seed the elimination with b's basis (combination 0), then add a's basis vectors with their
  // own index: one that reduces to zero gives a combination u of a's vectors with A·u in span(b).
  // Those u are independent, and their images span the intersection.
  auto ea = row_echelon(a);
  Eliminator e;
  for (Vec v : row_echelon(b)) e.rows.push_back({v, 0, pivot(v)});
  std::vector<Vec> images;
  Vec combo = 0;
  for (std::size_t j = 0; j < ea.size(); ++j) {
    if (e.add(ea[j], static_cast<int>(j), combo)) continue;
    Vec img = 0;
    for (std::size_t k = 0; k < ea.size(); ++k) {
      if (combo >> k & 1) img ^= ea[k];
    }
    images.push_back(img);
  }
  return row_echelon(images);
}

}  // namespace axe::linear::f2
