// Matching a line of a job's output against a pattern (run --step-regex, probe's step lines,
// the out-of-memory message parsers): RE2 (github.com/google/re2), whose time is linear in the
// line's length whatever the pattern, with bounded memory, and no recursion (std::regex recursed
// per character: a 50 KB line crashed vramdoc, '(a+)+$' hung it). The syntax is RE2's, close to
// Perl's and Python's without backreferences or lookaround; matching is case-sensitive unless the
// pattern says (?i) (docs/cli.md). Only the first kMaxMatchedLineBytes of a line are matched.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace vramdoc {

// A longer line is matched on its first 64 KiB (docs/run-analyze.md): the work per line is bounded.
inline constexpr std::size_t kMaxMatchedLineBytes = 64 * 1024;
// The memory RE2 may use for one compiled pattern and its matching automata.
inline constexpr std::size_t kMaxPatternMemoryBytes = 8 * 1024 * 1024;

class LineMatcher {
 public:
  // Compiles `pattern`. The error names `option` (e.g. "--step-regex"), the pattern and why:
  // a backreference or a lookaround is said to be unsupported, with what to write instead.
  static Result<LineMatcher> compile(std::string_view pattern, std::string_view option);
  // One of vramdoc's own patterns, known to compile.
  static LineMatcher fixed(std::string_view pattern);

  // True when the line (its first kMaxMatchedLineBytes) holds a match anywhere.
  bool search(std::string_view line) const;
  // The groups of the first match (element k is group k + 1; an unmatched group is empty),
  // as views into `line`; nullopt when the line holds no match.
  std::optional<std::vector<std::optional<std::string_view>>> groups(std::string_view line) const;

 private:
  struct Compiled;
  explicit LineMatcher(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

// Cuts a stream of output into lines ("\n" or "\r" ended, without it; empty lines skipped) as
// its bytes come. A line longer than kMaxMatchedLineBytes is given once, cut to that length,
// when that many bytes have come; the rest of it is skipped: memory and work stay bounded.
class LineSplitter {
 public:
  using OnLine = std::function<void(std::string_view line)>;
  // Feeds the next bytes; `on_line` gets every line they complete.
  void feed(std::string_view bytes, const OnLine& on_line);
  // The stream ended: its last line, when it had no end of line.
  void finish(const OnLine& on_line);

 private:
  std::string pending_;
  bool skipping_ = false;  // inside a line that was already given cut
};

}  // namespace vramdoc
