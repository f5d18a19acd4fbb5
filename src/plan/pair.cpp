// The (source, destination) pair of a redistribution: both sides refined to common factors
// (dist/refine.cpp) and their partial terms matched.
#include <memory>
#include <string>

#include "axe/core/error.hpp"
#include "plan/internal.hpp"

namespace axe::internal {

namespace {
std::string axis_name(const Side& s, int a) {
  return a == s.naxes ? std::string("m") : std::string(s.layout->mesh().axes()[static_cast<std::size_t>(a)].name());
}
}  // namespace

Pair make_pair(const DistLayout& from, const DistLayout& to) {
  if (from.shape() != to.shape())
    fail("source layout " + layout_name(from) + " has global shape " + shape_text(from.shape()) +
         " but destination layout " + layout_name(to) + " has " + shape_text(to.shape()));
  return make_pair(std::make_shared<const DistLayout>(from), std::make_shared<const DistLayout>(to));
}

Pair make_pair(std::shared_ptr<const DistLayout> f, std::shared_ptr<const DistLayout> t) {
  const DistLayout& from = *f;
  const DistLayout& to = *t;
  if (from.shape() != to.shape())
    fail("source layout " + layout_name(from) + " has global shape " + shape_text(from.shape()) +
         " but destination layout " + layout_name(to) + " has " + shape_text(to.shape()));
  Pair p;
  p.src = make_side(*f);
  p.src.owner = f;
  p.dst = make_side(*t);
  p.dst.owner = t;
  bool sp = !p.src.part.empty(), dp = !p.dst.part.empty();
  auto cannot = [&](const std::string& why) {
    fail("partial destination " + layout_name(to) + " cannot be produced from source " + layout_name(from) + ": " +
         why);
  };
  if (sp || dp) {
    if (sp && dp && p.src.op != p.dst.op)
      cannot("the reductions differ (" + std::string(to_string(p.src.op)) + " vs " + std::string(to_string(p.dst.op)) +
             "); a " + std::string(to_string(p.dst.op)) + "-partial value cannot be made from " +
             std::string(to_string(p.src.op)) + " terms without reducing them first");
    p.op = sp ? p.src.op : p.dst.op;
    std::vector<bool> taken(p.src.part.size(), false);
    std::size_t unmatched = 0;
    for (const auto& it : p.dst.part) {
      std::int64_t found = -1;
      for (std::size_t j = 0; j < p.src.part.size() && found < 0; ++j)
        if (!taken[j] && axis_name(p.src, p.src.part[j].axis) == axis_name(p.dst, it.axis) &&
            p.src.part[j].extent == it.extent && p.src.part[j].stride == it.stride) {
          taken[j] = true;
          found = static_cast<std::int64_t>(j);
        }
      unmatched += found < 0;
      p.match.push_back(found);
    }
    for (std::size_t j = 0; j < p.src.part.size(); ++j)
      if (!taken[j]) {
        p.reduced.push_back(j);
        p.terms *= p.src.part[j].extent;
      }
    p.partial = PartialMode::Reduce;
    if (sp && dp && unmatched > 0 && !p.reduced.empty() && p.src.terms == p.dst.terms) {
      // Same number of terms on other axes: move the terms instead of reducing and refilling.
      p.partial = PartialMode::Match;
      p.match.clear();
      p.reduced.clear();
      p.terms = 1;
    }
  }
  const auto& shape = from.shape();
  p.nested = from.nested() || to.nested();
  p.boxes = common_boxes(p.src, p.dst);
  const auto& ps = from.padded_shape();
  const auto& pd = to.padded_shape();
  for (std::size_t k = 0; k < shape.size(); ++k) {
    bool chain = true;
    for (const Factor& m : chain_factors(p.src, p.dst, k, std::max(ps[k], pd[k]), chain))
      if (m.extent > 1) p.full_factors.push_back(m);
    p.chain = p.chain && chain;
    p.even.push_back(ps[k] == shape[k] && pd[k] == shape[k]);
  }
  return p;
}

}  // namespace axe::internal
