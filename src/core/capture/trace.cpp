#include "core/capture/trace.hpp"

#include <charconv>
#include <unordered_map>

namespace vramdoc::capture {
namespace {

// Splits off the next space-separated field of `line`.
std::string_view field(std::string_view& line) {
  const auto start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) return line = {}, std::string_view{};
  line.remove_prefix(start);
  const auto end = line.find(' ');
  const std::string_view f = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return f;
}

bool number(std::string_view text, std::uint64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size();
}

struct Parser {
  Trace trace;
  std::unordered_map<std::string, std::uint32_t> interned;

  std::uint32_t intern(std::string_view s) {
    if (s.empty()) return 0;
    auto [it, added] = interned.try_emplace(std::string(s), static_cast<std::uint32_t>(trace.texts.size()));
    if (added) trace.texts.emplace_back(s);
    return it->second;
  }

  // `# ...`: phases, notes and the run's facts; other comments are ignored.
  void comment(std::string_view rest) {
    const std::string_view word = field(rest);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (word == "phase") {
      trace.phases.push_back({std::string(rest), trace.events.size()});
    } else if (word == "note") {
      Note n;
      n.kind = std::string(field(rest));
      std::string_view where = field(rest);
      if (where.ends_with(':')) where.remove_suffix(1);
      n.where = std::string(where);
      n.text = std::string(rest.substr(rest.find_first_not_of(' ') == std::string_view::npos ? rest.size() : rest.find_first_not_of(' ')));
      trace.notes.push_back(std::move(n));
    } else if (word == "error") {
      trace.error_where = std::string(field(rest));
      trace.error = std::string(rest.substr(std::min(rest.size(), rest.find_first_not_of(' '))));
    } else if (word == "end") {
      trace.end_reason = std::string(field(rest));
    } else if (word == "capture") {
      if (field(rest) == "torch") trace.torch_version = std::string(field(rest));
    } else if (word == "steps") {
      number(field(rest), trace.steps);
      if (field(rest) == "forwards") number(field(rest), trace.forwards);
    } else if (word == "empty_cache") {
      trace.events.push_back({Event::Kind::EmptyCache});
    }
  }

  bool line(std::string_view l) {
    if (l.empty()) return true;
    if (l.front() == '#') return comment(l.substr(1)), true;
    std::string_view rest = l.substr(1);
    std::uint64_t a = 0, b = 0, c = 0;
    switch (l.front()) {
      case 'a': {
        if (!number(field(rest), a) || !number(field(rest), b)) return false;
        const std::string_view s = field(rest);
        if (!s.empty() && !number(s, c)) return false;
        Event e{Event::Kind::Alloc};
        e.bytes = a, e.id = b, e.stream = static_cast<std::uint32_t>(c), e.text = intern(field(rest));
        trace.events.push_back(e);
        return true;
      }
      case 'f': {
        if (!number(field(rest), a)) return false;
        Event e{Event::Kind::Free};
        e.id = a;
        trace.events.push_back(e);
        return true;
      }
      case 'k': {
        const std::string_view op = field(rest);
        if (op.empty() || !number(field(rest), a) || !number(field(rest), b)) return false;
        Event e{Event::Kind::Kernel};
        e.text = intern(op), e.stream = static_cast<std::uint32_t>(a), e.thread = static_cast<std::uint32_t>(b);
        e.info = intern(field(rest));
        trace.events.push_back(e);
        return true;
      }
      case 'r': case 's': case 'S': case 'm': case 'M': case 'o':
        return true;  // a real run's trace: frees requested, segments (the replay makes its own)
      default:
        return false;
    }
  }
};

}  // namespace

Result<Trace> parse_trace(std::string_view text) {
  if (text.size() > kMaxTraceBytes) return make_error("the trace is larger than 4 GiB: not a capture's trace");
  Parser p;
  std::size_t number_of_line = 0;
  while (!text.empty()) {
    ++number_of_line;
    const auto end = text.find('\n');
    std::string_view l = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (!p.line(l))
      return make_error("line " + std::to_string(number_of_line) + " is not a capture trace line: '" +
                        std::string(l.substr(0, 80)) + "'");
  }
  return std::move(p.trace);
}

}  // namespace vramdoc::capture
