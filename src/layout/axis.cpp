// Interned axis names and physical coordinates.
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "axe/layout/layout.hpp"
#include "axe/core/error.hpp"

namespace axe {
namespace {

// Names live on the heap behind unique_ptr so the string_views handed out stay valid while the
// table grows; the mutex only guards the table itself.
struct AxisTable {
  std::mutex mu;
  std::vector<std::unique_ptr<std::string>> names;
  std::unordered_map<std::string, std::uint32_t> ids;
  AxisTable() {
    names.push_back(std::make_unique<std::string>("m"));
    ids.emplace("m", 0);
  }
};

AxisTable& table() {
  static AxisTable* t = new AxisTable();  // never destroyed: usable during static teardown
  return *t;
}

bool valid_name(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !digit(c)) return false;
  }
  return true;
}

}  // namespace

Axis::Axis() : id_(0) {}

Axis::Axis(std::string_view name) {
  if (!valid_name(name)) {
    fail("axis name '" + std::string(name) +
         "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  }
  AxisTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) {
    id_ = it->second;
    return;
  }
  id_ = static_cast<std::uint32_t>(t.names.size());
  t.names.push_back(std::make_unique<std::string>(name));
  t.ids.emplace(std::string(name), id_);
}

std::string_view Axis::name() const {
  AxisTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return *t.names[id_];
}

std::strong_ordering Axis::operator<=>(const Axis& o) const {
  if (id_ == o.id_) return std::strong_ordering::equal;
  int c = name().compare(o.name());
  return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Prod: return "prod";
  }
  return "sum";
}

double reduce_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return 0.0;
    case ReduceOp::Prod: return 1.0;
    case ReduceOp::Max: return -std::numeric_limits<double>::infinity();
    case ReduceOp::Min: return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

ReduceOp parse_reduce_op(std::string_view name) {
  if (name == "sum") return ReduceOp::Sum;
  if (name == "avg") return ReduceOp::Avg;
  if (name == "max") return ReduceOp::Max;
  if (name == "min") return ReduceOp::Min;
  if (name == "prod") return ReduceOp::Prod;
  fail("unknown reduction '" + std::string(name) + "' (expected sum, avg, max, min or prod)");
}

// ---- PhysCoord ---------------------------------------------------------------------------------

std::int64_t PhysCoord::operator[](Axis a) const {
  for (const auto& [ax, v] : entries_) {
    if (ax == a) return v;
  }
  return 0;
}

void PhysCoord::set(Axis a, std::int64_t v) {
  for (auto& [ax, val] : entries_) {
    if (ax == a) {
      val = v;
      return;
    }
  }
  // Keep `m` last whatever order the axes arrive in.
  if (!a.is_memory() && !entries_.empty() && entries_.back().first.is_memory()) {
    entries_.insert(entries_.end() - 1, {a, v});
  } else {
    entries_.emplace_back(a, v);
  }
}

void PhysCoord::add(Axis a, std::int64_t v) {
  set(a, checked_add((*this)[a], v, "PhysCoord::add on axis " + std::string(a.name())));
}

bool PhysCoord::operator==(const PhysCoord& o) const {
  for (const auto& [a, v] : entries_) {
    if (o[a] != v) return false;
  }
  for (const auto& [a, v] : o.entries_) {
    if ((*this)[a] != v) return false;
  }
  return true;
}

std::string to_string(const PhysCoord& c) {
  std::string s = "{";
  bool first = true;
  for (const auto& [a, v] : c.entries()) {
    if (!first) s += ", ";
    first = false;
    s += std::string(a.name()) + " " + std::to_string(v);
  }
  return s + "}";
}

}  // namespace axe

std::size_t std::hash<axe::Axis>::operator()(const axe::Axis& a) const noexcept {
  return std::hash<std::string_view>()(a.name());
}
