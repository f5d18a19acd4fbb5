// Tunables (STYLE §10, NCCL's NCCL_PARAM): every AXE_* environment variable axe reads, declared
// once in one table (src/core/tunables.cpp) with its kind, default, range and one line of doc.
// Library code reads the environment only through this header; the README's table is
// `axe tunables --markdown`, and a test fails when the two differ.
//
// A value is the environment's when the variable is set and non-empty, else the default. Typed
// reads check the text and the range and throw axe::Error naming the variable, its text and what
// was expected: with AXE_TIMEOUT_S=abc, tunable_seconds("AXE_TIMEOUT_S") throws
//   AXE_TIMEOUT_S='abc' is not a number of seconds (expected > 0 and at most 1000000)
// and with AXE_COPY_ENGINE_MIN=-1, tunable_int("AXE_COPY_ENGINE_MIN") throws
//   AXE_COPY_ENGINE_MIN='-1' is not a byte count (...: a negative value).
// Example: unset AXE_PIPELINE_MIN_BYTES reads as 8388608; AXE_PIPELINE_MIN_BYTES=16M as 16777216.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace axe {

enum class TunableKind {
  Text,      // free text, checked where it is used (a backend name, a mesh)
  Path,      // a file path
  Integer,   // a decimal integer in [min, max]
  Bytes,     // a byte count (parse_bytes: 64K, 2M, ...) in [min, max]
  ByteList,  // comma-separated byte counts, each > 0 (parse_byte_list)
  Seconds,   // a finite number of seconds > 0 and at most max
};
std::string_view to_string(TunableKind k);  // "text", "path", "integer", "bytes", "byte list", "seconds"

struct Tunable {
  std::string_view name;
  TunableKind kind = TunableKind::Text;
  std::string_view default_value;  // text form; "" where unset means "not given"
  std::int64_t min = 0, max = 0;   // Integer, Bytes: inclusive range; Seconds: upper bound
  std::string_view scope;          // who reads it: "runtime", "cuda", "tests"
  std::string_view doc;            // one line
};

// Every declared tunable, in table order.
std::span<const Tunable> tunables();
// The declaration of `name`; throws axe::Error when `name` is not declared.
const Tunable& tunable_info(std::string_view name);

// The text in force: the environment's when set and non-empty, else the default.
std::string tunable(std::string_view name);
// Whether the environment sets `name` to a non-empty value.
bool tunable_set(std::string_view name);
// Integer and Bytes tunables, range-checked. Throws when the text is bad, out of range, or when
// neither the environment nor the default gives a value.
std::int64_t tunable_int(std::string_view name);
// Seconds tunables: a finite number > 0 and at most the declared maximum.
double tunable_seconds(std::string_view name);
// ByteList tunables: empty when neither the environment nor the default gives one.
std::vector<std::int64_t> tunable_byte_list(std::string_view name);

// Parses every declared tunable the environment sets; throws on the first bad one (the message
// as above). A launcher or a runtime calls this before anything that must run on all ranks.
void check_tunables();

// The README's table: a header and one row per tunable "| `NAME` | kind | default | doc |".
std::string tunables_markdown();

// Any environment variable, set and non-empty (the launcher's OMPI_COMM_WORLD_LOCAL_RANK,
// SLURM_LOCALID, ...): the one place besides the table where axe reads the environment.
std::optional<std::string> environment(std::string_view name);

}  // namespace axe
