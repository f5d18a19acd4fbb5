// The tunables table (axe/core/tunables.hpp): typed reads, defaults, ranges, and errors that name
// the variable and its text.
#include "axe/core/tunables.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "axe/core/error.hpp"
#include "support/test_support.hpp"

namespace axe {
namespace {

using test::error_of;
using test::ScopedEnv;



TEST(Tunables, EveryNameIsDeclaredOnceWithADocAndAReadableDefault) {
  std::set<std::string> names;
  for (const auto& t : tunables()) {
    EXPECT_TRUE(names.insert(std::string(t.name)).second) << t.name << " declared twice";
    EXPECT_EQ(t.name.substr(0, 4), "AXE_") << t.name;
    EXPECT_FALSE(t.doc.empty()) << t.name;
    EXPECT_TRUE(t.scope == "runtime" || t.scope == "cuda" || t.scope == "tests") << t.name;
    // The default parses as the declared kind (unset the variable so the default is read).
    ScopedEnv clear(std::string(t.name).c_str(), nullptr);
    if (t.default_value.empty()) continue;
    switch (t.kind) {
      case TunableKind::Integer:
      case TunableKind::Bytes: EXPECT_NO_THROW(tunable_int(t.name)) << t.name; break;
      case TunableKind::Seconds: EXPECT_NO_THROW(tunable_seconds(t.name)) << t.name; break;
      case TunableKind::ByteList: EXPECT_NO_THROW(tunable_byte_list(t.name)) << t.name; break;
      default: break;
    }
  }
}

TEST(Tunables, DefaultsAndEnvironmentValues_HandDerived) {
  {
    ScopedEnv e("AXE_PIPELINE_MIN_BYTES", nullptr);
    EXPECT_EQ(tunable_int("AXE_PIPELINE_MIN_BYTES"), 8 * 1024 * 1024);
    EXPECT_FALSE(tunable_set("AXE_PIPELINE_MIN_BYTES"));
  }
  {
    ScopedEnv e("AXE_PIPELINE_MIN_BYTES", "16M");
    EXPECT_EQ(tunable_int("AXE_PIPELINE_MIN_BYTES"), 16 * 1024 * 1024);
    EXPECT_TRUE(tunable_set("AXE_PIPELINE_MIN_BYTES"));
  }
  {
    ScopedEnv e("AXE_PIPELINE_MIN_BYTES", "");  // empty means unset
    EXPECT_EQ(tunable_int("AXE_PIPELINE_MIN_BYTES"), 8 * 1024 * 1024);
  }
  {
    ScopedEnv e("AXE_TIMEOUT_S", "2.5");
    EXPECT_EQ(tunable_seconds("AXE_TIMEOUT_S"), 2.5);
  }
  {
    ScopedEnv e("AXE_TIMEOUT_S", nullptr);
    EXPECT_EQ(tunable_seconds("AXE_TIMEOUT_S"), 300.0);
  }
  {
    ScopedEnv e("AXE_CALIBRATE_SIZES", "64K,1M");
    EXPECT_EQ(tunable_byte_list("AXE_CALIBRATE_SIZES"), (std::vector<std::int64_t>{65536, 1048576}));
  }
  {
    ScopedEnv e("AXE_CALIBRATE_SIZES", nullptr);
    EXPECT_TRUE(tunable_byte_list("AXE_CALIBRATE_SIZES").empty());
  }
  {
    ScopedEnv e("AXE_COPY_ENGINE_UNIT", "17");
    EXPECT_EQ(tunable_int("AXE_COPY_ENGINE_UNIT"), 17);
  }
}

TEST(Tunables, BadValuesAreErrorsNamingTheVariableAndText) {
  struct Case {
    const char* name;
    const char* text;
    const char* expect;  // a part of the message
  };
  const Case cases[] = {
      {"AXE_TIMEOUT_S", "abc", "AXE_TIMEOUT_S='abc' is not a number of seconds"},
      {"AXE_TIMEOUT_S", "inf", "AXE_TIMEOUT_S='inf' is not a number of seconds"},
      {"AXE_TIMEOUT_S", "nan", "AXE_TIMEOUT_S='nan'"},
      {"AXE_TIMEOUT_S", "-1", "AXE_TIMEOUT_S='-1'"},
      {"AXE_TIMEOUT_S", "0", "expected > 0"},
      {"AXE_TIMEOUT_S", "1e7", "at most 1000000"},
      {"AXE_TIMEOUT_S", "5s", "AXE_TIMEOUT_S='5s'"},
      {"AXE_COPY_ENGINE_MIN", "-1", "AXE_COPY_ENGINE_MIN='-1' is not a byte count"},
      {"AXE_COPY_ENGINE_MIN", "2X", "AXE_COPY_ENGINE_MIN='2X'"},
      {"AXE_COPY_ENGINE_UNIT", "18", "AXE_COPY_ENGINE_UNIT='18' is not in range (expected in 1..17)"},
      {"AXE_COPY_ENGINE_UNIT", "0", "expected in 1..17"},
      {"AXE_COPY_ENGINE_UNIT", "8.5", "AXE_COPY_ENGINE_UNIT='8.5' is not an integer"},
      {"AXE_NCCL_BLOCKING", "2", "AXE_NCCL_BLOCKING='2' is not in range (expected in 0..1)"},
      {"AXE_NCCL_BLOCKING", "yes", "AXE_NCCL_BLOCKING='yes' is not an integer"},
      {"AXE_PIPELINE_CHUNKS", "99999999999999999999", "is not an integer"},
      {"AXE_PIPELINE_MIN_BYTES", "0", "expected at least 1"},
      {"AXE_CALIBRATE_SIZES", "64K,,1M", "AXE_CALIBRATE_SIZES='64K,,1M' is not a list of byte counts"},
      {"AXE_LOCAL_RANK", "-3", "AXE_LOCAL_RANK='-3'"},
  };
  for (const auto& c : cases) {
    ScopedEnv e(c.name, c.text);
    const std::string msg = error_of([&] { check_tunables(); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << "=" << c.text << ": '" << msg << "'";
  }
}

TEST(Tunables, UndeclaredOrMistypedReadsAreErrors) {
  EXPECT_NE(error_of([] { tunable("AXE_NO_SUCH_THING"); }).find("'AXE_NO_SUCH_THING' is not declared"),
            std::string::npos);
  EXPECT_NE(error_of([] { tunable_seconds("AXE_COPY_ENGINE_MIN"); }).find("is a bytes"), std::string::npos);
  ScopedEnv e("AXE_LOCAL_RANK", nullptr);
  EXPECT_NE(error_of([] { tunable_int("AXE_LOCAL_RANK"); }).find("no value and no default"), std::string::npos);
}

TEST(Tunables, MarkdownHasOneRowPerTunable) {
  const std::string md = tunables_markdown();
  std::size_t rows = 0;
  for (std::size_t at = md.find("\n| `"); at != std::string::npos; at = md.find("\n| `", at + 1)) ++rows;
  EXPECT_EQ(rows, tunables().size());
  EXPECT_NE(md.find("| `AXE_COPY_ENGINE_UNIT` | integer, in 1..17 | `8` | cuda: "), std::string::npos) << md;
}

}  // namespace
}  // namespace axe
