// The shared-memory bank model: enumeration of every access, and the F2 formula.
#include "axe/linear/banks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/f2.hpp"
#include "linear/internal.hpp"

namespace axe::linear {
namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 20;
constexpr std::int64_t kMaxSlots = std::int64_t{1} << 22;

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? "," : "") + std::to_string(shape[k]);
  return s + ")";
}

void check_axes(const AxeLayout& l, std::initializer_list<const char*> allowed, const char* what) {
  for (const Axis& a : l.axes()) {
    bool ok = false;
    for (const char* n : allowed) ok = ok || a.name() == n;
    if (!ok) {
      std::string names;
      for (const char* n : allowed) names += (names.empty() ? "" : ", ") + std::string(n);
      fail(std::string(what) + " " + to_string(l) + " uses axis '" + std::string(a.name()) +
           "' (allowed: " + names + ")");
    }
  }
}

}  // namespace

namespace {

std::int64_t checked_size(std::span<const std::int64_t> shape, std::int64_t element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8 &&
      element_bytes != 16) {
    fail("element size " + std::to_string(element_bytes) + " bytes is not 1, 2, 4, 8 or 16");
  }
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e <= 0 || __builtin_mul_overflow(n, e, &n) || n > kMaxElements) {
      fail("the shape " + shape_text(shape) + " is empty or has more than 2^20 elements");
    }
  }
  return n;
}

BankReport enumerate(const std::vector<std::int64_t>& off, const AxeLayout& threads,
                     std::int64_t n, std::int64_t element_bytes);

}  // namespace

BankReport bank_conflicts(const AxeLayout& smem, const AxeLayout& threads,
                          std::span<const std::int64_t> shape, std::int64_t element_bytes,
                          const std::optional<cute::Swizzle>& swizzle) {
  std::int64_t n = checked_size(shape, element_bytes);
  if (smem.size() != n) {
    fail("the shared layout " + to_string(smem) + " has " + std::to_string(smem.size()) +
         " elements but the shape " + shape_text(shape) + " has " + std::to_string(n));
  }
  if (threads.size() != n) {
    fail("the thread layout " + to_string(threads) + " has " + std::to_string(threads.size()) +
         " elements but the shape " + shape_text(shape) + " has " + std::to_string(n));
  }
  check_axes(smem, {"m"}, "the shared layout");
  check_axes(threads, {"m", "lane", "warp"}, "the thread layout");
  if (smem.replicas() != 1 || smem.terms() != 1) {
    fail("the shared layout " + to_string(smem) + " has replicas or partial terms");
  }
  const Axis m;
  std::vector<std::int64_t> off(static_cast<std::size_t>(n));
  for (std::int64_t x = 0; x < n; ++x) {
    std::int64_t o = smem.forward_first(x)[m];
    if (o < 0) fail("the shared layout " + to_string(smem) + " puts element " + std::to_string(x) + " at a negative offset");
    if (swizzle) o = (*swizzle)(o);
    off[static_cast<std::size_t>(x)] = o;
  }
  return enumerate(off, threads, n, element_bytes);
}

BankReport bank_conflicts(std::span<const std::int64_t> offsets, const AxeLayout& threads,
                          std::span<const std::int64_t> shape, std::int64_t element_bytes) {
  std::int64_t n = checked_size(shape, element_bytes);
  if (static_cast<std::int64_t>(offsets.size()) != n) {
    fail("the shared placement has " + std::to_string(offsets.size()) + " offsets but the shape " +
         shape_text(shape) + " has " + std::to_string(n) + " elements");
  }
  if (threads.size() != n) {
    fail("the thread layout " + to_string(threads) + " has " + std::to_string(threads.size()) +
         " elements but the shape " + shape_text(shape) + " has " + std::to_string(n));
  }
  check_axes(threads, {"m", "lane", "warp"}, "the thread layout");
  for (std::size_t x = 0; x < offsets.size(); ++x) {
    if (offsets[x] < 0) fail("the shared placement puts element " + std::to_string(x) + " at a negative offset");
  }
  return enumerate(std::vector<std::int64_t>(offsets.begin(), offsets.end()), threads, n, element_bytes);
}

namespace {

BankReport enumerate(const std::vector<std::int64_t>& off, const AxeLayout& threads,
                     std::int64_t n, std::int64_t element_bytes) {
  if (threads.terms() != 1) fail("the thread layout " + to_string(threads) + " has partial terms");
  const Axis m, lane("lane"), warp("warp");
  std::int64_t regs = std::max<std::int64_t>(1, threads.span(m));
  std::int64_t warps = std::max<std::int64_t>(1, threads.span(warp));
  if (threads.span(lane) > 32) {
    fail("the thread layout " + to_string(threads) + " reaches lane " +
         std::to_string(threads.span(lane) - 1) + " (a warp has 32)");
  }
  if (warps > 1024 || regs > kMaxSlots / 32 / warps) {
    fail("the thread layout " + to_string(threads) + " has " + std::to_string(warps) + " warps x " +
         std::to_string(regs) + " registers, too many to enumerate");
  }
  // slot[(w * 32 + l) * regs + r] = shared offset of the element there, or -1.
  std::vector<std::int64_t> slot(static_cast<std::size_t>(warps * 32 * regs), -1);
  for (std::int64_t x = 0; x < n; ++x) {
    for (const auto& p : threads.forward(x)) {
      std::int64_t w = p.coord[warp], l = p.coord[lane], r = p.coord[m];
      if (w < 0 || l < 0 || r < 0) {
        fail("the thread layout " + to_string(threads) + " puts element " + std::to_string(x) +
             " at a negative lane, warp or register");
      }
      auto& s = slot[static_cast<std::size_t>((w * 32 + l) * regs + r)];
      if (s >= 0 && s != off[static_cast<std::size_t>(x)]) {
        fail("the thread layout " + to_string(threads) + " puts two elements in register " +
             std::to_string(r) + " of lane " + std::to_string(l) + ", warp " + std::to_string(w));
      }
      s = off[static_cast<std::size_t>(x)];
    }
  }
  auto at = [&](std::int64_t w, std::int64_t l, std::int64_t r) {
    return slot[static_cast<std::size_t>((w * 32 + l) * regs + r)];
  };
  // The widest vector every thread can use.
  std::int64_t v = 16 / element_bytes;
  for (; v > 1; v /= 2) {
    if (regs % v) continue;
    bool ok = true;
    for (std::int64_t w = 0; w < warps && ok; ++w) {
      for (std::int64_t l = 0; l < 32 && ok; ++l) {
        for (std::int64_t g = 0; g < regs && ok; g += v) {
          std::int64_t base = at(w, l, g);
          bool any = false, all = true;
          for (std::int64_t i = 0; i < v; ++i) {
            bool set = at(w, l, g + i) >= 0;
            any = any || set;
            all = all && set && at(w, l, g + i) == base + i;
          }
          if (any && (!all || base % v)) ok = false;
        }
      }
    }
    if (ok) break;
  }
  BankReport rep;
  rep.vector_bytes = v * element_bytes;
  rep.instructions = regs / v;
  rep.warps = warps;
  std::int64_t phases = rep.vector_bytes <= 4 ? 1 : rep.vector_bytes / 4;
  std::int64_t per_phase = 32 / phases;
  for (std::int64_t w = 0; w < warps; ++w) {
    for (std::int64_t g = 0; g < regs; g += v) {
      for (std::int64_t l = 0; l < 32; ++l) rep.offsets.push_back(at(w, l, g));
      std::int64_t wf = 0;
      std::set<std::int64_t> all_words;
      for (std::int64_t ph = 0; ph < phases; ++ph) {
        std::map<std::int64_t, std::set<std::int64_t>> bank_words;
        for (std::int64_t l = ph * per_phase; l < (ph + 1) * per_phase; ++l) {
          std::int64_t o = at(w, l, g);
          if (o < 0) continue;
          std::int64_t first = o * element_bytes / 4, last = (o * element_bytes + rep.vector_bytes - 1) / 4;
          for (std::int64_t word = first; word <= last; ++word) {
            bank_words[word % 32].insert(word);
            all_words.insert(word);
          }
        }
        std::int64_t most = 0;
        for (const auto& [b, words] : bank_words) most = std::max<std::int64_t>(most, static_cast<std::int64_t>(words.size()));
        wf += most;
      }
      rep.per_instruction.push_back(wf);
      rep.wavefronts += wf;
      rep.ideal += (static_cast<std::int64_t>(all_words.size()) + 31) / 32;
    }
  }
  return rep;
}

}  // namespace

std::optional<std::int64_t> f2_wavefronts(const AxeLayout& smem, const AxeLayout& threads,
                                          std::span<const std::int64_t> shape,
                                          const std::optional<cute::Swizzle>& swizzle) {
  if (!linear_refusal(smem, shape).empty() || !linear_refusal(threads, shape).empty()) {
    return std::nullopt;
  }
  auto s = to_linear(smem, shape);
  auto t = to_linear(threads, shape);
  for (const auto& [a, o] : s.offset) {
    if (o != 0) return std::nullopt;
  }
  for (const auto& [a, o] : t.offset) {
    if (o != 0) return std::nullopt;
  }
  if (s.layout.in_dims().size() != 1 || s.layout.in_dims()[0].name != "m" ||
      !is_invertible(s.layout)) {
    return std::nullopt;
  }
  LinearLayout offset_to_tensor = s.layout;  // offset -> tensor
  int bits = s.layout.total_in_bits();
  if (swizzle) {
    const auto& sw = *swizzle;
    if (sw.bits + sw.base + std::abs(sw.shift) > bits) return std::nullopt;
    // The element at offset o sits at sw(o); the swizzle is an involution, so the tensor element
    // at swizzled offset o' is s(sw(o')).
    offset_to_tensor = compose(from_swizzle(sw, bits, "m", "m"), s.layout);
  }
  std::vector<f2::Vec> lanes, segment;
  if (t.layout.has_in_dim("lane")) {
    for (int i = 0; i < t.layout.in_bits("lane"); ++i) lanes.push_back(t.layout.column("lane", i));
  }
  for (int i = 5; i < bits; ++i) segment.push_back(offset_to_tensor.column("m", i));
  return std::int64_t{1} << f2::intersection(lanes, segment).size();
}

}  // namespace axe::linear
