// A small JSON reader for the reference vectors (no dependencies). Numbers must be integers that
// fit in int64 (all the vectors hold); anything else is a parse error.
#pragma once

#include <cctype>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace axe::test::json {

class Value {
 public:
  enum class Type { kNull, kBool, kInt, kString, kArray, kObject };

  Value() = default;
  static Value of_bool(bool b) {
    Value v;
    v.type_ = Type::kBool;
    v.int_ = b;
    return v;
  }
  static Value of_int(std::int64_t i) {
    Value v;
    v.type_ = Type::kInt;
    v.int_ = i;
    return v;
  }
  static Value of_string(std::string s) {
    Value v;
    v.type_ = Type::kString;
    v.str_ = std::move(s);
    return v;
  }
  static Value array() {
    Value v;
    v.type_ = Type::kArray;
    return v;
  }
  static Value object() {
    Value v;
    v.type_ = Type::kObject;
    return v;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool as_bool() const {
    need(Type::kBool, "bool");
    return int_ != 0;
  }
  std::int64_t as_int() const {
    need(Type::kInt, "integer");
    return int_;
  }
  const std::string& as_string() const {
    need(Type::kString, "string");
    return str_;
  }
  const std::vector<Value>& items() const {
    need(Type::kArray, "array");
    return items_;
  }
  std::vector<Value>& items() {
    need(Type::kArray, "array");
    return items_;
  }
  std::size_t size() const { return is_array() ? items_.size() : members_.size(); }
  const Value& operator[](std::size_t i) const { return items().at(i); }

  // Object access; `find` returns nullptr when the key is absent.
  const Value* find(std::string_view key) const {
    need(Type::kObject, "object");
    for (const auto& [k, v] : members_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const Value& at(std::string_view key) const {
    const Value* v = find(key);
    if (!v) throw std::runtime_error("json: missing key '" + std::string(key) + "'");
    return *v;
  }
  void add_member(std::string key, Value v) { members_.emplace_back(std::move(key), std::move(v)); }
  void add_item(Value v) { items_.push_back(std::move(v)); }

 private:
  void need(Type t, const char* what) const {
    if (type_ != t) throw std::runtime_error(std::string("json: value is not a ") + what);
  }

  Type type_ = Type::kNull;
  std::int64_t int_ = 0;
  std::string str_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  Value parse() {
    Value v = value(0);
    ws();
    if (p_ != s_.size()) error("end of input");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& expected) const {
    throw std::runtime_error("json: expected " + expected + " at offset " + std::to_string(p_));
  }
  void ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  bool lit(std::string_view w) {
    if (s_.substr(p_, w.size()) == w) {
      p_ += w.size();
      return true;
    }
    return false;
  }

  Value value(int level) {
    if (level > 512) error("less nesting");
    ws();
    if (p_ >= s_.size()) error("a value");
    char c = s_[p_];
    if (c == '{') return object(level);
    if (c == '[') return array(level);
    if (c == '"') return Value::of_string(string());
    if (lit("null")) return Value();
    if (lit("true")) return Value::of_bool(true);
    if (lit("false")) return Value::of_bool(false);
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    error("a value");
  }

  Value number() {
    bool neg = false;
    if (s_[p_] == '-') {
      neg = true;
      ++p_;
    }
    if (p_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[p_]))) error("a digit");
    std::int64_t v = 0;
    while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, s_[p_] - '0', &v)) {
        error("an integer that fits in int64");
      }
      ++p_;
    }
    if (p_ < s_.size() && (s_[p_] == '.' || s_[p_] == 'e' || s_[p_] == 'E')) {
      error("an integer (no fractions or exponents)");
    }
    if (!neg) {
      if (v == INT64_MIN) error("an integer that fits in int64");
      v = -v;
    }
    return Value::of_int(v);
  }

  std::string string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ >= s_.size()) error("closing '\"'");
      char c = s_[p_++];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= s_.size()) error("an escape");
      char e = s_[p_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          if (p_ + 4 > s_.size()) error("4 hex digits");
          unsigned code = std::stoul(std::string(s_.substr(p_, 4)), nullptr, 16);
          p_ += 4;
          // The vectors are ASCII; encode the BMP code point as UTF-8 for completeness.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          error("a valid escape");
      }
    }
    return out;
  }

  Value array(int level) {
    ++p_;
    Value v = Value::array();
    ws();
    if (p_ < s_.size() && s_[p_] == ']') {
      ++p_;
      return v;
    }
    while (true) {
      v.add_item(value(level + 1));
      ws();
      if (p_ < s_.size() && s_[p_] == ']') {
        ++p_;
        return v;
      }
      if (p_ >= s_.size() || s_[p_] != ',') error("',' or ']'");
      ++p_;
    }
  }

  Value object(int level) {
    ++p_;
    Value v = Value::object();
    ws();
    if (p_ < s_.size() && s_[p_] == '}') {
      ++p_;
      return v;
    }
    while (true) {
      ws();
      if (p_ >= s_.size() || s_[p_] != '"') error("a key");
      std::string key = string();
      ws();
      if (p_ >= s_.size() || s_[p_] != ':') error("':'");
      ++p_;
      v.add_member(std::move(key), value(level + 1));
      ws();
      if (p_ < s_.size() && s_[p_] == '}') {
        ++p_;
        return v;
      }
      if (p_ >= s_.size() || s_[p_] != ',') error("',' or '}'");
      ++p_;
    }
  }

  std::string_view s_;
  std::size_t p_ = 0;
};

inline Value parse(std::string_view text) {
  return Reader(text).parse();
}

inline Value parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("json: cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

}  // namespace axe::test::json
