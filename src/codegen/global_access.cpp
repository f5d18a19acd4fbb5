// Global-memory accesses of a thread layout in generated kernels (codegen/global_access.hpp).
#include "codegen/global_access.hpp"

#include <algorithm>
#include <bit>
#include <sstream>
#include <string>
#include <vector>

#include "axe/codegen/transpose_codegen.hpp"

namespace axe::codegen::internal {

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v << "u";
  return s.str();
}

std::string assemble_word(const std::vector<ElementSource>& elements, std::int64_t element_bytes) {
  const std::int64_t per = 4 / element_bytes;
  // Byte b of the word: byte `byte` of word `word` (an expression), "0u" for a zero byte.
  struct Byte {
    std::string word;
    std::int64_t byte = 0;
  };
  std::vector<Byte> bytes;
  for (std::int64_t k = 0; k < per; ++k) {
    const ElementSource& e = k < static_cast<std::int64_t>(elements.size()) ? elements[static_cast<std::size_t>(k)]
                                                                            : ElementSource{};
    for (std::int64_t j = 0; j < element_bytes; ++j) {
      if (e.index < 0) {
        bytes.push_back({"0u", 0});
      } else {
        bytes.push_back({e.words + "[" + std::to_string(e.index / per) + "]", (e.index % per) * element_bytes + j});
      }
    }
  }
  auto words_of = [&](std::size_t from, std::size_t to) {
    std::vector<std::string> w;
    for (std::size_t b = from; b < to; ++b) {
      if (std::find(w.begin(), w.end(), bytes[b].word) == w.end()) w.push_back(bytes[b].word);
    }
    return w;
  };
  // __byte_perm(x, y, s): byte b of the result is byte (s >> 4b & 7) of y:x.
  auto perm = [&](std::size_t from, std::size_t to, const std::vector<std::string>& w) {
    std::uint64_t sel = 0;
    for (std::size_t b = from; b < to; ++b) {
      const std::uint64_t nib = static_cast<std::uint64_t>(bytes[b].byte) + (bytes[b].word == w[0] ? 0 : 4);
      sel |= nib << (4 * (b - from));
    }
    return "__byte_perm(" + w[0] + ", " + (w.size() > 1 ? w[1] : w[0]) + ", " + hex(sel) + ")";
  };
  const std::vector<std::string> all = words_of(0, 4);
  if (all.size() == 1) {
    bool in_place = true;
    for (std::size_t b = 0; b < 4; ++b) in_place = in_place && bytes[b].byte == static_cast<std::int64_t>(b);
    if (in_place) return all[0];
  }
  if (all.size() <= 2) return perm(0, 4, all);
  return "__byte_perm(" + perm(0, 2, words_of(0, 2)) + ", " + perm(2, 4, words_of(2, 4)) + ", 0x5410u)";
}

int log2_of(std::int64_t v) { return std::countr_zero(static_cast<std::uint64_t>(v)); }

Coords coords_of(const ThreadColumns& c, std::int64_t tile_a, bool contiguous_is_a) {
  const int ab = log2_of(tile_a);
  auto split = [&](const std::vector<std::uint64_t>& cols) {
    Split s;
    for (auto v : cols) {
      const auto a = static_cast<std::int64_t>(v & static_cast<std::uint64_t>(tile_a - 1));
      const auto b = static_cast<std::int64_t>(v >> ab);
      s.x.push_back(contiguous_is_a ? a : b);
      s.y.push_back(contiguous_is_a ? b : a);
    }
    return s;
  };
  return {split(c.m), split(c.lane), split(c.warp)};
}

std::int64_t sum_of(const std::vector<std::int64_t>& cols, std::uint64_t bits) {
  std::int64_t s = 0;
  for (std::size_t k = 0; k < cols.size(); ++k) {
    if (bits >> k & 1) s += cols[k];
  }
  return s;
}

void thread_terms(std::ostringstream& o, const Coords& c, const char* x, const char* y) {
  auto term = [&](const char* v, const std::vector<std::int64_t>& lane, const std::vector<std::int64_t>& warp) {
    o << "  const long long " << v << " = 0";
    for (std::size_t k = 0; k < lane.size(); ++k) {
      if (lane[k]) o << " + ((lane >> " << k << " & 1u) ? " << lane[k] << "ll : 0ll)";
    }
    for (std::size_t k = 0; k < warp.size(); ++k) {
      if (warp[k]) o << " + ((warp >> " << k << " & 1u) ? " << warp[k] << "ll : 0ll)";
    }
    o << ";\n";
  };
  term(x, c.lane.x, c.warp.x);
  term(y, c.lane.y, c.warp.y);
}

namespace {

// emit_access on packed registers (`r` a word array, global_access.hpp: ElementSource).
void emit_packed_access(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                        std::int64_t registers, std::int64_t vector, bool edge, std::int64_t es) {
  const std::int64_t per = 4 / es;
  thread_terms(o, c, "tx", "ty");
  if (!edge) o << "  const long long base = tx + ty * stride;\n";
  auto at = [&](std::int64_t q) {
    const auto u = static_cast<std::uint64_t>(q);
    return "(" + std::to_string(sum_of(c.m.x, u)) + "ll + " + std::to_string(sum_of(c.m.y, u)) + "ll * stride)";
  };
  auto inside = [&](std::int64_t q) {
    const auto u = static_cast<std::uint64_t>(q);
    return "tx + " + std::to_string(sum_of(c.m.x, u)) + "ll < xlim && ty + " + std::to_string(sum_of(c.m.y, u)) +
           "ll < ylim";
  };
  const std::string addr0 = edge ? "tx + ty * stride + " : "base + ";
  if (!edge && vector * es >= 4) {  // whole words: a vector is vector * es / 4 words in order
    const std::int64_t nw = vector * es / 4;
    const char* vt = nw == 4 ? "uint4" : nw == 2 ? "uint2" : "unsigned int";
    for (std::int64_t r = 0; r < registers; r += vector) {
      o << "  {\n    union { " << vt << " v; unsigned w[" << nw << "]; } u;\n";
      if (load) {
        o << "    u.v = *reinterpret_cast<const " << vt << "*>(p + base + " << at(r) << ");\n";
        for (std::int64_t k = 0; k < nw; ++k) o << "    r[" << r / per + k << "] = u.w[" << k << "];\n";
      } else {
        for (std::int64_t k = 0; k < nw; ++k) o << "    u.w[" << k << "] = r[" << r / per + k << "];\n";
        o << "    *reinterpret_cast<" << vt << "*>(p + base + " << at(r) << ") = u.v;\n";
      }
      o << "  }\n";
    }
    return;
  }
  // One element per access, each in its place of its word.
  for (std::int64_t w = 0; w < registers / per; ++w) {
    if (load) o << "  r[" << w << "] = 0u";
    for (std::int64_t k = 0; k < per; ++k) {
      const std::int64_t q = w * per + k;
      const std::string shift = std::to_string(8 * es * k);
      const std::string elem = "p[" + addr0 + at(q) + "]";
      if (load) {
        o << " | (unsigned)(" << (edge ? "(" + inside(q) + ") ? " + elem + " : (" + t + ")0" : elem) << ") << " << shift;
      } else {
        o << "  " << (edge ? "if (" + inside(q) + ") " : "") << elem << " = (" << t << ")(r[" << w << "] >> " << shift
          << ");\n";
      }
    }
    if (load) o << ";\n";
  }
}

}  // namespace

void emit_access(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                 std::int64_t registers, std::int64_t vector, bool edge, bool packed) {
  const std::int64_t es = t == "unsigned char" ? 1 : t == "unsigned short" ? 2 : t == "unsigned int" ? 4 : 8;
  if (packed) {
    emit_packed_access(o, load, t, c, registers, vector, edge, es);
    return;
  }
  thread_terms(o, c, "tx", "ty");
  if (!edge) o << "  const long long base = tx + ty * stride;\n";
  const std::int64_t v = edge ? 1 : vector;
  const std::int64_t vbytes = v * es;
  const char* vt = vbytes == 16 ? "uint4" : vbytes == 8 ? "uint2" : nullptr;
  for (std::int64_t r = 0; r < registers; r += v) {
    const auto ur = static_cast<std::uint64_t>(r);
    const std::int64_t x = sum_of(c.m.x, ur), y = sum_of(c.m.y, ur);
    const std::string at = "(" + std::to_string(x) + "ll + " + std::to_string(y) + "ll * stride)";
    if (edge) {
      const std::string in = "tx + " + std::to_string(x) + "ll < xlim && ty + " + std::to_string(y) + "ll < ylim";
      if (load) {
        o << "  r[" << r << "] = (" << in << ") ? p[tx + ty * stride + " << at << "] : (" << t << ")0;\n";
      } else {
        o << "  if (" << in << ") p[tx + ty * stride + " << at << "] = r[" << r << "];\n";
      }
      continue;
    }
    if (v == 1) {
      if (load) o << "  r[" << r << "] = p[base + " << at << "];\n";
      else o << "  p[base + " << at << "] = r[" << r << "];\n";
      continue;
    }
    const std::string vtype = vt ? vt : (vbytes == 4 ? "unsigned int" : "unsigned short");
    o << "  {\n    union { " << vtype << " v; " << t << " e[" << v << "]; } u;\n";
    if (load) {
      o << "    u.v = *reinterpret_cast<const " << vtype << "*>(p + base + " << at << ");\n";
      for (std::int64_t i = 0; i < v; ++i) o << "    r[" << r + i << "] = u.e[" << i << "];\n";
    } else {
      for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = r[" << r + i << "];\n";
      o << "    *reinterpret_cast<" << vtype << "*>(p + base + " << at << ") = u.v;\n";
    }
    o << "  }\n";
  }
}

const char* const kRealignHelpers = R"(
template <int S> struct axe_piece;
template <> struct axe_piece<1> { typedef unsigned char T; };
template <> struct axe_piece<2> { typedef unsigned short T; };
template <> struct axe_piece<4> { typedef unsigned int T; };
template <> struct axe_piece<8> { typedef unsigned long long T; };
// The byte of the head's (tail's) piece of S bytes, or 16 when it has none; sh in 1..15.
template <int S> __device__ __forceinline__ unsigned axe_head_at(unsigned sh) {
  const unsigned m = 16u - sh;  // the head's length: a piece of each of its bits, smallest first
  return S >= AXE_ES && (m & S) ? sh + (m & (S - 1u)) : 16u;
}
template <int S> __device__ __forceinline__ unsigned axe_tail_at(unsigned sh) {
  return S >= AXE_ES && (sh & S) ? sh & ~(2u * S - 1u) : 16u;
}
template <int S> __device__ __forceinline__ unsigned long long axe_get(unsigned long long w, unsigned o) {
  return o < 16u ? (unsigned long long)*reinterpret_cast<const typename axe_piece<S>::T*>(w + o) << (8 * (o & 7u))
                 : 0ull;
}
template <int S> __device__ __forceinline__ void axe_set(unsigned long long w, unsigned o, unsigned long long lo,
                                                         unsigned long long hi) {
  if (o < 16u)
    *reinterpret_cast<typename axe_piece<S>::T*>(w + o) =
        static_cast<typename axe_piece<S>::T>((o < 8u ? lo : hi) >> (8 * (o & 7u)));
}
__device__ __forceinline__ uint4 axe_join(unsigned long long lo, unsigned long long hi) {
  return make_uint4((unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32));
}
// Bytes [b, 16) (head) or [0, b) (tail) of the word at w, the others zero.
template <bool Head> __device__ __forceinline__ uint4 axe_load_part(unsigned long long w, unsigned b) {
  const unsigned o1 = Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), o2 = Head ? axe_head_at<2>(b) : axe_tail_at<2>(b),
                 o4 = Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), o8 = Head ? axe_head_at<8>(b) : axe_tail_at<8>(b);
  const unsigned long long v1 = axe_get<1>(w, o1), v2 = axe_get<2>(w, o2), v4 = axe_get<4>(w, o4), v8 = axe_get<8>(w, o8);
  unsigned long long lo = 0ull, hi = 0ull;
  (o1 < 8u ? lo : hi) |= v1;
  (o2 < 8u ? lo : hi) |= v2;
  (o4 < 8u ? lo : hi) |= v4;
  (o8 < 8u ? lo : hi) |= v8;
  return axe_join(lo, hi);
}
template <bool Head> __device__ __forceinline__ void axe_store_part(unsigned long long w, unsigned b, uint4 v) {
  const unsigned long long lo = (unsigned long long)v.y << 32 | v.x, hi = (unsigned long long)v.w << 32 | v.z;
  axe_set<1>(w, Head ? axe_head_at<1>(b) : axe_tail_at<1>(b), lo, hi);
  axe_set<2>(w, Head ? axe_head_at<2>(b) : axe_tail_at<2>(b), lo, hi);
  axe_set<4>(w, Head ? axe_head_at<4>(b) : axe_tail_at<4>(b), lo, hi);
  axe_set<8>(w, Head ? axe_head_at<8>(b) : axe_tail_at<8>(b), lo, hi);
}
// Bytes k .. k + 15 (k < 16) of the 32 bytes a, b (a's byte 0 first).
__device__ __forceinline__ uint4 axe_shift16(uint4 a, uint4 b, unsigned k) {
  const unsigned q = k >> 2, r = 8 * (k & 3u);
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  unsigned t[6], s[5];  // s = w[q .. q + 4]: two words along if q's bit 1, then one if its bit 0
#pragma unroll
  for (int i = 0; i < 6; ++i) t[i] = q & 2u ? w[i + 2] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) s[i] = q & 1u ? t[i + 1] : t[i];
  return make_uint4(__funnelshift_r(s[0], s[1], r), __funnelshift_r(s[1], s[2], r),
                    __funnelshift_r(s[2], s[3], r), __funnelshift_r(s[3], s[4], r));
}
__device__ __forceinline__ uint4 axe_shfl_up16(uint4 v, int width) {
  return make_uint4(__shfl_up_sync(0xffffffffu, v.x, 1, width), __shfl_up_sync(0xffffffffu, v.y, 1, width),
                    __shfl_up_sync(0xffffffffu, v.z, 1, width), __shfl_up_sync(0xffffffffu, v.w, 1, width));
}
__device__ __forceinline__ uint4 axe_ldg16(unsigned long long w) { return __ldg(reinterpret_cast<const uint4*>(w)); }
)";

// Device helpers of whole destination words (the copy's realigned access), AXE_ES the element
// size, beside kRealignHelpers (axe_piece, axe_load_part, axe_store_part, axe_shift16): bytes
// [b0, b1) of the aligned word at w, the others zero: one 16-byte load for a whole word; for
// 1-byte elements a head [b0, 16) or a tail [0, b1) in at most four naturally aligned pieces; else
// element by element; never a byte outside [b0, b1). The same for a store. b0 and b1 are
// multiples of AXE_ES in 0..16. (Pieces for 1-byte elements: 1.4-2.9% less time on the uneven u8
// packs, unpacks and copies, one H200, 2026-11-28; for 2-byte elements they were slower:
// examples/results/1xH200/row_ends_2026-11-28/.)
const char* const kWordHelpers = R"(
__device__ __forceinline__ uint4 axe_load_range(unsigned long long w, int b0, int b1) {
  if (b0 == 0 && b1 == 16) return *reinterpret_cast<const uint4*>(w);
  if (AXE_ES == 1 && b1 == 16) return axe_load_part<true>(w, (unsigned)b0);
  if (AXE_ES == 1 && b0 == 0) return axe_load_part<false>(w, (unsigned)b1);
  union { uint4 v; typename axe_piece<AXE_ES>::T e[16 / AXE_ES]; } u;
  u.v = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
  for (int j = 0; j < 16 / AXE_ES; ++j)
    if (j * AXE_ES >= b0 && j * AXE_ES < b1) u.e[j] = reinterpret_cast<const typename axe_piece<AXE_ES>::T*>(w)[j];
  return u.v;
}
__device__ __forceinline__ void axe_store_range(unsigned long long w, int b0, int b1, uint4 v) {
  if (b0 == 0 && b1 == 16) {
    *reinterpret_cast<uint4*>(w) = v;
    return;
  }
  if (AXE_ES == 1 && b1 == 16) {
    axe_store_part<true>(w, (unsigned)b0, v);
    return;
  }
  if (AXE_ES == 1 && b0 == 0) {
    axe_store_part<false>(w, (unsigned)b1, v);
    return;
  }
  union { uint4 v; typename axe_piece<AXE_ES>::T e[16 / AXE_ES]; } u;
  u.v = v;
#pragma unroll
  for (int j = 0; j < 16 / AXE_ES; ++j)
    if (j * AXE_ES >= b0 && j * AXE_ES < b1) reinterpret_cast<typename axe_piece<AXE_ES>::T*>(w)[j] = u.e[j];
}
__device__ __forceinline__ int axe_clamp16(long long x) { return (int)min(max(x, 0ll), 16ll); }
)";

// axe_row_of_word (global_access.hpp): a word's row by a float reciprocal and one correction.
const char* const kFlatWordHelpers = R"(
__device__ __forceinline__ int axe_row_of_word(int g, int W, float finv, int& m) {
  int q = (int)((float)g * finv);
  m = g - q * W;
  if (m < 0) { --q; m += W; } else if (m >= W) { ++q; m -= W; }
  return q;
}
)";

void emit_realigned(std::ostringstream& o, bool load, const std::string& t, const Coords& c,
                    std::int64_t registers, std::int64_t v, std::int64_t group) {
  thread_terms(o, c, "tx", "ty");
  o << "  const long long base = tx + ty * stride;\n"
    << "  const bool first = (lane & " << group - 1 << "u) == 0u, last = (lane & " << group - 1 << "u) == "
    << group - 1 << "u;\n"
    << "  const uint4 z = make_uint4(0u, 0u, 0u, 0u);\n";
  const std::int64_t n = registers / v;
  for (std::int64_t j = 0; j < n; ++j) {
    const auto ur = static_cast<std::uint64_t>(j * v);
    const std::int64_t x = sum_of(c.m.x, ur), y = sum_of(c.m.y, ur);
    const std::string J = std::to_string(j);
    o << "  const unsigned long long a" << J << " = reinterpret_cast<unsigned long long>(p + base + " << x
      << "ll + " << y << "ll * stride);\n"
      << "  const unsigned sh" << J << " = (unsigned)a" << J << " & 15u;\n"
      << "  const unsigned long long w" << J << " = a" << J << " - sh" << J << ";\n";
  }
  if (load) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      o << "  const uint4 lo" << J << " = first && !interior && sh" << J << " ? axe_load_part<true>(w" << J << ", sh"
        << J << ") : axe_ldg16(w" << J << ");\n"
        << "  const uint4 hi" << J << " = sh" << J << " == 0u ? z : last && !interior ? axe_load_part<false>(w" << J
        << " + 16, sh" << J << ") : axe_ldg16(w" << J << " + 16);\n";
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const std::string J = std::to_string(j);
      o << "  {\n    union { uint4 v; " << t << " e[" << v << "]; } u;\n"
        << "    u.v = sh" << J << " == 0u ? lo" << J << " : axe_shift16(lo" << J << ", hi" << J << ", sh" << J << ");\n";
      for (std::int64_t i = 0; i < v; ++i) o << "    r[" << j * v + i << "] = u.e[" << i << "];\n";
      o << "  }\n";
    }
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const std::string J = std::to_string(j);
    o << "  {\n    union { uint4 v; " << t << " e[" << v << "]; } u;\n";
    for (std::int64_t i = 0; i < v; ++i) o << "    u.e[" << i << "] = r[" << j * v + i << "];\n";
    o << "    const uint4 prev = axe_shfl_up16(u.v, " << group << ");\n"
      << "    const uint4 head = sh" << J << " == 0u ? u.v : axe_shift16(prev, u.v, 16u - sh" << J << ");\n"
      << "    if (first && sh" << J << ") axe_store_part<true>(w" << J << ", sh" << J << ", head);\n"
      << "    else *reinterpret_cast<uint4*>(w" << J << ") = head;\n"
      << "    if (last && sh" << J << ") axe_store_part<false>(w" << J << " + 16, sh" << J << ", axe_shift16(u.v, z, 16u - sh"
      << J << "));\n  }\n";
  }
}

}  // namespace axe::codegen::internal
