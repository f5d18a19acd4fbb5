// Conversion plans (linear/convert_plan.hpp): the host simulator that proves a plan on every lane
// and warp.
#include <string>
#include <variant>
#include <vector>

#include "axe/linear/convert_plan.hpp"

namespace axe::linear {

std::string simulate(const ConvertPlan& plan, const AxeLayout& from, const AxeLayout& to,
                     std::span<const std::int64_t> shape) {
  const Axis m, lane("lane"), warp("warp");
  const std::int64_t L = plan.lanes, W = plan.warps;
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  // regs[w * L + l][r]
  std::vector<std::vector<std::int64_t>> regs(
      static_cast<std::size_t>(L * W),
      std::vector<std::int64_t>(static_cast<std::size_t>(plan.src_registers), -1));
  for (std::int64_t x = 0; x < n; ++x) {
    for (const auto& p : from.forward(x)) {
      std::int64_t w = p.coord[warp], l = p.coord[lane], r = p.coord[m];
      if (w < 0 || w >= W || l < 0 || l >= L || r < 0 || r >= plan.src_registers) {
        return "the source layout places element " + std::to_string(x) +
               " outside the plan's threads";
      }
      regs[static_cast<std::size_t>(w * L + l)][static_cast<std::size_t>(r)] = x;
    }
  }
  std::vector<std::int64_t> smem;
  const std::vector<std::int64_t> offsets =
      plan.shared ? shared_offsets(*plan.shared, n) : std::vector<std::int64_t>{};
  // Loads write a separate destination file: later repetitions still store source registers.
  std::vector<std::vector<std::int64_t>> loaded;
  auto at = [](auto& v, std::int64_t i) -> auto& {
    return v[static_cast<std::size_t>(i)];
  };
  for (const auto& op : plan.ops) {
    if (const auto* rn = std::get_if<RenameOp>(&op)) {
      if (!loaded.empty()) {  // after the loads: the destination file
        regs = std::move(loaded);
        loaded.clear();
      }
      for (auto& file : regs) {
        std::vector<std::int64_t> next;
        for (auto f : rn->from)
          next.push_back(f >= 0 && f < static_cast<std::int64_t>(file.size()) ? at(file, f) : -1);
        file = std::move(next);
      }
    } else if (const auto* cs = std::get_if<CondSwapOp>(&op)) {
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < L; ++l) {
          if (!(l >> cs->lane_bit & 1)) continue;
          auto& file = at(regs, w * L + l);
          for (std::int64_t x = 0; x < static_cast<std::int64_t>(file.size()); ++x) {
            std::int64_t y = x | std::int64_t{1} << cs->reg_bit;
            if (x != y && y < static_cast<std::int64_t>(file.size()))
              std::swap(at(file, x), at(file, y));
          }
        }
      }
    } else if (const auto* cx = std::get_if<CondXorOp>(&op)) {
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < L; ++l) {
          bool on = cx->lane_bit >= 0 ? (l >> cx->lane_bit & 1) : (w >> cx->warp_bit & 1);
          if (!on) continue;
          auto& file = at(regs, w * L + l);
          auto before = file;
          for (std::int64_t x = 0; x < static_cast<std::int64_t>(file.size()); ++x) {
            std::int64_t y = x ^ cx->reg_xor;
            at(file, x) = y < static_cast<std::int64_t>(before.size()) ? at(before, y) : -1;
          }
        }
      }
    } else if (const auto* sh = std::get_if<ShuffleOp>(&op)) {
      auto old = regs;
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < L; ++l) {
          std::uint64_t mapped = 0;
          for (std::size_t k = 0; k < sh->lane_map.size(); ++k) {
            if (l >> k & 1) mapped ^= sh->lane_map[k];
          }
          auto& file = at(regs, w * L + l);
          for (std::size_t r = 0; r < file.size() && r < sh->lane_xor.size(); ++r) {
            auto src = static_cast<std::int64_t>(mapped ^ sh->lane_xor[r]);
            file[r] = src < L ? at(at(old, w * L + src), static_cast<std::int64_t>(r)) : -1;
          }
        }
      }
    } else if (const auto* sp = std::get_if<ShipOp>(&op)) {
      auto old = regs;
      const std::int64_t bit = std::int64_t{1} << sp->reg_bit, lb = std::int64_t{1} << sp->lane_bit;
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < L; ++l) {
          auto& file = at(regs, w * L + l);
          const auto& partner = at(old, w * L + (l ^ lb));
          bool lj = l & lb;
          for (std::int64_t x = 0; x < static_cast<std::int64_t>(file.size()); ++x) {
            if (x & bit) continue;
            // The partner ships reg[x] if its bit is set, else reg[x + 2^i].
            std::int64_t got = lj ? at(partner, x + bit) : at(partner, x);
            if (lj) {
              at(file, x) = got;
            } else {
              at(file, x + bit) = got;
            }
          }
        }
      }
    } else if (const auto* st = std::get_if<StoreOp>(&op)) {
      if (!plan.shared) return "a store without a shared layout";
      smem.assign(static_cast<std::size_t>(plan.chunk), -1);
      const int rb = st->address.in_bits("m"), lbits = st->address.in_bits("lane");
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < (std::int64_t{1} << lbits); ++l) {
          const auto& file = at(regs, w * L + l);
          for (std::int64_t r = 0; r < static_cast<std::int64_t>(file.size()); ++r) {
            std::uint64_t h = static_cast<std::uint64_t>(r) | static_cast<std::uint64_t>(l) << rb |
                              static_cast<std::uint64_t>(w) << (rb + lbits);
            if (h & st->skip) continue;
            auto o = at(offsets, static_cast<std::int64_t>(st->address.apply_flat(h))) -
                     st->window * plan.chunk;
            if (o >= 0 && o < plan.chunk) at(smem, o) = at(file, r);
          }
        }
      }
    } else if (const auto* ld = std::get_if<LoadOp>(&op)) {
      const int rb = ld->address.in_bits("m"), lbits = ld->address.in_bits("lane");
      for (std::int64_t w = 0; w < W; ++w) {
        for (std::int64_t l = 0; l < (std::int64_t{1} << lbits); ++l) {
          if (loaded.empty()) {
            loaded.assign(regs.size(), std::vector<std::int64_t>(
                                           static_cast<std::size_t>(plan.dst_registers), -1));
          }
          auto& file = at(loaded, w * L + l);
          for (std::int64_t r = 0; r < plan.dst_registers; ++r) {
            std::uint64_t h = static_cast<std::uint64_t>(r) | static_cast<std::uint64_t>(l) << rb |
                              static_cast<std::uint64_t>(w) << (rb + lbits);
            auto o = at(offsets, static_cast<std::int64_t>(ld->address.apply_flat(h))) -
                     ld->window * plan.chunk;
            if (o >= 0 && o < plan.chunk) at(file, r) = smem.empty() ? -1 : at(smem, o);
          }
        }
      }
    }
  }
  if (!loaded.empty()) regs = std::move(loaded);
  for (std::int64_t x = 0; x < n; ++x) {
    for (const auto& p : to.forward(x)) {
      std::int64_t w = p.coord[warp], l = p.coord[lane], r = p.coord[m];
      std::int64_t got = -1;
      if (w >= 0 && w < W && l >= 0 && l < L && r >= 0 &&
          r < static_cast<std::int64_t>(at(regs, w * L + l).size())) {
        got = at(at(regs, w * L + l), r);
      }
      if (got != x) {
        return "warp " + std::to_string(w) + ", lane " + std::to_string(l) + ", register " +
               std::to_string(r) + ": expected element " + std::to_string(x) + ", got " +
               (got < 0 ? std::string("undefined") : std::to_string(got));
      }
    }
  }
  return {};
}

}  // namespace axe::linear
