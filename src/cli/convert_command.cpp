// `axe convert`: CuTe <-> Axe layouts (include/axe/layout/convert.hpp), in either index order.
#include <ostream>
#include <string>

#include "axe/layout/layout.hpp"
#include "axe/layout/convert.hpp"
#include "axe/core/error.hpp"
#include "axe/cute/layout.hpp"
#include "cli/cli.hpp"
#include "cli/cli_util.hpp"

namespace axe::cli {
namespace {

// --- convert ------------------------------------------------------------------------------------

constexpr const char* kConvertUsage =
    "convert --from-cute CUTE_LAYOUT [--order coordinate|linear] [--axis NAME]\n"
    "  convert --to-cute AXE_LAYOUT [--order coordinate|linear | --shape S]";

IndexOrder parse_order(const Args& args) {
  if (!args.has("order")) return IndexOrder::Coordinate;
  const auto& o = args.get("order");
  if (o == "coordinate") return IndexOrder::Coordinate;
  if (o == "linear") return IndexOrder::Linear;
  fail("--order: expected 'coordinate' or 'linear', got '" + o + "'");
}

int run_convert(const Args& args, std::ostream& out) {
  if (!args.positional.empty())
    fail(std::string("unexpected argument '") + args.positional[0] + "'; usage: axe " +
         kConvertUsage);
  std::string result;
  if (args.has("from-cute") == args.has("to-cute")) {
    fail(std::string("give exactly one of --from-cute and --to-cute; usage: axe ") + kConvertUsage);
  }
  if (args.has("from-cute")) {
    args.allow_only({"from-cute", "order", "axis"});
    Axis axis = args.has("axis") ? Axis(args.get("axis")) : Axis::memory();
    result =
        to_string(from_cute(cute::parse_layout(args.get("from-cute")), parse_order(args), axis));
  } else {
    args.allow_only({"to-cute", "order", "shape"});
    AxeLayout l = parse_axe_layout(args.get("to-cute"));
    if (args.has("shape")) {
      if (args.has("order")) fail("--shape implies coordinate order; drop --order");
      auto shape = util::parse_shape(args.get("shape"), "--shape");
      result = cute::to_string(to_cute(l, shape));
    } else {
      result = cute::to_string(to_cute(l, parse_order(args)));
    }
  }
  if (args.json) {
    out << "{\"result\": " << json_string(result) << "}\n";
  } else {
    out << result << "\n";
  }
  return 0;
}

const bool registered = register_command({"convert", kConvertUsage, &run_convert});

}  // namespace
}  // namespace axe::cli
