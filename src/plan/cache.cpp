// The process-wide plan cache: strategies by request, rank plans by request and rank.
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "axe/plan/plan.hpp"
#include "plan/strategy.hpp"

namespace axe {

using internal::build_rank;
using internal::choose;
using internal::Strategy;

namespace {

struct CacheKey {
  std::string text;
  bool operator==(const CacheKey&) const = default;
};

std::string request_key(const PlanRequest& r) {
  return to_string(r.from) + (r.from.sharding() ? " {" + to_string(*r.from.sharding()) + "}" : "") + " -> " +
         to_string(r.to) + (r.to.sharding() ? " {" + to_string(*r.to.sharding()) + "}" : "") + " " +
         std::string(to_string(r.dtype)) + (r.staging_limit ? " limit " + std::to_string(r.staging_limit) : "") +
         (r.spread_min_bytes ? " spread " + std::to_string(r.spread_min_bytes) : "");
}

std::mutex cache_mu;
std::unordered_map<std::string, std::shared_ptr<const Strategy>> strategy_cache;
std::unordered_map<std::string, std::shared_ptr<const RankPlan>> plan_cache;

std::shared_ptr<const Strategy> strategy_for(const PlanRequest& r, const CostModel& cm, const std::string& key) {
  {
    std::lock_guard<std::mutex> g(cache_mu);
    if (auto it = strategy_cache.find(key); it != strategy_cache.end()) return it->second;
  }
  auto s = std::make_shared<const Strategy>(choose(r, cm));
  std::lock_guard<std::mutex> g(cache_mu);
  if (strategy_cache.size() > 4096) strategy_cache.clear();
  return strategy_cache.emplace(key, s).first->second;
}

}  // namespace

std::shared_ptr<const RankPlan> cached_plan_rank(const PlanRequest& r, std::int64_t rank, const CostModel& cost) {
  // The default model (the common case) adds nothing to the key, and is recognised by comparing
  // the coefficients, not their text (formatting them was most of a cached lookup).
  static const CostModel default_model;
  std::string key = request_key(r);
  if (!(cost == default_model)) key += " cost " + cost.fingerprint();
  std::string pkey = key + " @" + std::to_string(rank);
  {
    std::lock_guard<std::mutex> g(cache_mu);
    if (auto it = plan_cache.find(pkey); it != plan_cache.end()) return it->second;
  }
  auto s = strategy_for(r, cost, key);
  auto rp = std::make_shared<const RankPlan>(build_rank(r, *s, rank));
  std::lock_guard<std::mutex> g(cache_mu);
  if (plan_cache.size() > 65536) plan_cache.clear();
  return plan_cache.emplace(pkey, rp).first->second;
}

void clear_plan_cache() {
  std::lock_guard<std::mutex> g(cache_mu);
  plan_cache.clear();
  strategy_cache.clear();
}
}  // namespace axe
