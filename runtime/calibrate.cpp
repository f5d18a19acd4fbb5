// Cost-model calibration on the running backend (calibrate.hpp): timing one-step redistributions
// per collective kind, and the cached model file at start-up. The fit and the cases: calibrate_fit.cpp.
#include "axe/runtime/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "axe/core/bytes.hpp"
#include "axe/core/error.hpp"
#include "axe/dist/placement.hpp"
#include "axe/runtime/control.hpp"
#include "axe/runtime/runtime.hpp"

namespace axe {

// ---- options and key ------------------------------------------------------------------------

namespace {

constexpr std::string_view kHeader = "# axe-calibration ";

std::string join_sizes(const std::vector<std::int64_t>& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}


}  // namespace

int default_repeats(const Runtime& rt) {
  return rt.backend().name() == "host" ? 1 : 8;
}

namespace {

struct Resolved {
  std::vector<std::int64_t> sizes;
  int iterations = 5;
  int repeats = 1;
  std::string mesh_text;  // "" : none
  Mesh mesh;
};

Resolved resolve(const Runtime& rt, const CalibrationOptions& o) {
  Resolved r;
  const bool host = rt.backend().name() == "host";
  r.sizes = o.sizes;
  if (r.sizes.empty()) {
    r.sizes = tunable_byte_list("AXE_CALIBRATE_SIZES");
    if (r.sizes.empty())
      r.sizes = host ? std::vector<std::int64_t>{4096, 65536, 262144} : std::vector<std::int64_t>{65536, 2 << 20, 64 << 20};
  }
  std::vector<std::int64_t> s = r.sizes;
  std::sort(s.begin(), s.end());
  std::string list = join_sizes(r.sizes);
  if (std::unique(s.begin(), s.end()) - s.begin() < 2 || s.front() < 1024)
    fail("calibration sizes {" + list +
         "}: need at least two different per-rank sizes of at least 1024 bytes");
  r.iterations = o.iterations > 0 ? o.iterations : host ? 7 : 10;
  r.repeats = o.repeats > 0 ? o.repeats : default_repeats(rt);
  r.mesh_text = o.mesh.empty() ? tunable("AXE_CALIBRATE_MESH") : o.mesh;
  if (!r.mesh_text.empty()) {
    r.mesh = parse_mesh(r.mesh_text);
    if (r.mesh.size() != rt.size())
      fail("calibration mesh '" + r.mesh_text + "' (AXE_CALIBRATE_MESH) has " +
           std::to_string(r.mesh.size()) + " devices but the world has " +
           std::to_string(rt.size()) + " ranks");
    r.mesh_text = to_string(r.mesh);
  }
  return r;
}

std::string key_of(const Runtime& rt, const Resolved& r) {
  const std::string sizes = join_sizes(r.sizes);
  return "format=1 backend=" + std::string(rt.backend().name()) +
         " world=" + std::to_string(rt.size()) +
         " ranks_per_node=" + std::to_string(rt.local_size()) +
         " mesh=" + (r.mesh_text.empty() ? "-" : r.mesh_text) + " sizes=" + sizes;
}

// Forcing model: `kind` costs nothing, every other kind a second per call and per byte, so the
// planner runs a calibration case as that kind whenever it can.
CostModel forcing_model(StepKind kind) {
  CostModel m;
  for (auto k : {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                 StepKind::AllToAll, StepKind::Broadcast, StepKind::Permute, StepKind::SendRecv})
    m.set(k, {1.0, 1.0});
  if (kind != StepKind::LocalCopy) m.set(kind, {0.0, kMinBeta});
  return m;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<double> time_plans(Runtime& rt, std::span<const RankPlan* const> plans, int iterations,
                               int repeats) {
  if (iterations < 1 || repeats < 1)
    fail("time_plans: iterations and repeats must be >= 1 (got " + std::to_string(iterations) +
         ", " + std::to_string(repeats) + ")");
  Backend& be = rt.backend();
  struct Bufs {
    std::shared_ptr<Buffer> src, dst;
  };
  std::vector<Bufs> bufs;
  for (const RankPlan* p : plans) {
    const std::size_t es = static_cast<std::size_t>(size_of(p->dtype));
    Bufs b;
    b.src = be.allocate(p->buffers.empty() ? 0 : static_cast<std::size_t>(p->buffers.front()) * es);
    b.dst = be.allocate(p->buffers.empty() ? 0 : static_cast<std::size_t>(p->buffers.back()) * es);
    bufs.push_back(std::move(b));
  }
  // Warm-up: one untimed batch of each (communicators, caches, clocks).
  for (std::size_t i = 0; i < plans.size(); ++i)
    for (int k = 0; k < repeats && !plans[i]->buffers.empty(); ++k)
      be.execute_async(*plans[i], *bufs[i].src, *bufs[i].dst);
  be.synchronize();
  // Prepared on every rank now: the timed runs skip the backend's per-call agreement, as
  // DistTensor::redistribute's steady state does (its own one agreement per call is the same
  // for every plan, so it is no part of a step's cost).
  const std::size_t np = plans.size();
  std::vector<std::uint64_t> prepare(np);
  for (std::size_t i = 0; i < np; ++i) prepare[i] = be.needs_preparation(*plans[i]) ? 1 : 0;
  rt.control().allreduce_max(prepare, "timing plans (preparation)");
  // Round robin: run k of every plan, then run k+1, ... so that a slow period of a shared
  // machine hits every plan alike instead of whichever was being timed.
  const std::size_t n = static_cast<std::size_t>(iterations);
  std::vector<std::uint64_t> ns(n * np);
  for (std::size_t it = 0; it < n; ++it)
    for (std::size_t i = 0; i < np; ++i) {
      rt.barrier();
      const double t0 = now_s();
      for (int k = 0; k < repeats && !plans[i]->buffers.empty(); ++k)
        be.execute_agreed(*plans[i], *bufs[i].src, *bufs[i].dst, prepare[i] != 0);
      be.synchronize();
      ns[i * n + it] = static_cast<std::uint64_t>((now_s() - t0) * 1e9 / repeats);
    }
  rt.control().allreduce_max(ns, "timing plans (slowest rank)");
  std::vector<double> med(np);
  for (std::size_t i = 0; i < np; ++i) {
    auto b = ns.begin() + static_cast<std::ptrdiff_t>(i * n);
    std::sort(b, b + static_cast<std::ptrdiff_t>(n));
    const double m =
        n % 2 ? static_cast<double>(b[n / 2]) : 0.5 * static_cast<double>(b[n / 2 - 1] + b[n / 2]);
    med[i] = m * 1e-9;
  }
  return med;
}

double time_plan(Runtime& rt, const RankPlan& plan, int iterations, int repeats) {
  const RankPlan* p = &plan;
  return time_plans(rt, std::span<const RankPlan* const>(&p, 1), iterations, repeats)[0];
}

namespace {

struct SeriesSpec {
  StepKind kind;
  const Mesh* mesh;
  std::vector<Axis> axes;
};

// Every series at every size: per size, one plan per series, timed round robin; then the fits
// (local copies first: their rate is the copy term removed from every other kind).
std::vector<CalibrationSeries> measure(Runtime& rt, const std::vector<SeriesSpec>& specs,
                                       const Resolved& r) {
  std::vector<CalibrationSeries> out(specs.size());
  std::vector<std::vector<CalibrationCase>> cases(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    out[i].kind = specs[i].kind;
    out[i].axes = specs[i].axes;
    out[i].group = 1;
    for (Axis a : specs[i].axes.empty() ? specs[i].mesh->axes() : specs[i].axes)
      out[i].group *= specs[i].mesh->axis_size(a);
  }
  for (std::int64_t n : r.sizes) {
    std::vector<RankPlan> plans;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const StepKind kind = specs[i].kind;
      // Sources of g shards (reduce-scatter, the local slice) are capped at 256 MiB per rank.
      std::int64_t bytes = n;
      if (kind == StepKind::ReduceScatter || kind == StepKind::LocalCopy)
        bytes = std::min<std::int64_t>(n, (std::int64_t{256} << 20) / out[i].group);
      CalibrationCase c = calibration_case(kind, *specs[i].mesh, specs[i].axes, bytes);
      if (!cases[i].empty() && cases[i].back().x == c.x) continue;  // capped to the same size
      RankPlan plan = plan_rank(c.request, rt.rank(), forcing_model(kind));
      for (const auto& st : plan.steps)
        if (st.kind != kind)
          fail("cost-model calibration: the planner runs the " + std::string(to_string(kind)) +
               " case " + to_string(c.request.from) + " -> " + to_string(c.request.to) +
               " with a " + std::string(to_string(st.kind)) + " step");
      cases[i].push_back(c);
      plans.push_back(std::move(plan));
      which.push_back(i);
    }
    std::vector<const RankPlan*> ptrs;
    for (const auto& p : plans) ptrs.push_back(&p);
    std::vector<double> t = time_plans(rt, ptrs, r.iterations, r.repeats);
    for (std::size_t j = 0; j < which.size(); ++j) {
      const CalibrationCase& c = cases[which[j]].back();
      CalibrationPoint p;
      p.shard_bytes = static_cast<std::int64_t>(std::min(c.in_bytes, c.out_bytes));
      p.x = c.x;
      p.seconds = t[j];
      out[which[j]].points.push_back(p);
    }
  }
  double local_beta = CostModel().local_beta;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < specs.size(); ++i) {
      CalibrationSeries& s = out[i];
      if ((s.kind == StepKind::LocalCopy) != (pass == 0) || s.points.size() < 2) continue;
      std::vector<FitPoint> f;
      for (std::size_t j = 0; j < s.points.size(); ++j) {
        const CalibrationCase& c = cases[i][j];
        s.points[j].local =
            s.kind == StepKind::LocalCopy ? 0 : local_beta * (c.in_bytes + c.out_bytes);
        f.push_back({s.points[j].x, s.points[j].seconds - s.points[j].local});
      }
      s.fit = fit_alpha_beta(f);
      if (s.kind == StepKind::LocalCopy) local_beta = s.fit.beta;
      if (s.kind == StepKind::SendRecv)
        s.fit.alpha /= cases[i][0].alpha_count;  // alpha per message
    }
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string calibration_text(const Calibration& c, int iterations, int repeats) {
  std::string s = std::string(kHeader) + c.key + "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "# measured %s in %.2f s; per point the median of %d batches of %d runs (time per "
                "run) of the slowest rank\n",
                utc_now().c_str(), c.seconds, iterations, repeats);
  s += buf;
  s += "# lines: [peer] KIND [AXES] ALPHA_US GBPS (no axes: the world group, the default for any group; peer: the peer transport)\n";
  for (const auto& x : c.series) {
    std::string g = "world";
    if (!x.axes.empty()) {
      g = "{";
      g += axes_text(x.axes);
      g += '}';
    }
    s += "# " + std::string(x.peer ? "peer " : "") + std::string(to_string(x.kind)) + " on " + g +
         " (g=" + std::to_string(x.group) + "):";
    for (const auto& p : x.points) {
      std::snprintf(buf, sizeof buf, " N=%lld B %.2f us (x=%.0f B, local %.2f us);",
                    static_cast<long long>(p.shard_bytes), p.seconds * 1e6, p.x, p.local * 1e6);
      s += buf;
    }
    s += "\n";
  }
  for (const auto& x : c.series)
    if (x.points.size() >= 2) {
      CostModel::Coeffs f = x.fit;
      if (x.kind == StepKind::LocalCopy) f.alpha = 0;  // the model has no alpha for local copies
      s += coeffs_line(x.kind, x.axes, f, x.peer) + "\n";
    }
  return s;
}

}  // namespace

std::string calibration_key(const Runtime& rt, const CalibrationOptions& options) {
  return key_of(rt, resolve(rt, options));
}

std::string calibration_key_of(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto e = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos);
    if (line.substr(0, kHeader.size()) == kHeader) {
      std::string k(line.substr(kHeader.size()));
      while (!k.empty() && (k.back() == '\r' || k.back() == ' ')) k.pop_back();
      return k;
    }
    if (e == std::string_view::npos) break;
    pos = e + 1;
  }
  return "";
}

CostModel parse_cost_model_file(std::string_view text, const std::string& path) {
  try {
    return CostModel::parse(text);
  } catch (const Error& e) {
    fail("cost model file '" + path + "': " + e.what());
  }
}

Calibration calibrate(Runtime& rt, const CalibrationOptions& options) {
  const Resolved r = resolve(rt, options);
  Calibration c;
  c.key = key_of(rt, r);
  const double t0 = now_s();
  const std::int64_t p = rt.size();
  if (p >= 2) {
    const Mesh world({{"world", p}});
    std::vector<SeriesSpec> specs = {{StepKind::LocalCopy, &world, {}}};
    const StepKind kinds[] = {StepKind::AllGather, StepKind::ReduceScatter, StepKind::AllReduce,
                              StepKind::AllToAll,  StepKind::Broadcast,     StepKind::Permute,
                              StepKind::SendRecv};
    for (StepKind k : kinds) specs.push_back({k, &world, {}});
    if (!r.mesh_text.empty() && r.mesh.ndim() > 1)
      for (std::size_t i = 0; i < r.mesh.ndim(); ++i) {
        if (r.mesh.sizes()[i] < 2) continue;
        for (StepKind k : kinds)
          if (k != StepKind::SendRecv) specs.push_back({k, &r.mesh, {r.mesh.axes()[i]}});
      }
    // With a per-step choice of transport (one node, a GPU per rank), both are measured, each
    // forced; the peer series fit the model's "peer" lines (local copies move nothing between
    // ranks: one line).
    Backend& be = rt.backend();
    const bool both = be.set_transport("network");
    c.series = measure(rt, specs, r);
    if (both) {
      be.set_transport("peer");
      std::vector<CalibrationSeries> peer = measure(rt, specs, r);  // the local copy again: its fit
      be.set_transport("");                                         // is what the others subtract
      for (auto& x : peer)
        if (x.kind != StepKind::LocalCopy) {
          x.peer = true;
          c.series.push_back(std::move(x));
        }
    }
  }
  c.seconds = now_s() - t0;
  // Rank 0's text is the model everywhere (the timings are already max-reduced, so the ranks
  // would agree anyway; this also fixes the wall time and the date).
  std::string text = calibration_text(c, r.iterations, r.repeats);
  std::uint64_t len = text.size();
  rt.control().broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&len, 1)), 0,
                           "cost-model calibration");
  text.resize(static_cast<std::size_t>(len));
  rt.control().broadcast(std::as_writable_bytes(std::span<char>(text.data(), text.size())), 0,
                           "cost-model calibration");
  c.text = std::move(text);
  c.model = parse_cost_model_file(c.text, "(calibration)");
  return c;
}

// ---- start-up --------------------------------------------------------------------------------

namespace {

// Rank 0 reads `path`; every rank gets {status, text}: 0 missing, 1 read, 2 error (text: why).
std::pair<int, std::string> read_on_root(Runtime& rt, const std::string& path) {
  std::uint64_t head[2] = {0, 0};
  std::string text;
  if (rt.rank() == 0) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
      // A directory opens as an empty stream: it would load as an empty model.
      text = "cost model file '" + path + "' is " +
             (std::filesystem::is_directory(st) ? "a directory" : "not a regular file") + ", not a file (rank 0)";
      head[0] = 2;
    } else if (std::filesystem::exists(st)) {
      std::ifstream f(path, std::ios::binary);
      std::stringstream ss;
      if (f) ss << f.rdbuf();
      if (f && !f.bad()) {
        text = ss.str();
        head[0] = 1;
      } else {
        text = "cannot read cost model file '" + path + "' (rank 0)";
        head[0] = 2;
      }
    } else if (ec && ec != std::errc::no_such_file_or_directory) {
      text = "cannot access cost model file '" + path + "': " + ec.message();
      head[0] = 2;
    }
    head[1] = text.size();
  }
  rt.control().broadcast(std::as_writable_bytes(std::span<std::uint64_t>(head, 2)), 0,
                           "cost model file");
  text.resize(static_cast<std::size_t>(head[1]));
  rt.control().broadcast(std::as_writable_bytes(std::span<char>(text.data(), text.size())), 0,
                           "cost model file");
  return {static_cast<int>(head[0]), text};
}

void agree_on(Runtime& rt, const std::string& what, const std::string& err, const CostModel& m) {
  rt.agree(what, err, err.empty() ? fingerprint(m.fingerprint()) : 0,
           "cost model " + m.fingerprint());
}

}  // namespace

CostModel load_cost_model(Runtime& rt, const std::string& path) {
  // Sizes and mesh only say what was measured; the numbers hold for the same machine and world.
  auto world_part = [](const std::string& key) {
    std::istringstream in(key);
    std::string w, out;
    for (int i = 0; i < 4 && in >> w; ++i) {
      if (i) out += ' ';
      out += w;
    }
    return out;
  };
  const std::string expected_key = world_part(key_of(rt, Resolved{}));
  auto [status, text] = read_on_root(rt, path);
  std::string err;
  CostModel m;
  if (status == 0)
    err = "AXE_COST_MODEL: cost model file '" + path + "' does not exist (rank 0)";
  else if (status == 2)
    err = "AXE_COST_MODEL: " + text;
  else {
    const std::string k = calibration_key_of(text);
    if (!k.empty() && world_part(k) != expected_key)
      err = "AXE_COST_MODEL: cost model file '" + path + "' was calibrated for '" + k +
            "' but this run is '" + expected_key + "'; re-measure it with AXE_CALIBRATE=" + path +
            ", or delete its '# axe-calibration' line to use it anyway";
    else {
      try {
        m = parse_cost_model_file(text, path);
      } catch (const Error& e) {
        err = std::string("AXE_COST_MODEL: ") + e.what();
      }
    }
  }
  agree_on(rt, "cost model (AXE_COST_MODEL)", err, m);
  return m;
}

CostModel calibrated_model(Runtime& rt, const std::string& path, const CalibrationOptions& options,
                           std::string* origin) {
  std::string err, key;
  try {
    key = calibration_key(rt, options);
  } catch (const Error& e) {
    err = std::string("AXE_CALIBRATE: ") + e.what();
  }
  rt.agree("cost-model calibration (AXE_CALIBRATE)", err);
  auto [status, text] = read_on_root(rt, path);
  std::string reason = "no file yet";
  if (status == 2) err = "AXE_CALIBRATE: " + text;
  if (status == 1) {
    const std::string k = calibration_key_of(text);
    if (k.empty())
      err = "AXE_CALIBRATE: '" + path +
            "' exists but is not an axe calibration file (no '# axe-calibration' header line); "
            "not overwriting it: remove it or choose another path (a model of your own goes in "
            "AXE_COST_MODEL)";
    else if (k == key) {
      CostModel m;
      try {
        m = parse_cost_model_file(text, path);
      } catch (const Error& e) {
        err = std::string("AXE_CALIBRATE: ") + e.what() + " (delete the file to re-measure)";
      }
      agree_on(rt, "cost-model calibration (AXE_CALIBRATE)", err, m);
      if (origin) *origin = "loaded " + path;
      return m;
    } else {
      reason = "the file was calibrated for '" + k + "', this run is '" + key + "'";
    }
  }
  rt.agree("cost-model calibration (AXE_CALIBRATE)", err);
  Calibration c = calibrate(rt, options);
  // Rank 0 writes atomically: a temporary file beside the target, renamed over it.
  std::string werr;
  if (rt.rank() == 0) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      if (f) f << c.text;
      f.close();
      if (!f)
        werr = "AXE_CALIBRATE: cannot write cost model file '" + tmp + "' (for '" + path + "')";
    }
    if (werr.empty()) {
      std::error_code ec;
      std::filesystem::rename(tmp, path, ec);
      if (ec)
        werr = "AXE_CALIBRATE: cannot rename '" + tmp + "' to '" + path + "': " + ec.message();
    }
    if (!werr.empty()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
    }
  }
  agree_on(rt, "cost-model calibration (AXE_CALIBRATE)", werr, c.model);
  if (origin) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " in %.2f s", c.seconds);
    *origin = "measured" + std::string(buf) + ", written to " + path + " (" + reason + ")";
  }
  return c.model;
}

}  // namespace axe
