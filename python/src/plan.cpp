// axe.Mesh, axe.Shard/Replicate/Partial, axe.DistLayout (the dist layer) and axe.plan /
// axe.simulate (the planner and the simulator), printing as the calculator's `axe plan` and
// `axe simulate` do (src/cli/plan_commands.cpp).
#include "axe/plan/plan.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/unique_ptr.h>

#include <functional>
#include <memory>

#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/exec/simulate.hpp"
#include "axe/plan/passes.hpp"
#include "common.hpp"

namespace axe::py {
namespace {

std::string ints_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::vector<std::string> axes_out(const std::vector<Axis>& axes) {
  std::vector<std::string> v;
  for (auto a : axes) v.emplace_back(a.name());
  return v;
}

AxisPlacement placement_of(AxisPlacement::Kind kind, int dim, ReduceOp op, nb::handle axes) {
  AxisPlacement p;
  p.kind = kind;
  p.dim = dim;
  p.op = op;
  if (!axes.is_none()) {
    if (nb::isinstance<nb::str>(axes))
      p.axes.emplace_back(nb::cast<std::string>(axes));
    else
      for (nb::handle a : axes) p.axes.emplace_back(nb::cast<std::string>(a));
  }
  return p;
}

// The plan's request from Python arguments (as `axe plan` builds it from its options).
struct Planned {
  PlanRequest request;
  Plan plan;
};

std::shared_ptr<Planned> make_plan(nb::handle shape, const Mesh& mesh, nb::handle src,
                                   nb::handle dst, std::optional<Mesh> to_mesh,
                                   const std::string& dtype, std::int64_t staging_limit,
                                   std::int64_t spread_min, std::optional<std::string> passes,
                                   std::optional<std::vector<std::int64_t>> chunks) {
  auto s = to_shape(shape, "shape");
  auto p = std::make_shared<Planned>();
  p->request.from = to_dist_layout(src, s, mesh, "src");
  p->request.to = to_dist_layout(dst, s, to_mesh ? *to_mesh : mesh, "dst");
  p->request.dtype = parse_dtype(dtype);
  if (staging_limit < 0 || spread_min < 0)
    fail("plan: staging_limit and spread_min are byte counts >= 0 (0: the default)");
  p->request.staging_limit = staging_limit;
  p->request.spread_min_bytes = spread_min;
  check_request(p->request);
  Plan plan = plan_all(p->request);
  PassOptions o;
  if (passes) o = parse_passes(*passes);
  if (chunks) {
    for (auto k : *chunks)
      if (k < 1) fail("plan: chunks: " + std::to_string(k) + " chunks (each count must be >= 1)");
    if (chunks->size() != plan.kinds.size())
      fail("plan: chunks: " + std::to_string(chunks->size()) + " counts for a plan of " +
           std::to_string(plan.kinds.size()) + " steps (one per step)");
    o.chunks = *chunks;
  }
  p->plan = run_passes(plan, o);
  return p;
}

nb::dict stats_out(const PlanStats& s) {
  nb::dict d;
  d["bytes_sent"] = s.bytes_sent;
  d["bytes_received"] = s.bytes_received;
  d["messages"] = s.messages;
  d["collectives"] = s.collectives;
  d["staging_bytes"] = s.staging_bytes;
  d["lower_bound_bytes"] = s.lower_bound_bytes;
  return d;
}

// Printing without the final newline (print() adds one).
std::string chomp(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

struct SimResult {
  std::shared_ptr<Planned> planned;
  SimulationResult result;
  std::string error;
};

}  // namespace

DistLayout to_dist_layout(nb::handle spec, const std::vector<std::int64_t>& shape, const Mesh& mesh,
                          const char* what) {
  try {
    if (nb::isinstance<DistLayout>(spec)) {
      const auto& d = nb::cast<const DistLayout&>(spec);
      if (d.shape() != shape)
        fail("shape " + ints_text(d.shape()) + " is not the tensor's " + ints_text(shape));
      if (!(d.mesh() == mesh)) fail("mesh " + to_string(d.mesh()) + " is not " + to_string(mesh));
      return d;
    }
    if (nb::isinstance<AxeLayout>(spec))
      return DistLayout(shape, nb::cast<const AxeLayout&>(spec), mesh);
    if (nb::isinstance<AxisPlacement>(spec)) {
      std::vector<AxisPlacement> ps{nb::cast<const AxisPlacement&>(spec)};
      return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(ps));
    }
    if (nb::isinstance<nb::str>(spec)) {
      std::string text = nb::cast<std::string>(spec);
      if (text.find('[') != std::string::npos)
        return DistLayout(shape, parse_axe_layout(text), mesh);
      auto ps = parse_placements(text);
      return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(ps));
    }
    if (nb::isinstance<nb::sequence>(spec)) {
      std::vector<AxisPlacement> ps;
      for (nb::handle x : spec) {
        if (!nb::isinstance<AxisPlacement>(x))
          fail("a placement sequence holds axe.Shard(d), axe.Replicate() or axe.Partial(op), got " +
               nb::cast<std::string>(nb::repr(x)));
        ps.push_back(nb::cast<const AxisPlacement&>(x));
      }
      return shard(std::span<const std::int64_t>(shape), mesh, std::span<const AxisPlacement>(ps));
    }
    fail(
        "expected placements ('S(0),R', [axe.Shard(0), axe.Replicate()]), an axe.Layout, layout "
        "text or an "
        "axe.DistLayout, got " +
        nb::cast<std::string>(nb::repr(spec)));
  } catch (const ParseError&) {
    throw;
  } catch (const Error& e) {
    fail(std::string(what) + " " + nb::cast<std::string>(nb::repr(spec)) + " on mesh " +
         to_string(mesh) + ": " + e.what());
  }
}

void bind_dist(nb::module_& m) {
  nb::class_<Mesh>(m, "Mesh",
                   "A device mesh: Mesh(dp=2, tp=2), Mesh('dp=2,tp=2'), Mesh([('x', 2), ('y', 2)], "
                   "ranks=[...]).\n"
                   "Device coordinates map to ranks row-major unless ranks are given.")
      .def("__init__",
           [](Mesh* self, nb::args args, nb::kwargs kwargs) {
             std::vector<std::int64_t> ranks;
             std::vector<std::pair<std::string, std::int64_t>> axes;
             bool have_ranks = false;
             for (auto [k, v] : kwargs) {
               std::string key = nb::cast<std::string>(k);
               if (key == "ranks") {
                 ranks = nb::cast<std::vector<std::int64_t>>(v);
                 have_ranks = true;
               } else {
                 axes.emplace_back(key, nb::cast<std::int64_t>(v));
               }
             }
             if (args.size() > 1)
               fail("Mesh: at most one positional argument (mesh text or (axis, size) pairs)");
             if (args.size() == 1) {
               if (!axes.empty()) fail("Mesh: axes either as text/pairs or as keywords, not both");
               if (nb::isinstance<nb::str>(args[0])) {
                 Mesh parsed = parse_mesh(nb::cast<std::string>(args[0]));
                 if (!have_ranks) {
                   new (self) Mesh(std::move(parsed));
                   return;
                 }
                 for (std::size_t i = 0; i < parsed.ndim(); ++i)
                   axes.emplace_back(std::string(parsed.axes()[i].name()), parsed.sizes()[i]);
               } else {
                 axes = nb::cast<std::vector<std::pair<std::string, std::int64_t>>>(args[0]);
               }
             }
             new (self) Mesh(std::move(axes), std::move(ranks));
           })
      .def_prop_ro("axes", [](const Mesh& m) { return axes_out(m.axes()); })
      .def_prop_ro("sizes", [](const Mesh& m) { return m.sizes(); })
      .def_prop_ro("shape",
                   [](const Mesh& m) {
                     nb::list l;
                     for (auto s : m.sizes()) l.append(s);
                     return nb::tuple(l);
                   })
      .def_prop_ro("ndim", &Mesh::ndim)
      .def_prop_ro("size", &Mesh::size)
      .def_prop_ro("ranks", [](const Mesh& m) { return m.ranks(); })
      .def("axis_size", [](const Mesh& m, const std::string& a) { return m.axis_size(Axis(a)); })
      .def("coord", &Mesh::coord, nb::arg("rank"),
           "The device coordinate of a rank (one entry per axis).")
      .def("rank_at", [](const Mesh& m, std::vector<std::int64_t> c) { return m.rank_at(c); })
      .def("contains", &Mesh::contains)
      .def("__len__", [](const Mesh& m) { return m.size(); })
      .def("__str__", [](const Mesh& m) { return to_string(m); })
      .def("__repr__", [](const Mesh& m) { return py_repr_call("axe.Mesh", to_string(m)); })
      .def("__eq__",
           [](const Mesh& a, nb::handle b) {
             return nb::isinstance<Mesh>(b) && a == nb::cast<const Mesh&>(b);
           })
      .def("__ne__",
           [](const Mesh& a, nb::handle b) {
             return !(nb::isinstance<Mesh>(b) && a == nb::cast<const Mesh&>(b));
           })
      .def("__hash__", [](const Mesh& m) { return std::hash<std::string>{}(to_string(m)); })
      .def("__getstate__", [](const Mesh& m) { return to_string(m); })
      .def("__setstate__",
           [](Mesh* self, const std::string& s) { new (self) Mesh(parse_mesh(s)); });

  nb::class_<AxisPlacement>(
      m, "AxisPlacement",
      "One mesh axis' placement, as DTensor's: axe.Shard(dim), axe.Replicate(), axe.Partial(op).")
      .def_prop_ro("kind",
                   [](const AxisPlacement& p) {
                     return p.kind == AxisPlacement::Kind::Shard     ? "shard"
                            : p.kind == AxisPlacement::Kind::Partial ? "partial"
                                                                     : "replicate";
                   })
      .def_ro("dim", &AxisPlacement::dim)
      .def_prop_ro("reduce_op", [](const AxisPlacement& p) { return std::string(to_string(p.op)); })
      .def_prop_ro("axes", [](const AxisPlacement& p) { return axes_out(p.axes); })
      .def(
          "is_shard",
          [](const AxisPlacement& p, std::optional<int> dim) {
            return p.kind == AxisPlacement::Kind::Shard && (!dim || *dim == p.dim);
          },
          nb::arg("dim") = nb::none())
      .def("is_replicate",
           [](const AxisPlacement& p) { return p.kind == AxisPlacement::Kind::Replicate; })
      .def("is_partial",
           [](const AxisPlacement& p) { return p.kind == AxisPlacement::Kind::Partial; })
      .def("__str__", [](const AxisPlacement& p) { return to_string(p); })
      .def("__repr__",
           [](const AxisPlacement& p) {
             std::string axes;
             for (auto a : p.axes)
               axes += std::string(axes.empty() ? "" : ", ") + "'" + std::string(a.name()) + "'";
             if (!axes.empty()) axes = ", axes=(" + axes + (p.axes.size() == 1 ? ",)" : ")");
             switch (p.kind) {
               case AxisPlacement::Kind::Shard:
                 return "axe.Shard(" + std::to_string(p.dim) + axes + ")";
               case AxisPlacement::Kind::Partial:
                 return "axe.Partial('" + std::string(to_string(p.op)) + "'" + axes + ")";
               default:
                 return std::string("axe.Replicate()");
             }
           })
      .def("__eq__",
           [](const AxisPlacement& a, nb::handle b) {
             return nb::isinstance<AxisPlacement>(b) && a == nb::cast<const AxisPlacement&>(b);
           })
      .def("__ne__",
           [](const AxisPlacement& a, nb::handle b) {
             return !(nb::isinstance<AxisPlacement>(b) && a == nb::cast<const AxisPlacement&>(b));
           })
      .def("__hash__",
           [](const AxisPlacement& p) { return std::hash<std::string>{}(to_string(p)); });
  m.def(
      "Shard",
      [](int dim, nb::handle axes) {
        return placement_of(AxisPlacement::Kind::Shard, dim, ReduceOp::Sum, axes);
      },
      nb::arg("dim"), nb::arg("axes") = nb::none(),
      "Shard tensor dim `dim` over this mesh axis (DTensor), or over `axes` (JAX style, major "
      "first).");
  m.def("Replicate", [] { return Replicate(); });
  m.def(
      "Partial",
      [](const std::string& op, nb::handle axes) {
        return placement_of(AxisPlacement::Kind::Partial, 0, parse_reduce_op(op), axes);
      },
      nb::arg("reduce_op") = "sum", nb::arg("axes") = nb::none(),
      "Partial terms reduced by sum, avg, max, min or prod.");
  m.def("parse_placements", [](const std::string& t) { return parse_placements(t); });

  nb::class_<DistLayout>(
      m, "DistLayout", "A global shape laid out on a mesh: shape, layout, mesh (padding internal).")
      .def(
          "__init__",
          [](DistLayout* self, nb::handle shape, nb::handle spec, const Mesh& mesh) {
            new (self) DistLayout(to_dist_layout(spec, to_shape(shape, "shape"), mesh, "layout"));
          },
          nb::arg("shape"), nb::arg("layout"), nb::arg("mesh"))
      .def_prop_ro("shape", [](const DistLayout& d) { return d.shape(); })
      .def_prop_ro("padded_shape", [](const DistLayout& d) { return d.padded_shape(); })
      .def_prop_ro("layout", [](const DistLayout& d) { return d.layout(); })
      .def_prop_ro("mesh", [](const DistLayout& d) { return d.mesh(); })
      .def_prop_ro("local_elements", &DistLayout::local_elements)
      .def_prop_ro("placements",
                   [](const DistLayout& d) -> nb::object {
                     if (!d.sharding()) return nb::none();
                     return nb::cast(d.sharding()->per_axis);
                   })
      .def(
          "local_shard",
          [](const DistLayout& d, std::int64_t rank) {
            LocalShard s = local_shard(d, rank);
            nb::dict r;
            r["shape"] = s.shape;
            std::vector<std::string> regions;
            for (const auto& g : s.regions) regions.push_back(to_string(g));
            r["regions"] = regions;
            r["terms"] = s.terms;
            r["storage"] = s.storage;
            r["buffer_elements"] = s.buffer_elements;
            return r;
          },
          nb::arg("rank"),
          "What `rank` holds: shape, regions (text), terms, storage layout, buffer elements.")
      .def("__str__", [](const DistLayout& d) { return to_string(d); })
      .def("__repr__",
           [](const DistLayout& d) {
             return "axe.DistLayout(" + ints_text(d.shape()) + ", " +
                    py_repr_call("axe.Layout", to_string(d.layout())) + ", " +
                    py_repr_call("axe.Mesh", to_string(d.mesh())) + ")";
           })
      .def("__eq__",
           [](const DistLayout& a, nb::handle b) {
             return nb::isinstance<DistLayout>(b) && a == nb::cast<const DistLayout&>(b);
           })
      .def("__hash__", [](const DistLayout& d) { return std::hash<std::string>{}(to_string(d)); });
  m.def(
      "shard",
      [](nb::handle shape, const Mesh& mesh, nb::handle spec) {
        return to_dist_layout(spec, to_shape(shape, "shape"), mesh, "placements");
      },
      nb::arg("shape"), nb::arg("mesh"), nb::arg("placements"),
      "The DistLayout of placements (or a layout) on a mesh.");
}

void bind_plan(nb::module_& m) {
  nb::class_<Step>(m, "Step", "One step of one rank's plan.")
      .def_prop_ro("kind", [](const Step& s) { return std::string(to_string(s.kind)); })
      .def_prop_ro("axes", [](const Step& s) { return axes_out(s.axes); })
      .def_prop_ro("group", [](const Step& s) { return s.group; })
      .def_ro("input", &Step::in)
      .def_ro("output", &Step::out)
      .def_ro("reduce", &Step::reduce)
      .def_ro("terms", &Step::terms)
      .def_ro("equal_blocks", &Step::equal_blocks)
      .def_ro("staging_bytes", &Step::staging_bytes)
      .def_ro("chunk", &Step::chunk)
      .def_ro("chunks", &Step::chunks)
      .def_prop_ro(
          "sends",
          [](const Step& s) {
            std::vector<std::pair<std::int64_t, std::int64_t>> v;
            for (const auto& msg : s.sends) v.emplace_back(msg.peer, msg.elements());
            return v;
          },
          "(peer, elements) per message sent")
      .def_prop_ro(
          "recvs",
          [](const Step& s) {
            std::vector<std::pair<std::int64_t, std::int64_t>> v;
            for (const auto& msg : s.recvs) v.emplace_back(msg.peer, msg.elements());
            return v;
          },
          "(peer, elements) per message received")
      .def_prop_ro("copies",
                   [](const Step& s) {
                     std::vector<std::string> v;
                     for (const auto& t : s.copies) v.push_back(to_string(t));
                     return v;
                   })
      .def("elements_sent", &Step::elements_sent)
      .def("elements_received", &Step::elements_received)
      .def("__repr__", [](const Step& s) {
        std::string a;
        for (auto x : s.axes) a += std::string(a.empty() ? "" : ",") + std::string(x.name());
        return "<axe.Step " + std::string(to_string(s.kind)) +
               (a.empty() ? "" : " on {" + a + "}") + ">";
      });

  nb::class_<RankPlan>(
      m, "RankPlan",
      "One rank's part of a plan; str() prints every message and box (axe plan --rank).")
      .def_ro("rank", &RankPlan::rank)
      .def_prop_ro("dtype", [](const RankPlan& p) { return std::string(to_string(p.dtype)); })
      .def_prop_ro("buffers", [](const RankPlan& p) { return p.buffers; })
      .def_prop_ro("steps", [](const RankPlan& p) { return p.steps; })
      .def_prop_ro("stats", [](const RankPlan& p) { return stats_out(p.stats); })
      .def("__str__", [](const RankPlan& p) { return chomp(to_string(p)); })
      .def("__repr__", [](const RankPlan& p) {
        return "<axe.RankPlan rank " + std::to_string(p.rank) + ", " +
               std::to_string(p.steps.size()) + " steps>";
      });

  nb::class_<Planned>(m, "Plan", "A redistribution plan; str() is what `axe plan` prints.")
      .def("__str__", [](const Planned& p) { return chomp(to_string(p.plan)); })
      .def("__repr__",
           [](const Planned& p) {
             return "<axe.Plan " + std::to_string(p.plan.kinds.size()) + " steps, " +
                    std::to_string(p.plan.totals.bytes_received) + " bytes received>";
           })
      .def(
          "json", [](const Planned& p) { return to_json(p.plan); },
          "The plan as `axe plan --json` prints it.")
      .def_prop_ro("src", [](const Planned& p) { return p.request.from; })
      .def_prop_ro("dst", [](const Planned& p) { return p.request.to; })
      .def_prop_ro("dtype",
                   [](const Planned& p) { return std::string(to_string(p.request.dtype)); })
      .def_prop_ro(
          "steps",
          [](const Planned& p) {
            nb::list l;
            for (std::size_t i = 0; i < p.plan.kinds.size(); ++i) {
              nb::dict d;
              d["kind"] = std::string(to_string(p.plan.kinds[i]));
              d["axes"] = axes_out(p.plan.axes[i]);
              d["equal_blocks"] = bool(p.plan.equal_blocks[i]);
              l.append(d);
            }
            return l;
          },
          "The rank-independent outline: one {kind, axes, equal_blocks} per step.")
      .def_prop_ro("ranks",
                   [](const Planned& p) {
                     std::vector<std::int64_t> v;
                     for (const auto& r : p.plan.ranks) v.push_back(r.rank);
                     return v;
                   })
      .def("rank",
           [](const Planned& p, std::int64_t r) {
             const RankPlan* rp = p.plan.find(r);
             if (!rp) fail("Plan.rank(" + std::to_string(r) + "): not a rank of either mesh");
             return *rp;
           })
      .def_prop_ro("totals", [](const Planned& p) { return stats_out(p.plan.totals); })
      .def_prop_ro("bytes_sent", [](const Planned& p) { return p.plan.totals.bytes_sent; })
      .def_prop_ro("bytes_received", [](const Planned& p) { return p.plan.totals.bytes_received; })
      .def_prop_ro("lower_bound_bytes",
                   [](const Planned& p) { return p.plan.totals.lower_bound_bytes; })
      .def_prop_ro("staging_bytes", [](const Planned& p) { return p.plan.totals.staging_bytes; })
      .def_prop_ro("max_bytes_received", [](const Planned& p) { return p.plan.max_bytes_received; })
      .def_prop_ro("estimated_seconds", [](const Planned& p) { return p.plan.estimated_seconds; });

  m.def("plan", &make_plan, nb::arg("shape"), nb::arg("mesh"), nb::arg("src"), nb::arg("dst"),
        nb::arg("to_mesh") = nb::none(), nb::arg("dtype") = "f32", nb::arg("staging_limit") = 0,
        nb::arg("spread_min") = 0, nb::arg("passes") = nb::none(), nb::arg("chunks") = nb::none(),
        "Plan the redistribution of a `shape` tensor from `src` on `mesh` to `dst` (on `to_mesh`), "
        "as\n"
        "`axe plan` does: src/dst are placements ('S(0),R', [axe.Shard(0), ...]), an axe.Layout or "
        "layout text.");

  nb::class_<SimResult>(
      m, "Simulation",
      "A plan run on simulated ranks and checked; str() is what `axe simulate` prints.")
      .def_prop_ro("ok", [](const SimResult& s) { return s.error.empty(); })
      .def_ro("error", &SimResult::error)
      .def_prop_ro("plan", [](const SimResult& s) { return s.planned; })
      .def_prop_ro("steps", [](const SimResult& s) { return s.planned->plan.kinds.size(); })
      .def_prop_ro("ranks", [](const SimResult& s) { return s.planned->plan.ranks.size(); })
      .def_prop_ro("bytes_moved",
                   [](const SimResult& s) { return s.planned->plan.totals.bytes_received; })
      .def_prop_ro("lower_bound_bytes",
                   [](const SimResult& s) { return s.planned->plan.totals.lower_bound_bytes; })
      .def_prop_ro("transport_bytes", [](const SimResult& s) { return s.result.bytes_moved; })
      .def_prop_ro(
          "destination",
          [](const SimResult& s) {
            nb::dict d;
            for (const auto& [rank, buf] : s.result.destination) {
              auto* copy = new std::vector<double>(buf);
              nb::capsule owner(
                  copy, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
              std::size_t n = copy->size();
              d[nb::int_(rank)] =
                  nb::ndarray<nb::numpy, double, nb::ndim<1>>(copy->data(), {n}, owner);
            }
            return d;
          },
          "Each destination rank's buffer (float64, padding NaN), as `axe simulate --dump` writes "
          "it.")
      .def("__bool__", [](const SimResult& s) { return s.error.empty(); })
      .def("__str__", [](const SimResult& s) {
        const Plan& p = s.planned->plan;
        if (!s.error.empty()) return "MISMATCH: " + s.error;
        return "ok: " + std::to_string(p.ranks.size()) + " ranks, " +
               std::to_string(p.kinds.size()) + " steps, " +
               std::to_string(p.totals.bytes_received) + " bytes moved (lower bound " +
               std::to_string(p.totals.lower_bound_bytes) + ")";
      });
  m.def(
      "simulate",
      [](nb::handle shape, const Mesh& mesh, nb::handle src, nb::handle dst,
         std::optional<Mesh> to_mesh, const std::string& dtype, std::int64_t staging_limit,
         std::int64_t spread_min, std::optional<std::string> passes,
         std::optional<std::vector<std::int64_t>> chunks) {
        auto r = std::make_unique<SimResult>();
        r->planned = make_plan(shape, mesh, src, dst, to_mesh, dtype, staging_limit, spread_min,
                               passes, chunks);
        {
          nb::gil_scoped_release release;
          r->result = simulate(r->planned->plan);
          r->error = verify(r->planned->request, r->result);
        }
        return r.release();
      },
      nb::rv_policy::take_ownership, nb::arg("shape"), nb::arg("mesh"), nb::arg("src"),
      nb::arg("dst"), nb::arg("to_mesh") = nb::none(), nb::arg("dtype") = "f32",
      nb::arg("staging_limit") = 0, nb::arg("spread_min") = 0, nb::arg("passes") = nb::none(),
      nb::arg("chunks") = nb::none(),
      "Plan as axe.plan, run the plan on simulated ranks (threads) and check every destination "
      "element.");
}

}  // namespace axe::py
