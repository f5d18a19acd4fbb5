// CUDA source from conversion plans and thread layouts (include/axe/codegen/tile_codegen.hpp): the
// access emitters and conversion device functions; the benchmark kernels are tile_kernels.cpp.
#include "axe/codegen/tile_codegen.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "axe/core/error.hpp"
#include "axe/linear/bridge.hpp"
#include "axe/linear/f2.hpp"
#include "axe/linear/linear_layout.hpp"
#include "codegen/global_access.hpp"

namespace axe::codegen {
namespace {

using linear::ConvertPlan;
using Cols = std::vector<std::uint64_t>;
using internal::assemble_word;
using internal::ElementSource;
using internal::hex;

[[noreturn]] void fail(const std::string& what) { throw Error("codegen: " + what); }

std::uint64_t or_of(const Cols& c) {
  std::uint64_t r = 0;
  for (auto x : c) r |= x;
  return r;
}

std::int64_t tile_elements(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

// ---- accesses: element(r, lane, warp) = C[r] ^ T(lane, warp) ------------------------------------

// One access pattern: the columns of every hardware bit in the address space (tile index for
// global memory, element offset for shared memory).
struct Pattern {
  Cols m, lane, warp;
  std::uint64_t skip_m = 0, skip_lane = 0, skip_warp = 0;  // stores: bits whose writers are duplicates
};

// The vector grouping: `bits` (register bit indices) whose columns span the k lowest address bits
// and no other column touches them. pos(r) = the element's place in its vector.
struct Grouping {
  std::vector<int> bits;  // the register bits inside a vector
  std::int64_t width = 1;
};

// The widest grouping with width * element_bytes <= 16. in_order: the bank model's rule
// (register bit i has column 2^i for i < k), else any register bits spanning the low bits.
Grouping group_vectors(const Pattern& p, std::int64_t element_bytes, bool in_order) {
  Grouping best;
  const std::uint64_t skip = p.skip_m;
  for (int k = 1; (std::int64_t{1} << k) * element_bytes <= 16; ++k) {
    const std::uint64_t low = (std::uint64_t{1} << k) - 1;
    std::vector<int> bits;
    bool ok = true;
    for (std::size_t b = 0; b < p.m.size() && ok; ++b) {
      const std::uint64_t c = p.m[b];
      if (skip >> b & 1) continue;
      if (c != 0 && (c & ~low) == 0) {
        bits.push_back(static_cast<int>(b));
      } else if (c & low) {
        ok = false;  // a register touches the low bits and more
      }
    }
    if (!ok || static_cast<int>(bits.size()) != k) break;
    for (auto c : p.lane) ok = ok && (c & low) == 0;
    for (auto c : p.warp) ok = ok && (c & low) == 0;
    Cols chosen;  // k independent columns below 2^k span the k low bits
    for (int b : bits) chosen.push_back(p.m[static_cast<std::size_t>(b)]);
    if (!ok || linear::f2::rank(chosen) != k) break;
    if (in_order) {
      for (int i = 0; i < k; ++i) {
        ok = ok && bits[static_cast<std::size_t>(i)] == i &&
             p.m[static_cast<std::size_t>(i)] == std::uint64_t{1} << i;
      }
      if (!ok) break;
    }
    best.bits = bits;
    best.width = std::int64_t{1} << k;
  }
  return best;
}

// The C type of `bytes` bytes of a vector access.
std::string_view vector_type(std::int64_t bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "uint2";
    default: return "uint4";
  }
}

// The register at place j of the vector that starts at register r (j's bits set g.bits in turn).
std::uint64_t vector_register(const Grouping& g, std::uint64_t r, std::int64_t j) {
  for (std::size_t i = 0; i < g.bits.size(); ++i) {
    if (j >> i & 1) r |= std::uint64_t{1} << g.bits[i];
  }
  return r;
}

// The register bits whose column is zero: a register differing from its twin (these bits clear)
// only in them holds the same element (a broadcast).
std::uint64_t broadcast_bits(const Pattern& p) {
  std::uint64_t z = 0;
  for (std::size_t b = 0; b < p.m.size(); ++b) z |= std::uint64_t{p.m[b] == 0} << b;
  return z;
}

class Emitter {
 public:
  explicit Emitter(std::int64_t element_bytes, bool packed = false)
      : es_(element_bytes), t_(std::string(element_type(element_bytes))), packed_(packed),
        per_(packed ? 4 / element_bytes : 1) {}
  bool packed() const { return packed_; }
  std::int64_t per() const { return per_; }
  // The C type and count of a register array of n elements.
  std::string register_type() const { return packed_ ? "unsigned" : t_; }
  std::int64_t words(std::int64_t n) const { return packed_ ? n / per_ : n; }

  std::ostringstream& out() { return out_; }
  const std::string& type() const { return t_; }
  std::int64_t element_bytes() const { return es_; }
  std::string fresh(const char* stem) { return stem + std::to_string(counter_++); }

  // T(lane, warp) of a pattern, as a new variable; returns its name ("0u"-free: always a name).
  std::string thread_term(const Pattern& p) {
    std::string v = fresh("t");
    out_ << "  const unsigned " << v << " = 0u";
    for (std::size_t k = 0; k < p.lane.size(); ++k) {
      if (p.lane[k]) out_ << " ^ ((lane >> " << k << " & 1u) ? " << hex(p.lane[k]) << " : 0u)";
    }
    for (std::size_t k = 0; k < p.warp.size(); ++k) {
      if (p.warp[k]) out_ << " ^ ((warp >> " << k << " & 1u) ? " << hex(p.warp[k]) << " : 0u)";
    }
    out_ << ";\n";
    return v;
  }

  // C ^ T, written C + T when they share no bit.
  static std::string combine(std::uint64_t c, const std::string& t, std::uint64_t t_bits) {
    if (c == 0) return t;
    return (c & t_bits) ? "(" + t + " ^ " + hex(c) + ")" : "(" + t + " + " + hex(c) + ")";
  }

  // The predicate of the threads taking part: lanes within `lanes`, skip bits clear.
  static std::string thread_guard(const Pattern& p, std::int64_t lanes) {
    std::vector<std::string> g;
    if (lanes < 32) g.push_back("lane < " + std::to_string(lanes) + "u");
    if (p.skip_lane) g.push_back("(lane & " + hex(p.skip_lane) + ") == 0u");
    if (p.skip_warp) g.push_back("(warp & " + hex(p.skip_warp) + ") == 0u");
    std::string s;
    for (const auto& x : g) s += (s.empty() ? "" : " && ") + x;
    return s;
  }

  // Loads (load) or stores registers `regs` (an array name, `count` registers) through pointer
  // expression `base` (of T) with pattern p. Shared accesses with `chunk_bits` >= 0 go to window
  // `window` only (offset >> chunk_bits == window, at offset & (chunk - 1)).
  // Returns the number of instructions per thread emitted (for a load, every register is
  // written; for a store, every non-skipped register is read once).
  std::int64_t access(bool load, const std::string& regs, std::int64_t count, const Pattern& p,
                      const std::string& base, bool in_order, std::int64_t lanes,
                      int chunk_bits = -1, std::int64_t window = 0) {
    if (packed_) return access_packed(load, regs, count, p, base, in_order, lanes, chunk_bits, window);
    const Grouping g = group_vectors(p, es_, in_order);
    const std::uint64_t t_bits = or_of(p.lane) | or_of(p.warp);
    std::uint64_t in_vector = 0;
    for (int b : g.bits) in_vector |= std::uint64_t{1} << b;
    const std::string guard = thread_guard(p, lanes);
    std::uint64_t window_mask = 0;
    if (chunk_bits >= 0) window_mask = ~((std::uint64_t{1} << chunk_bits) - 1);
    const bool runtime_window = chunk_bits >= 0 && (t_bits & window_mask) != 0;
    out_ << "  {\n";
    const std::string t = thread_term(p);
    if (!guard.empty()) out_ << "  if (" << guard << ") {\n";
    std::int64_t instructions = 0;
    const std::uint64_t broadcast_m = broadcast_bits(p);
    for (std::int64_t r0 = 0; r0 < count; ++r0) {
      const auto r = static_cast<std::uint64_t>(r0);
      if (r & in_vector) continue;  // reached through its group's first register
      if (!load && (r & p.skip_m)) continue;
      if (load && (r & broadcast_m & ~in_vector)) {
        // A broadcast register: its twin without the broadcast bits holds the same element
        // (copied after all loads, below).
        continue;
      }
      const std::uint64_t c = linear::f2::combine(p.m, r);
      std::string addr = combine(c & ~window_mask, t, t_bits);
      std::string cond;
      if (chunk_bits >= 0) {
        if (runtime_window) {
          addr = "((" + combine(c, t, t_bits) + ") & " + hex(~window_mask & 0xffffffffu) + ")";
          cond = "((" + combine(c, t, t_bits) + ") >> " + std::to_string(chunk_bits) + ") == " +
                 std::to_string(window) + "u";
        } else if (static_cast<std::int64_t>(c >> chunk_bits) != window) {
          continue;  // another repetition's window
        }
      }
      ++instructions;
      const std::int64_t vbytes = g.width * es_;
      const std::string vt(vector_type(vbytes));
      std::string pre = cond.empty() ? "  " : "  if (" + cond + ") ";
      if (g.width == 1) {
        if (load) {
          out_ << pre << regs << "[" << r << "] = " << base << "[" << addr << "];\n";
        } else {
          out_ << pre << base << "[" << addr << "] = " << regs << "[" << r << "];\n";
        }
        continue;
      }
      // One vector: element i of the vector is the register whose in-vector bits give column i.
      out_ << pre << "{\n    union { " << vt << " v; " << t_ << " e[" << g.width << "]; } u;\n";
      if (!load) {
        for (std::int64_t j = 0; j < g.width; ++j) {
          const std::uint64_t rr = vector_register(g, r, j);
          out_ << "    u.e[" << linear::f2::combine(p.m, rr) - c << "] = " << regs << "[" << rr << "];\n";
        }
        out_ << "    *reinterpret_cast<" << vt << "*>(" << base << " + " << addr << ") = u.v;\n";
      } else {
        out_ << "    u.v = *reinterpret_cast<const " << vt << "*>(" << base << " + " << addr
             << ");\n";
        for (std::int64_t j = 0; j < g.width; ++j) {
          const std::uint64_t rr = vector_register(g, r, j);
          out_ << "    " << regs << "[" << rr << "] = u.e[" << linear::f2::combine(p.m, rr) - c << "];\n";
        }
      }
      out_ << "  }\n";
    }
    if (!guard.empty()) out_ << "  }\n";
    if (load && (broadcast_m & ~in_vector)) {
      for (std::int64_t r0 = 0; r0 < count; ++r0) {
        const auto r = static_cast<std::uint64_t>(r0);
        const std::uint64_t twin = r & ~(broadcast_m & ~in_vector);
        if (twin != r) out_ << "  " << regs << "[" << r << "] = " << regs << "[" << twin << "];\n";
      }
    }
    out_ << "  }\n";
    return instructions;
  }

  // access() on packed registers (`regs` a word array, per_ elements a word, element i in bytes
  // (i % per_) * es_ of word i / per_): a store assembles each vector's words from the registers'
  // bytes (byte permutes), a load reads every vector of the call into a temporary and then
  // assembles each register word once. The plan's accesses go to one window (packable()).
  std::int64_t access_packed(bool load, const std::string& regs, std::int64_t count, const Pattern& p,
                             const std::string& base, bool in_order, std::int64_t lanes, int chunk_bits,
                             std::int64_t window) {
    const Grouping g = group_vectors(p, es_, in_order);
    const std::uint64_t t_bits = or_of(p.lane) | or_of(p.warp);
    std::uint64_t in_vector = 0;
    for (int b : g.bits) in_vector |= std::uint64_t{1} << b;
    std::uint64_t window_mask = 0;
    if (chunk_bits >= 0) window_mask = ~((std::uint64_t{1} << chunk_bits) - 1);
    if (chunk_bits >= 0 && (t_bits & window_mask) != 0) fail("packed registers with a window chosen at run time");
    const std::string guard = thread_guard(p, lanes);
    out_ << "  {\n";
    const std::string t = thread_term(p);
    if (!guard.empty()) out_ << "  if (" << guard << ") {\n";
    const std::uint64_t broadcast_m = broadcast_bits(p);
    std::vector<ElementSource> from(static_cast<std::size_t>(count));  // loads: each register's source
    std::int64_t instructions = 0;
    const std::int64_t vbytes = g.width * es_, nw = std::max<std::int64_t>(1, vbytes / 4);
    const std::string vt(vector_type(vbytes));
    for (std::int64_t r0 = 0; r0 < count; ++r0) {
      const auto r = static_cast<std::uint64_t>(r0);
      if (r & in_vector) continue;
      if (!load && (r & p.skip_m)) continue;
      if (load && (r & broadcast_m & ~in_vector)) continue;
      const std::uint64_t c = linear::f2::combine(p.m, r);
      if (chunk_bits >= 0 && static_cast<std::int64_t>(c >> chunk_bits) != window) continue;
      const std::string addr = combine(c & ~window_mask, t, t_bits);
      ++instructions;
      // The register at each place of the vector.
      std::vector<std::int64_t> at(static_cast<std::size_t>(g.width));
      for (std::int64_t j = 0; j < g.width; ++j) {
        const std::uint64_t rr = vector_register(g, r, j);
        at[static_cast<std::size_t>(linear::f2::combine(p.m, rr) - c)] = static_cast<std::int64_t>(rr);
      }
      if (load) {
        const std::string v = fresh("v");
        out_ << "  union { " << vt << " v; unsigned w[" << nw << "]; } " << v << ";\n";
        if (vbytes < 4) out_ << "  " << v << ".w[0] = 0u;\n";
        out_ << "  " << v << ".v = *reinterpret_cast<const " << vt << "*>(" << base << " + " << addr << ");\n";
        for (std::size_t q = 0; q < at.size(); ++q) {
          from[static_cast<std::size_t>(at[q])] = {v + ".w", static_cast<std::int64_t>(q)};
        }
        continue;
      }
      out_ << "  {\n    union { " << vt << " v; unsigned w[" << nw << "]; } u;\n";
      for (std::int64_t k = 0; k < nw; ++k) {
        std::vector<ElementSource> word;
        for (std::int64_t q = k * per_; q < std::min<std::int64_t>((k + 1) * per_, g.width); ++q) {
          word.push_back({regs, at[static_cast<std::size_t>(q)]});
        }
        out_ << "    u.w[" << k << "] = " << assemble_word(word, es_) << ";\n";
      }
      out_ << "    *reinterpret_cast<" << vt << "*>(" << base << " + " << addr << ") = u.v;\n  }\n";
    }
    if (load) {
      for (std::int64_t r0 = 0; r0 < count; ++r0) {  // broadcast registers: their twin's source
        const auto r = static_cast<std::uint64_t>(r0);
        const std::uint64_t twin = r & ~(broadcast_m & ~in_vector);
        if (twin != r) from[static_cast<std::size_t>(r0)] = from[static_cast<std::size_t>(twin)];
      }
      for (std::int64_t w = 0; w < count / per_; ++w) {
        std::vector<ElementSource> word;
        bool any = false;
        for (std::int64_t q = w * per_; q < (w + 1) * per_; ++q) {
          const ElementSource& f = from[static_cast<std::size_t>(q)];
          any = any || f.index >= 0;
          word.push_back(f.index >= 0 ? f : ElementSource{regs, q});  // not this call's: kept
        }
        if (any) out_ << "  " << regs << "[" << w << "] = " << assemble_word(word, es_) << ";\n";
      }
    }
    if (!guard.empty()) out_ << "  }\n";
    out_ << "  }\n";
    return instructions;
  }

 private:
  std::int64_t es_;
  std::string t_;
  bool packed_ = false;
  std::int64_t per_ = 1;
  std::ostringstream out_;
  int counter_ = 0;
};

// Free bits of a thread layout (one writer per element): per hardware bit, whether its column
// lies in the span of the columns before it (m first, then lane, then warp).
void mark_duplicates(Pattern& p, const ThreadColumns& c) {
  Cols seen;
  auto independent = [&](std::uint64_t v) {
    seen.push_back(v);
    if (linear::f2::rank(seen) == static_cast<int>(seen.size())) return true;
    seen.pop_back();
    return false;
  };
  for (std::size_t k = 0; k < c.m.size(); ++k) {
    if (!independent(c.m[k])) p.skip_m |= std::uint64_t{1} << k;
  }
  for (std::size_t k = 0; k < c.lane.size(); ++k) {
    if (!independent(c.lane[k])) p.skip_lane |= std::uint64_t{1} << k;
  }
  for (std::size_t k = 0; k < c.warp.size(); ++k) {
    if (!independent(c.warp[k])) p.skip_warp |= std::uint64_t{1} << k;
  }
}

Pattern pattern_of(const ThreadColumns& c) { return Pattern{c.m, c.lane, c.warp, 0, 0, 0}; }

// The pattern of a plan's StoreOp / LoadOp address (input dims [m, lane, warp]) through the shared
// offset columns.
Pattern shared_pattern(const linear::LinearLayout& address, const Cols& offset_cols) {
  Pattern p;
  auto cols = [&](const char* dim) {
    Cols r;
    if (!address.has_in_dim(dim)) return r;
    for (int i = 0; i < address.in_bits(dim); ++i) r.push_back(linear::f2::combine(offset_cols, address.column(dim, i)));
    return r;
  };
  p.m = cols("m");
  p.lane = cols("lane");
  p.warp = cols("warp");
  return p;
}

// ldmatrix.x4 loads (linear/convert_plan.hpp, LoadOp): lane 8j + i supplies the address of row i
// of matrix j (the location with lane bits 2..4 = i, lane bits 0, 1 = 0 and the matrix register
// bits = j); register j of every lane receives matrix j, 32 bits: one element, or two for 2-byte
// elements (register bit 0 low).
void emit_ldmatrix(Emitter& e, const std::string& regs, std::int64_t count, const Pattern& p,
                   const int (&bits)[2]) {
  auto& o = e.out();
  const bool pairs = e.element_bytes() == 2;
  const std::uint64_t mb0 = std::uint64_t{1} << bits[0], mb1 = std::uint64_t{1} << bits[1];
  const std::string a = e.fresh("t");
  o << "  {\n  const unsigned " << a << " = 0u";
  auto term = [&](const std::string& bit, std::uint64_t col) {
    if (col) o << " ^ (" << bit << " ? " << hex(col) << " : 0u)";
  };
  for (int b = 0; b < 3; ++b) term("(lane >> " + std::to_string(b) + " & 1u)", p.lane[static_cast<std::size_t>(2 + b)]);
  term("(lane >> 3 & 1u)", p.m[static_cast<std::size_t>(bits[0])]);
  term("(lane >> 4 & 1u)", p.m[static_cast<std::size_t>(bits[1])]);
  for (std::size_t k = 0; k < p.warp.size(); ++k) term("(warp >> " + std::to_string(k) + " & 1u)", p.warp[k]);
  o << ";\n";
  for (std::int64_t g0 = 0; g0 < count; ++g0) {
    const auto g = static_cast<std::uint64_t>(g0);
    if ((g & (mb0 | mb1)) || (pairs && (g & 1))) continue;
    const std::uint64_t c = linear::f2::combine(p.m, g);
    o << "  {\n    unsigned x0, x1, x2, x3;\n"
      << "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\" : "
         "\"=r\"(x0), \"=r\"(x1), \"=r\"(x2), \"=r\"(x3) : \"r\"((unsigned)__cvta_generic_to_shared(axe_s + "
      << (c ? "(" + a + " ^ " + hex(c) + ")" : a) << ")));\n";
    for (std::uint64_t j = 0; j < 4; ++j) {
      const std::uint64_t r = g | ((j & 1) ? mb0 : 0) | ((j & 2) ? mb1 : 0);
      if (pairs) {
        o << "    " << regs << "[" << r << "] = (" << e.type() << ")(x" << j << " & 0xffffu); " << regs
          << "[" << (r | 1) << "] = (" << e.type() << ")(x" << j << " >> 16);\n";
      } else {
        o << "    " << regs << "[" << r << "] = x" << j << ";\n";
      }
    }
    o << "  }\n";
  }
  o << "  }\n";
}

void declare(Emitter& e, const std::string& name, std::int64_t n) {
  e.out() << "  " << e.register_type() << " " << name << "[" << e.words(n) << "];\n";
}

std::string header(std::string_view name, std::string_view t, std::int64_t rs, std::int64_t rd) {
  std::ostringstream s;
  s << "__device__ __forceinline__ void " << name << "(const " << t << " (&in)[" << rs << "], "
    << t << " (&out)[" << rd << "], unsigned char* smem, unsigned lane, unsigned warp) {\n";
  return s.str();
}

}  // namespace

ThreadColumns thread_columns(const AxeLayout& threads, std::span<const std::int64_t> shape) {
  for (const Axis& a : threads.axes()) {
    if (a.name() != "m" && a.name() != "lane" && a.name() != "warp") {
      fail("the thread layout " + to_string(threads) + " uses axis '" + std::string(a.name()) +
           "' (allowed: m, lane, warp)");
    }
  }
  const std::string why = linear::linear_refusal(threads, shape);
  if (!why.empty()) fail("the thread layout " + to_string(threads) + " is not F2-linear: " + why);
  const linear::AxeLinear al = linear::to_linear(threads, shape);
  for (const auto& [axis, o] : al.offset) {
    if (o != 0) fail("the thread layout " + to_string(threads) + " has an offset " + std::to_string(o) + "@" + axis);
  }
  ThreadColumns c;
  auto cols = [&](const char* dim) {
    Cols r;
    if (!al.layout.has_in_dim(dim)) return r;
    for (int i = 0; i < al.layout.in_bits(dim); ++i) r.push_back(al.layout.column(dim, i));
    return r;
  };
  c.m = cols("m");
  c.lane = cols("lane");
  c.warp = cols("warp");
  if (c.lane.size() > 5) fail("the thread layout " + to_string(threads) + " uses more than 32 lanes");
  if (c.warp.size() > 5) fail("the thread layout " + to_string(threads) + " uses more than 32 warps");
  return c;
}

std::vector<std::uint64_t> shared_offset_columns(const linear::SharedLayout& shared,
                                                 std::span<const std::int64_t> shape) {
  const std::int64_t n = tile_elements(shape);
  if (n <= 0 || (n & (n - 1))) fail("the tile has " + std::to_string(n) + " elements, not a power of two");
  auto cols = linear::linear_offsets(linear::shared_offsets(shared, n));
  if (!cols) {
    fail("the shared layout " + (shared.linear ? to_string(*shared.linear) : to_string(shared.smem)) +
         " is not XOR-linear on the tile; generated kernels take linear shared layouts");
  }
  return *cols;
}

std::string_view element_type(std::int64_t bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
    default: fail("no element type of " + std::to_string(bytes) + " bytes (1, 2, 4 or 8)");
  }
}

bool packable(const linear::ConvertPlan& plan, std::int64_t element_bytes) {
  if (element_bytes >= 4 || plan.src_registers % (4 / element_bytes) || plan.dst_registers % (4 / element_bytes)) {
    return false;
  }
  if (plan.counts.repetitions > 1) return false;
  for (const auto& op : plan.ops) {
    if (const auto* ld = std::get_if<linear::LoadOp>(&op); ld && ld->ldmatrix) return false;
    const auto* rn = std::get_if<linear::RenameOp>(&op);
    if (rn && rn->from.size() % static_cast<std::size_t>(4 / element_bytes)) return false;
    if (std::holds_alternative<linear::CondSwapOp>(op) || std::holds_alternative<linear::CondXorOp>(op) ||
        std::holds_alternative<linear::ShuffleOp>(op) || std::holds_alternative<linear::ShipOp>(op)) {
      return false;
    }
  }
  return true;
}

std::string emit_conversion(const linear::ConvertPlan& plan, std::span<const std::int64_t> shape,
                            std::int64_t element_bytes, std::string_view name, bool packed) {
  if (packed && !packable(plan, element_bytes)) fail("this plan cannot run on packed registers (packable())");
  Emitter e(element_bytes, packed);
  auto& o = e.out();
  o << header(name, e.register_type(), e.words(plan.src_registers), e.words(plan.dst_registers));
  Cols offset_cols;
  int chunk_bits = -1;
  if (plan.mechanism == linear::Mechanism::shared) {
    if (!plan.shared) fail("a shared plan without a shared layout");
    offset_cols = shared_offset_columns(*plan.shared, shape);
    chunk_bits = std::countr_zero(static_cast<std::uint64_t>(plan.chunk));
    o << "  " << e.type() << "* axe_s = reinterpret_cast<" << e.type() << "*>(smem);\n";
  } else {
    o << "  (void)smem;\n";
  }
  o << "  (void)lane; (void)warp;\n";
  // The register file as a chain of arrays: every op that moves registers defines the next.
  std::string cur = "in";
  std::int64_t size = plan.src_registers;
  std::string loaded;
  auto next = [&](std::int64_t n) {
    std::string v = e.fresh("r");
    declare(e, v, n);
    return v;
  };
  const char* barrier = plan.warps > 1 ? "  __syncthreads();\n" : "  __syncwarp();\n";
  for (const auto& op : plan.ops) {
    if (const auto* rn = std::get_if<linear::RenameOp>(&op)) {
      if (!loaded.empty()) {  // after the loads: the destination file
        cur = loaded;
        size = plan.dst_registers;
        loaded.clear();
      }
      const std::string v = next(static_cast<std::int64_t>(rn->from.size()));
      if (packed) {  // each word from the bytes of the words its elements come from
        const auto n = static_cast<std::int64_t>(rn->from.size());
        for (std::int64_t w = 0; w < n / e.per(); ++w) {
          std::vector<ElementSource> word;
          for (std::int64_t q = w * e.per(); q < (w + 1) * e.per(); ++q) {
            const std::int64_t f = rn->from[static_cast<std::size_t>(q)];
            word.push_back(f >= 0 && f < size ? ElementSource{cur, f} : ElementSource{});
          }
          o << "  " << v << "[" << w << "] = " << assemble_word(word, element_bytes) << ";\n";
        }
        cur = v;
        size = n;
        continue;
      }
      for (std::size_t i = 0; i < rn->from.size(); ++i) {
        const std::int64_t f = rn->from[i];
        o << "  " << v << "[" << i << "] = ";
        if (f >= 0 && f < size) {
          o << cur << "[" << f << "];\n";
        } else {
          o << "0;\n";
        }
      }
      cur = v;
      size = static_cast<std::int64_t>(rn->from.size());
    } else if (const auto* cs = std::get_if<linear::CondSwapOp>(&op)) {
      const std::string v = next(size), p = e.fresh("p");
      o << "  const bool " << p << " = (lane >> " << cs->lane_bit << ") & 1u;\n";
      const std::int64_t bit = std::int64_t{1} << cs->reg_bit;
      for (std::int64_t x = 0; x < size; ++x) {
        const std::int64_t y = x ^ bit;
        if (y >= size) {
          o << "  " << v << "[" << x << "] = " << cur << "[" << x << "];\n";
        } else {
          o << "  " << v << "[" << x << "] = " << p << " ? " << cur << "[" << y << "] : " << cur << "[" << x << "];\n";
        }
      }
      cur = v;
    } else if (const auto* cx = std::get_if<linear::CondXorOp>(&op)) {
      const std::string v = next(size), p = e.fresh("p");
      if (cx->lane_bit >= 0) {
        o << "  const bool " << p << " = (lane >> " << cx->lane_bit << ") & 1u;\n";
      } else {
        o << "  const bool " << p << " = (warp >> " << cx->warp_bit << ") & 1u;\n";
      }
      for (std::int64_t x = 0; x < size; ++x) {
        const std::int64_t y = x ^ cx->reg_xor;
        o << "  " << v << "[" << x << "] = " << p << " ? " << (y < size ? cur + "[" + std::to_string(y) + "]" : std::string("0")) << " : " << cur << "[" << x << "];\n";
      }
      cur = v;
    } else if (const auto* sh = std::get_if<linear::ShuffleOp>(&op)) {
      bool identity = true;
      for (std::size_t k = 0; k < sh->lane_map.size(); ++k) identity = identity && sh->lane_map[k] == std::uint64_t{1} << k;
      const std::string v = next(size), src = e.fresh("l");
      o << "  const unsigned " << src << " = ";
      if (identity) {
        o << "lane";
      } else {
        o << "0u";
        for (std::size_t k = 0; k < sh->lane_map.size(); ++k) {
          if (sh->lane_map[k]) o << " ^ ((lane >> " << k << " & 1u) ? " << hex(sh->lane_map[k]) << " : 0u)";
        }
      }
      o << ";\n";
      for (std::int64_t r = 0; r < size; ++r) {
        const std::uint64_t x = r < static_cast<std::int64_t>(sh->lane_xor.size()) ? sh->lane_xor[static_cast<std::size_t>(r)] : 0;
        if (identity && x == 0) {
          o << "  " << v << "[" << r << "] = " << cur << "[" << r << "];\n";
          continue;
        }
        const std::string lane_expr = x ? "(" + src + " ^ " + hex(x) + ")" : src;
        o << "  " << v << "[" << r << "] = (" << e.type() << ")__shfl_sync(0xffffffffu, "
          << (element_bytes < 4 ? "(unsigned)" : "") << cur << "[" << r << "], " << lane_expr << ");\n";
      }
      cur = v;
    } else if (const auto* sp = std::get_if<linear::ShipOp>(&op)) {
      const std::string v = next(size), p = e.fresh("p");
      o << "  const bool " << p << " = (lane >> " << sp->lane_bit << ") & 1u;\n";
      const std::int64_t bit = std::int64_t{1} << sp->reg_bit;
      for (std::int64_t x = 0; x < size; ++x) {
        if (x & bit) continue;
        const std::int64_t y = x + bit;
        const std::string ship = e.fresh("s");
        o << "  { const " << e.type() << " " << ship << " = " << p << " ? " << cur << "[" << x << "] : " << cur << "[" << y << "];\n"
          << "    const " << e.type() << " g = (" << e.type() << ")__shfl_xor_sync(0xffffffffu, "
          << (element_bytes < 4 ? "(unsigned)" : "") << ship << ", " << (1u << sp->lane_bit) << "u);\n"
          << "    " << v << "[" << x << "] = " << p << " ? g : " << cur << "[" << x << "];\n"
          << "    " << v << "[" << y << "] = " << p << " ? " << cur << "[" << y << "] : g; }\n";
      }
      cur = v;
    } else if (const auto* st = std::get_if<linear::StoreOp>(&op)) {
      Pattern p = shared_pattern(st->address, offset_cols);
      const int rb = st->address.in_bits("m"), lb = st->address.in_bits("lane");
      p.skip_m = st->skip & ((std::uint64_t{1} << rb) - 1);
      p.skip_lane = (st->skip >> rb) & ((std::uint64_t{1} << lb) - 1);
      p.skip_warp = st->skip >> (rb + lb);
      e.access(false, cur, size, p, "axe_s", true, std::int64_t{1} << lb, chunk_bits, st->window);
    } else if (std::holds_alternative<linear::BarrierOp>(op)) {
      o << barrier;
    } else if (const auto* ld = std::get_if<linear::LoadOp>(&op)) {
      if (loaded.empty()) loaded = next(plan.dst_registers);
      const Pattern p = shared_pattern(ld->address, offset_cols);
      if (ld->ldmatrix) {
        emit_ldmatrix(e, loaded, plan.dst_registers, p, ld->matrix_bits);
        continue;
      }
      e.access(true, loaded, plan.dst_registers, p, "axe_s", true,
               std::int64_t{1} << ld->address.in_bits("lane"), chunk_bits, ld->window);
    }
  }
  if (!loaded.empty()) {
    cur = loaded;
    size = plan.dst_registers;
  }
  if (size != plan.dst_registers) fail("the plan ends with " + std::to_string(size) + " registers, not " + std::to_string(plan.dst_registers));
  for (std::int64_t r = 0; r < e.words(size); ++r) o << "  out[" << r << "] = " << cur << "[" << r << "];\n";
  o << "}\n";
  return o.str();
}

std::string emit_tile_load(const AxeLayout& threads, std::span<const std::int64_t> shape,
                           std::int64_t element_bytes, std::string_view name) {
  const ThreadColumns c = thread_columns(threads, shape);
  Emitter e(element_bytes);
  e.out() << "__device__ __forceinline__ void " << name << "(" << e.type() << " (&r)[" << c.registers()
          << "], const " << e.type() << "* tile, unsigned lane, unsigned warp) {\n  (void)warp;\n";
  e.access(true, "r", c.registers(), pattern_of(c), "tile", false, c.lanes());
  e.out() << "}\n";
  return e.out().str();
}

std::string emit_tile_store(const AxeLayout& threads, std::span<const std::int64_t> shape,
                            std::int64_t element_bytes, std::string_view name) {
  const ThreadColumns c = thread_columns(threads, shape);
  Emitter e(element_bytes);
  e.out() << "__device__ __forceinline__ void " << name << "(const " << e.type() << " (&r)["
          << c.registers() << "], " << e.type() << "* tile, unsigned lane, unsigned warp) {\n  (void)warp;\n";
  Pattern p = pattern_of(c);
  mark_duplicates(p, c);
  e.access(false, "r", c.registers(), p, "tile", false, c.lanes());
  e.out() << "}\n";
  return e.out().str();
}

}  // namespace axe::codegen
