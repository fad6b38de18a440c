// A pickle handler for the reader's tests: renders what it receives the way
// tests/data/pickle/make_corpus.py renders Python objects (memo references expanded), so the
// reader can be checked against Python's own unpickler.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/snapshot/pickle.hpp"

namespace vramdoc::test {

class DumpHandler : public snapshot::PickleHandler {
 public:
  bool begin(snapshot::PickleContainer kind) override {
    separate();
    const char open = kind == snapshot::PickleContainer::Dict ? '{' : kind == snapshot::PickleContainer::List ? '[' : '(';
    levels_.push_back(Level{std::string(1, open), kind, true});
    return true;
  }
  bool end(std::uint32_t& token) override {
    Level l = std::move(levels_.back());
    levels_.pop_back();
    l.text += l.kind == snapshot::PickleContainer::Dict ? '}' : l.kind == snapshot::PickleContainer::List ? ']' : ')';
    done_.push_back(l.text);
    token = static_cast<std::uint32_t>(done_.size());
    put(l.text);
    return true;
  }
  bool key(const snapshot::PickleScalar& k) override {
    separate();
    put(render(k) + ":");
    levels_.back().first = true;  // the value follows the colon directly
    return true;
  }
  bool scalar(const snapshot::PickleScalar& v) override {
    separate();
    put(render(v));
    return true;
  }
  bool ref(std::uint32_t token) override {
    if (token == 0 || token > done_.size()) {
      error = "bad token";
      return false;
    }
    separate();
    put(done_[token - 1]);
    return true;
  }
  const std::string& text() const { return out_; }

  static std::string render(const snapshot::PickleScalar& v) {
    using K = snapshot::PickleKind;
    switch (v.kind) {
      case K::None: return "N";
      case K::Bool: return v.integer ? "T" : "F";
      case K::Int: return std::to_string(v.integer);
      case K::BigInt: return "big";
      case K::Float:
        if (std::isnan(v.real)) return "fnan";
        if (std::isinf(v.real)) return v.real > 0 ? "finf" : "f-inf";
        return "f" + python_repr(v.real);
      case K::Str: return "s" + hex(v.text);
      case K::Bytes: return "b" + hex(v.text);
    }
    return "?";
  }

 private:
  struct Level {
    std::string text;
    snapshot::PickleContainer kind;
    bool first = true;
  };
  void separate() {
    if (levels_.empty()) return;
    if (!levels_.back().first) levels_.back().text += ',';
    levels_.back().first = false;
  }
  void put(const std::string& s) {
    if (levels_.empty()) out_ += s;
    else levels_.back().text += s;
  }
  static std::string hex(std::string_view s) {
    static const char* digits = "0123456789abcdef";
    std::string h;
    for (unsigned char c : s) h += {digits[c >> 4], digits[c & 15]};
    return h;
  }
  // Python's repr of a float: the shortest text that reads back to the same value.
  static std::string python_repr(double x) {
    char buf[64];
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, x);
      if (std::strtod(buf, nullptr) == x) break;
    }
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    // Python writes 1e+300 as 1e+300 and 0.5 as 0.5: %g agrees except for the exponent's zero padding.
    if (auto e = s.find("e+0"); e != std::string::npos) s.erase(e + 2, 1);
    if (auto e = s.find("e-0"); e != std::string::npos) s.erase(e + 2, 1);
    return s;
  }

  std::vector<Level> levels_;
  std::vector<std::string> done_;
  std::string out_;
};

}  // namespace vramdoc::test
