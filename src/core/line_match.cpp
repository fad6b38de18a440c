#include "core/line_match.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>

namespace vramdoc {

struct LineMatcher::Compiled {
  explicit Compiled(std::string_view pattern, const RE2::Options& options)
      : re(re2::StringPiece(pattern.data(), pattern.size()), options) {}
  RE2 re;
};

namespace {

RE2::Options options() {
  RE2::Options o;
  o.set_log_errors(false);  // core never prints: the error comes back in the Result
  o.set_max_mem(static_cast<int64_t>(kMaxPatternMemoryBytes));
  return o;
}

re2::StringPiece capped(std::string_view line) {
  return {line.data(), std::min(line.size(), kMaxMatchedLineBytes)};
}

// What RE2's refusal means for someone who wrote a Perl or Python pattern.
std::string explain(const RE2& re) {
  const std::string arg = re.error_arg();
  if (re.error_code() == RE2::ErrorBadEscape && arg.size() == 2 && arg[0] == '\\' && arg[1] >= '1' && arg[1] <= '9')
    return "backreferences (" + arg + ") are not supported: vramdoc matches job output in linear time (RE2 syntax, "
           "docs/cli.md); match the text itself instead";
  const auto starts = [&](std::string_view prefix) { return arg.rfind(prefix, 0) == 0; };
  if (starts("(?=") || starts("(?!") || starts("(?<=") || starts("(?<!"))
    return "lookaround (" + arg + "...) is not supported: vramdoc matches job output in linear time (RE2 syntax, "
           "docs/cli.md)";
  if (starts("(?<")) return "write a named group as (?P<name>...) (RE2 syntax, docs/cli.md)";
  if (re.error_code() == RE2::ErrorPatternTooLarge)
    return "the pattern is too large (its automaton needs more than 8 MiB): write a shorter one";
  return re.error();
}

}  // namespace

Result<LineMatcher> LineMatcher::compile(std::string_view pattern, std::string_view option) {
  auto compiled = std::make_shared<const Compiled>(pattern, options());
  if (!compiled->re.ok())
    return make_error(std::string(option) + " '" + std::string(pattern) + "' is not a valid regular expression: " +
                      explain(compiled->re));
  return LineMatcher(std::move(compiled));
}

LineMatcher LineMatcher::fixed(std::string_view pattern) {
  auto compiled = std::make_shared<const Compiled>(pattern, options());
  if (!compiled->re.ok()) std::abort();  // one of vramdoc's own patterns: a programming error
  return LineMatcher(std::move(compiled));
}

bool LineMatcher::search(std::string_view line) const { return RE2::PartialMatch(capped(line), compiled_->re); }

std::optional<std::vector<std::optional<std::string_view>>> LineMatcher::groups(std::string_view line) const {
  const RE2& re = compiled_->re;
  const int n = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> found(static_cast<std::size_t>(n) + 1);
  const re2::StringPiece text = capped(line);
  if (!re.Match(text, 0, text.size(), RE2::UNANCHORED, found.data(), n + 1)) return std::nullopt;
  std::vector<std::optional<std::string_view>> out;
  for (int k = 1; k <= n; ++k) {
    const auto& g = found[static_cast<std::size_t>(k)];
    if (g.data() == nullptr) out.emplace_back();
    else out.emplace_back(std::string_view(g.data(), g.size()));
  }
  return out;
}

void LineSplitter::feed(std::string_view bytes, const OnLine& on_line) {
  while (!bytes.empty()) {
    const std::size_t end = bytes.find_first_of("\n\r");
    const std::string_view piece = bytes.substr(0, end);
    if (!skipping_) {
      const std::size_t room = kMaxMatchedLineBytes - pending_.size();
      pending_.append(piece.substr(0, room));
      if (pending_.size() >= kMaxMatchedLineBytes) {  // a long line: given once, cut
        on_line(pending_);
        pending_.clear();
        skipping_ = true;
      }
    }
    if (end == std::string_view::npos) return;
    if (!pending_.empty()) on_line(pending_);
    pending_.clear();
    skipping_ = false;
    bytes.remove_prefix(end + 1);
  }
}

void LineSplitter::finish(const OnLine& on_line) {
  if (!pending_.empty() && !skipping_) on_line(pending_);
  pending_.clear();
  skipping_ = false;
}

}  // namespace vramdoc
