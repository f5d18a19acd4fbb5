// storage() and project(): keep what lands on some axes.
#include <algorithm>

#include "axe/layout/layout.hpp"
#include "layout/internal.hpp"

namespace axe {

AxeLayout storage(const AxeLayout& l) {
  auto keep = [](const std::vector<Iter>& v) {
    std::vector<Iter> out;
    for (const Iter& it : v) {
      if (it.axis.is_memory()) out.push_back(it);
    }
    return out;
  };
  std::vector<std::pair<Axis, std::int64_t>> o;
  for (const auto& e : l.offset()) {
    if (e.first.is_memory()) o.push_back(e);
  }
  return AxeLayout(keep(l.shard()), keep(l.replica()), keep(l.partial()), std::move(o),
                   l.reduce_op());
}

AxeLayout project(const AxeLayout& l, std::span<const Axis> axes) {
  auto on = [&](Axis a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); };
  std::vector<Iter> d = l.shard();
  for (Iter& it : d) {
    if (!on(it.axis)) it = Iter{it.extent, 0, Axis::memory()};
  }
  auto keep = [&](const std::vector<Iter>& v) {
    std::vector<Iter> out;
    for (const Iter& it : v) {
      if (on(it.axis)) out.push_back(it);
    }
    return out;
  };
  std::vector<std::pair<Axis, std::int64_t>> o;
  for (const auto& e : l.offset()) {
    if (on(e.first)) o.push_back(e);
  }
  return AxeLayout(std::move(d), keep(l.replica()), keep(l.partial()), std::move(o),
                   l.reduce_op());
}

}  // namespace axe
