// Text and JSON forms of plans.
#include <algorithm>
#include <span>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "axe/plan/plan.hpp"
#include "plan/internal.hpp"

namespace axe {

namespace {
std::string ints(std::span<const std::int64_t> v) {
  if (v.size() == 1) return std::to_string(v[0]);
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}
std::string axes_text(const std::vector<Axis>& axes) {
  std::string s = "{";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::string(axes[i].name());
  return s + "}";
}
std::string json_str(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}
std::string peers_text(const std::set<std::pair<std::int64_t, std::int64_t>>& pairs) {
  std::string s;
  std::size_t n = 0;
  for (auto [a, b] : pairs) {
    if (n == 8) {
      s += " ... (" + std::to_string(pairs.size()) + " pairs)";
      break;
    }
    s += (n++ ? " " : "") + std::to_string(a) + "->" + std::to_string(b);
  }
  return s.empty() ? "none" : s;
}
// Per buffer with padding listed (RankPlan::pads), over the ranks: elements, ranks that pad, the
// most boxes one rank pads. Empty when no rank's pads are computed.
struct PadSummary {
  std::size_t buffer = 0;
  bool destination = false;
  std::int64_t elements = 0, ranks = 0, max_boxes = 0;
};
std::vector<PadSummary> pad_summary(const Plan& p, bool& computed) {
  std::map<std::size_t, PadSummary> by;
  computed = false;
  for (const auto& r : p.ranks) {
    computed = computed || !r.pads.empty();
    for (std::size_t i = 0; i < r.pads.size(); ++i) {
      if (r.pads[i].empty()) continue;
      PadSummary& s = by[i];
      s.buffer = i;
      s.destination = i + 1 == r.buffers.size();
      for (const auto& t : r.pads[i]) s.elements += t.elements();
      ++s.ranks;
      s.max_boxes = std::max(s.max_boxes, static_cast<std::int64_t>(r.pads[i].size()));
    }
  }
  std::vector<PadSummary> out;
  for (const auto& [i, s] : by) out.push_back(s);
  return out;
}
}  // namespace

std::string to_string(const Transfer& t) {
  return ints(t.extents) + " src " + std::to_string(t.src_offset) + "+" + ints(t.src_strides) + " dst " +
         std::to_string(t.dst_offset) + "+" + ints(t.dst_strides) + (t.term ? " term " + std::to_string(t.term) : "");
}

std::string to_string(const Plan& p) {
  const std::int64_t es = size_of(p.request.dtype);
  std::ostringstream o;
  o << "plan " << to_string(p.request.from) << "\n  -> " << to_string(p.request.to) << "  dtype "
    << to_string(p.request.dtype) << "\n";
  for (std::size_t i = 0; i < p.kinds.size(); ++i) {
    std::int64_t bytes = 0, max_rank = 0, copies = 0;
    std::set<std::pair<std::int64_t, std::int64_t>> pairs;
    std::set<std::vector<std::int64_t>> groups;
    for (const auto& r : p.ranks) {
      const Step& s = r.steps[i];
      std::int64_t b = s.elements_sent() * es;
      bytes += b;
      max_rank = std::max(max_rank, std::max(b, s.elements_received() * es));
      for (const auto& c : s.copies) copies += c.elements() * es;
      for (const auto& m : s.sends) pairs.insert({r.rank, m.peer});
      if (!s.group.empty()) {
        auto g = s.group;
        std::sort(g.begin(), g.end());
        groups.insert(g);
      }
    }
    o << "step " << i << ": " << to_string(p.kinds[i]);
    if (!p.axes[i].empty()) o << " on " << axes_text(p.axes[i]) << " (" << groups.size() << " groups of "
                              << (groups.empty() ? 0 : groups.begin()->size()) << ")";
    if (!p.ranks.empty() && p.ranks[0].steps[i].chunks > 1)
      o << " chunk " << p.ranks[0].steps[i].chunk + 1 << "/" << p.ranks[0].steps[i].chunks;
    o << "  bytes " << bytes << " total, " << max_rank << " max/rank, local " << copies << "  peers "
      << peers_text(pairs) << "\n";
  }
  bool computed = false;
  const auto pads = pad_summary(p, computed);
  if (computed && pads.empty()) o << "pad: nothing (the steps write every element)\n";
  for (const auto& s : pads)
    o << "pad buffer " << s.buffer << (s.destination ? " (destination)" : "") << ": " << s.elements
      << " elements on " << s.ranks << " ranks, " << s.max_boxes << " boxes max/rank\n";
  o << "total: sent " << p.totals.bytes_sent << " bytes, busiest rank receives " << p.max_bytes_received
    << ", messages " << p.totals.messages << ", collectives " << p.totals.collectives << ", staging "
    << p.totals.staging_bytes << " bytes/rank, lower bound " << p.totals.lower_bound_bytes << " bytes";
  if (p.totals.lower_bound_bytes > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.2fx)",
                  static_cast<double>(p.totals.bytes_received) / static_cast<double>(p.totals.lower_bound_bytes));
    o << buf;
  }
  char est[48];
  std::snprintf(est, sizeof est, ", est %.1f us", p.estimated_seconds * 1e6);
  o << est << "\n";
  return o.str();
}

std::string to_json(const Plan& p) {
  const std::int64_t es = size_of(p.request.dtype);
  std::ostringstream o;
  o << "{\"from\": " << json_str(to_string(p.request.from.layout())) << ", \"to\": "
    << json_str(to_string(p.request.to.layout())) << ", \"from_mesh\": " << json_str(to_string(p.request.from.mesh()))
    << ", \"to_mesh\": " << json_str(to_string(p.request.to.mesh())) << ", \"shape\": "
    << json_str(internal::shape_text(p.request.from.shape())) << ", \"dtype\": " << json_str(to_string(p.request.dtype))
    << ", \"steps\": [";
  for (std::size_t i = 0; i < p.kinds.size(); ++i) {
    std::int64_t bytes = 0, max_rank = 0, staging = 0;
    std::vector<std::string> peers;
    for (const auto& r : p.ranks) {
      const Step& s = r.steps[i];
      staging = std::max(staging, s.staging_bytes);
      bytes += s.elements_sent() * es;
      max_rank = std::max(max_rank, std::max(s.elements_sent(), s.elements_received()) * es);
      for (const auto& m : s.sends)
        peers.push_back("[" + std::to_string(r.rank) + "," + std::to_string(m.peer) + "," +
                        std::to_string(m.elements() * es) + "]");
    }
    o << (i ? ", " : "") << "{\"kind\": " << json_str(to_string(p.kinds[i])) << ", \"axes\": [";
    for (std::size_t a = 0; a < p.axes[i].size(); ++a) o << (a ? ", " : "") << json_str(p.axes[i][a].name());
    const Step* first = p.ranks.empty() ? nullptr : &p.ranks[0].steps[i];
    o << "], \"bytes\": " << bytes << ", \"max_bytes_per_rank\": " << max_rank
      << ", \"staging_bytes\": " << staging << ", \"chunk\": " << (first ? first->chunk : 0)
      << ", \"chunks\": " << (first ? first->chunks : 1) << ", \"messages\": [";
    for (std::size_t j = 0; j < peers.size(); ++j) o << (j ? ", " : "") << peers[j];
    o << "]}";
  }
  o << "]";
  bool computed = false;
  const auto pads = pad_summary(p, computed);
  if (computed) {
    o << ", \"pads\": [";
    for (std::size_t j = 0; j < pads.size(); ++j)
      o << (j ? ", " : "") << "{\"buffer\": " << pads[j].buffer << ", \"elements\": " << pads[j].elements
        << ", \"ranks\": " << pads[j].ranks << ", \"max_boxes\": " << pads[j].max_boxes << "}";
    o << "]";
  }
  o << ", \"bytes_sent\": " << p.totals.bytes_sent << ", \"bytes_received\": " << p.totals.bytes_received
    << ", \"max_bytes_received\": " << p.max_bytes_received << ", \"messages\": " << p.totals.messages
    << ", \"collectives\": " << p.totals.collectives << ", \"staging_bytes\": " << p.totals.staging_bytes
    << ", \"lower_bound_bytes\": " << p.totals.lower_bound_bytes << ", \"estimated_us\": " << p.estimated_seconds * 1e6
    << "}";
  return o.str();
}

std::string to_string(const RankPlan& p) {
  std::ostringstream o;
  o << "rank " << p.rank << " buffers " << internal::shape_text(p.buffers) << "\n";
  for (std::size_t i = 0; i < p.pads.size(); ++i) {
    if (p.pads[i].empty()) continue;
    std::int64_t n = 0;
    for (const auto& t : p.pads[i]) n += t.elements();
    o << " pad buffer " << i << " (" << n << " elements)\n";
    for (const auto& t : p.pads[i]) o << "  " << to_string(t) << "\n";
  }
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    o << " step " << i << " " << to_string(s.kind);
    if (!s.group.empty()) o << " group " << internal::shape_text(s.group);
    if (s.reduce) o << " reduce " << to_string(s.op) << " of " << s.terms;
    if (s.chunks > 1) o << " chunk " << s.chunk + 1 << "/" << s.chunks;
    o << "\n";
    for (const auto& c : s.copies) o << "  copy " << to_string(c) << "\n";
    for (const auto& f : s.fills) o << "  fill " << to_string(f) << "\n";
    for (const auto& m : s.sends) {
      o << "  send to " << m.peer << " (" << m.elements() << " elements)\n";
      for (const auto& b : m.boxes) o << "    " << to_string(b) << "\n";
    }
    for (const auto& m : s.recvs) {
      o << "  recv from " << m.peer << " (" << m.elements() << " elements)\n";
      for (const auto& b : m.boxes) o << "    " << to_string(b) << "\n";
    }
  }
  return o.str();
}

}  // namespace axe
