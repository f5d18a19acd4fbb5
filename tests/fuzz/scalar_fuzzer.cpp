// libFuzzer target for the small value parsers of core/: byte counts (parse_bytes,
// parse_byte_list), dtype names (parse_dtype) and reduction names (parse_reduce_op), plus the
// element conversions behind dtypes (load_element / store_element, half and bfloat16).
//
// The whole input goes to every parser. The laws:
//   - each parser returns a value or throws axe::Error (nothing else escapes, nothing crashes);
//   - parse_bytes agrees with an independent oracle (digits, then "", k, kib, m, mib, g or gib in
//     any case; the value times 1024^k must fit in int64): it accepts exactly what the oracle
//     accepts, with the same value;
//   - parse_byte_list is parse_bytes on each comma-separated item, each > 0;
//   - parse_dtype / parse_reduce_op accept exactly the printed names and round-trip;
//   - the input's first 8 bytes, read as an element of each dtype, store back to the same bytes
//     (NaN payloads and int64 of magnitude >= 2^53 excepted: not every one is a double).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axe/core/bytes.hpp"
#include "axe/core/dtype.hpp"
#include "axe/core/error.hpp"
#include "axe/layout/layout.hpp"
#include "fuzz_util.hpp"

namespace {

using axe::fuzz::broken;

std::optional<std::int64_t> bytes_oracle(std::string_view t) {
  std::size_t n = 0;
  while (n < t.size() && t[n] >= '0' && t[n] <= '9') ++n;
  if (n == 0) return std::nullopt;
  std::string suffix;
  for (char c : t.substr(n)) suffix += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "k" || suffix == "kib") shift = 10;
  if (suffix == "m" || suffix == "mib") shift = 20;
  if (suffix == "g" || suffix == "gib") shift = 30;
  if (shift < 0) return std::nullopt;
  unsigned __int128 v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v = v * 10 + static_cast<unsigned>(t[i] - '0');
    if (v > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
  }
  v <<= shift;
  if (v > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<std::int64_t> try_bytes(std::string_view t) {
  try {
    return axe::parse_bytes(t, "fuzz");
  } catch (const axe::Error&) {
    return std::nullopt;
  }
}

void check_bytes(std::string_view input) {
  auto got = try_bytes(input);
  auto want = bytes_oracle(input);
  if (got != want)
    broken("parse_bytes agrees with the oracle", input,
           "parse_bytes " + (got ? std::to_string(*got) : std::string("threw")) + ", oracle " +
               (want ? std::to_string(*want) : std::string("rejects")));

  std::optional<std::vector<std::int64_t>> list;
  try {
    list = axe::parse_byte_list(input, "fuzz");
  } catch (const axe::Error&) {
  }
  std::vector<std::int64_t> items;
  bool ok = true;
  for (auto item : axe::fuzz::split(input, ',')) {
    auto v = bytes_oracle(item);
    if (!v || *v <= 0) {
      ok = false;
      break;
    }
    items.push_back(*v);
  }
  if (list.has_value() != ok || (ok && *list != items))
    broken("parse_byte_list is parse_bytes per item, each > 0", input,
           list ? "accepted" : "rejected");
}

void check_names(std::string_view input) {
  constexpr axe::DType kTypes[] = {axe::DType::F32, axe::DType::F16, axe::DType::BF16, axe::DType::F64,
                                   axe::DType::I32, axe::DType::I64, axe::DType::U8};
  std::optional<axe::DType> want;
  for (auto t : kTypes)
    if (axe::to_string(t) == input) want = t;
  std::optional<axe::DType> got;
  try {
    got = axe::parse_dtype(input);
  } catch (const axe::Error&) {
  }
  if (got != want) broken("parse_dtype accepts exactly the printed names", input, "");
  if (got) {
    const auto s = axe::size_of(*got);
    if (s != 1 && s != 2 && s != 4 && s != 8) broken("size_of(dtype) in {1,2,4,8}", input, "");
  }

  constexpr axe::ReduceOp kOps[] = {axe::ReduceOp::Sum, axe::ReduceOp::Avg, axe::ReduceOp::Max,
                                    axe::ReduceOp::Min, axe::ReduceOp::Prod};
  std::optional<axe::ReduceOp> want_op;
  for (auto op : kOps)
    if (axe::to_string(op) == input) want_op = op;
  std::optional<axe::ReduceOp> got_op;
  try {
    got_op = axe::parse_reduce_op(input);
  } catch (const axe::Error&) {
  }
  if (got_op != want_op) broken("parse_reduce_op accepts exactly the printed names", input, "");
}

void check_elements(std::string_view input) {
  std::byte raw[8] = {};
  std::memcpy(raw, input.data(), std::min<std::size_t>(input.size(), 8));
  constexpr axe::DType kTypes[] = {axe::DType::F32, axe::DType::F16, axe::DType::BF16, axe::DType::F64,
                                   axe::DType::I32, axe::DType::I64, axe::DType::U8};
  for (auto t : kTypes) {
    const double v = axe::load_element(t, raw);
    if (std::isnan(v)) continue;
    if (t == axe::DType::I64 && std::fabs(v) >= 9007199254740992.0) continue;
    std::byte back[8] = {};
    axe::store_element(t, back, v);
    const auto n = static_cast<std::size_t>(axe::size_of(t));
    if (std::memcmp(raw, back, n) != 0)
      broken("store_element(t, load_element(t, bytes)) == bytes", input,
             std::string(axe::to_string(t)) + " value " + std::to_string(v));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  check_bytes(input);
  check_names(input);
  check_elements(input);
  return 0;
}
