// Helpers for the CLI tests: run `axe` with shell-quoted arguments, and a strict JSON reader so
// every --json output is checked to be valid JSON (RFC 8259) and its fields can be asserted.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/test_support.hpp"

namespace axe::test::cli {

inline std::string shell_quote(std::string_view s) {
  std::string r = "'";
  for (char c : s) {
    if (c == '\'') {
      r += "'\\''";
    } else {
      r += c;
    }
  }
  return r + "'";
}

// Runs `axe ARGS...`; each argument is passed verbatim (shell-quoted).
inline CommandResult axe(std::initializer_list<std::string_view> args) {
  std::string cmd = shell_quote(cli_binary());
  for (auto a : args) cmd += " " + shell_quote(a);
  return run_command(cmd);
}

// ---- a small strict JSON reader
// ------------------------------------------------------------------

struct Json;
using JsonArray = std::vector<Json>;
using JsonObject = std::map<std::string, Json, std::less<>>;

struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<JsonArray>,
               std::shared_ptr<JsonObject>>
      v;
  bool is_null() const { return v.index() == 0; }
  bool is_bool() const { return v.index() == 1; }
  bool is_number() const { return v.index() == 2; }
  bool is_string() const { return v.index() == 3; }
  bool is_array() const { return v.index() == 4; }
  bool is_object() const { return v.index() == 5; }
  bool boolean() const { return std::get<bool>(v); }
  std::int64_t integer() const { return static_cast<std::int64_t>(std::get<double>(v)); }
  const std::string& str() const { return std::get<std::string>(v); }
  const JsonArray& array() const { return *std::get<std::shared_ptr<JsonArray>>(v); }
  const JsonObject& object() const { return *std::get<std::shared_ptr<JsonObject>>(v); }
  bool has(std::string_view key) const { return is_object() && object().count(key) > 0; }
  // Object member; throws std::out_of_range when absent (the test then fails with a message).
  const Json& operator[](std::string_view key) const {
    auto it = object().find(key);
    if (it == object().end()) throw std::out_of_range("no key '" + std::string(key) + "'");
    return it->second;
  }
  const Json& operator[](std::size_t i) const { return array().at(i); }
  std::vector<std::int64_t> ints() const {
    std::vector<std::int64_t> r;
    for (const auto& e : array()) r.push_back(e.integer());
    return r;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  // The whole text must be one value (surrounding whitespace allowed); throws on anything else.
  Json document() {
    Json j = value();
    ws();
    if (i_ != s_.size()) error("trailing characters");
    return j;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    throw std::runtime_error("invalid JSON at " + std::to_string(i_) + ": " + what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }
  bool literal(std::string_view w) {
    if (s_.substr(i_, w.size()) == w) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  Json value() {
    ws();
    if (i_ >= s_.size()) error("unexpected end");
    char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Json{string()};
    if (literal("true")) return Json{true};
    if (literal("false")) return Json{false};
    if (literal("null")) return Json{nullptr};
    return number();
  }
  Json object() {
    expect('{');
    auto obj = std::make_shared<JsonObject>();
    if (!eat('}')) {
      do {
        ws();
        if (i_ >= s_.size() || s_[i_] != '"') error("expected a key");
        std::string key = string();
        if (obj->count(key)) error("duplicate key '" + key + "'");
        expect(':');
        obj->emplace(key, value());
      } while (eat(','));
      expect('}');
    }
    return Json{obj};
  }
  Json array() {
    expect('[');
    auto arr = std::make_shared<JsonArray>();
    if (!eat(']')) {
      do arr->push_back(value());
      while (eat(','));
      expect(']');
    }
    return Json{arr};
  }
  std::string string() {
    ++i_;  // opening quote
    std::string r;
    while (true) {
      if (i_ >= s_.size()) error("unterminated string");
      char c = s_[i_++];
      if (c == '"') return r;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in string");
      if (c != '\\') {
        r += c;
        continue;
      }
      if (i_ >= s_.size()) error("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"':
          r += '"';
          break;
        case '\\':
          r += '\\';
          break;
        case '/':
          r += '/';
          break;
        case 'b':
          r += '\b';
          break;
        case 'f':
          r += '\f';
          break;
        case 'n':
          r += '\n';
          break;
        case 'r':
          r += '\r';
          break;
        case 't':
          r += '\t';
          break;
        case 'u': {
          if (i_ + 4 > s_.size()) error("short \\u escape");
          for (int k = 0; k < 4; ++k) {
            if (!std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) error("bad \\u escape");
          }
          r += static_cast<char>(std::stoi(std::string(s_.substr(i_, 4)), nullptr, 16) & 0x7f);
          i_ += 4;
          break;
        }
        default:
          error("bad escape");
      }
    }
  }
  Json number() {
    std::size_t start = i_;
    auto digits = [&] {
      std::size_t d = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      return i_ - d;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      error("expected a value");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) error("expected digits after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) error("expected an exponent");
    }
    return Json{std::stod(std::string(s_.substr(start, i_ - start)))};
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// Parses `text` as one JSON document; a gtest failure (with the text) if it is not valid JSON.
inline Json parse_json(const std::string& text) {
  try {
    return JsonReader(text).document();
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n--- output ---\n" << text;
    return Json{nullptr};
  }
}

// Asserts the error convention: exit status 2, a message on stderr containing `needle`; and the
// same with --json gives {"error": MESSAGE} (containing `needle`) on stdout, still exit status 2.
inline void expect_error(std::initializer_list<std::string_view> args, std::string_view needle) {
  auto r = axe(args);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr lacks '" << needle << "':\n" << r.err;
  EXPECT_EQ(r.out, "") << "plain errors print nothing on stdout";

  std::vector<std::string_view> with_json(args);
  with_json.push_back("--json");
  std::string cmd = shell_quote(cli_binary());
  for (auto a : with_json) cmd += " " + shell_quote(a);
  auto j = run_command(cmd);
  EXPECT_EQ(j.status, 2) << j.out << j.err;
  Json doc = parse_json(j.out);
  ASSERT_TRUE(doc.is_object()) << j.out;
  ASSERT_TRUE(doc.has("error")) << j.out;
  ASSERT_TRUE(doc["error"].is_string());
  EXPECT_NE(doc["error"].str().find(needle), std::string::npos) << doc["error"].str();
  EXPECT_EQ(doc.object().size(), 1u) << j.out;
}

}  // namespace axe::test::cli
