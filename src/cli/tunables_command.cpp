// `axe tunables`: the table of AXE_* environment variables (the README's), or with --json every
// declaration and the value this environment sets.
#include <ostream>

#include "axe/core/error.hpp"
#include "axe/core/tunables.hpp"
#include "cli/cli.hpp"

namespace axe::cli {

namespace {

constexpr const char* kUsage =
    "tunables [--json]                 the AXE_* environment variables: kind, default, meaning (markdown)";

int run_tunables(const Args& args, std::ostream& out) {
  args.allow_only({});
  if (!args.positional.empty()) throw Error("tunables takes no arguments (got '" + args.positional[0] + "')");
  if (!args.json) {
    out << tunables_markdown();
    return 0;
  }
  out << "[";
  bool first = true;
  for (const auto& t : tunables()) {
    out << (first ? "" : ", ") << "{\"name\": " << json_string(t.name) << ", \"kind\": " << json_string(to_string(t.kind))
        << ", \"default\": " << json_string(t.default_value);
    if (t.kind == TunableKind::Integer || t.kind == TunableKind::Bytes || t.kind == TunableKind::Seconds)
      out << ", \"min\": " << t.min << ", \"max\": " << t.max;
    const auto v = environment(t.name);
    out << ", \"scope\": " << json_string(t.scope) << ", \"doc\": " << json_string(t.doc)
        << ", \"value\": " << (v ? json_string(*v) : std::string("null")) << "}";
    first = false;
  }
  out << "]\n";
  return 0;
}

const bool registered = register_command({"tunables", kUsage, &run_tunables});

}  // namespace

}  // namespace axe::cli
