// The redactor: reads a command line as shell words (quotes and backslashes as sh reads them),
// finds the secret parts of each word by its content, and replaces those bytes in the original
// text, so that quoting and spacing survive. Rules per word: core/redact_rules.cpp.
#include "core/redact.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/redact_rules.hpp"

namespace vramdoc {

namespace {

using namespace redact_detail;

constexpr int kMaxDepth = 3;  // sh -c "bash -c '...'" : words inside words, a few levels deep

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A shell word: its content (quotes removed) and where each content byte sits in the text.
struct Word {
  std::string content;
  std::vector<std::size_t> at;
};

std::vector<Word> shell_words(std::string_view text) {
  std::vector<Word> words;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;
    Word w;
    auto take = [&](std::size_t k) { w.content += text[k], w.at.push_back(k); };
    while (i < n && !is_space(text[i])) {
      const char c = text[i];
      if (c == '\'') {
        for (++i; i < n && text[i] != '\''; ++i) take(i);
        i += i < n;
      } else if (c == '"') {
        for (++i; i < n && text[i] != '"'; ++i) {
          if (text[i] == '\\' && i + 1 < n && std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) ++i;
          take(i);
        }
        i += i < n;
      } else if (c == '\\' && i + 1 < n) {
        take(++i), ++i;
      } else {
        take(i++);
      }
    }
    if (!w.content.empty()) words.push_back(std::move(w));
  }
  return words;
}

// What the previous words said about the next one.
struct State {
  bool value_is_secret = false;  // after --token, -p (in a login), a bare aws_secret_access_key
  bool after_auth_header = false;  // after "Authorization:": a scheme, then the credential
  bool user_option = false;  // after -u / --user: user:password
  bool login = false;  // a login command: -p is a password, a long hex string a key
  bool value_in_braces = false;  // the secret value is a JSON-like "name": "value"
};

class Redactor {
 public:
  explicit Redactor(int depth) : depth_(depth) {}
  // The spans of `content` (one word, quotes removed) to replace.
  std::vector<Span> word(const std::string& content);

 private:
  void value(std::string_view v, std::size_t offset);
  bool item(std::string_view v, std::size_t offset, std::size_t value_end);
  void url(std::string_view v, std::size_t offset);
  bool option(const std::string& c);
  void add(std::size_t begin, std::size_t end) {
    if (end > begin) spans_.push_back({begin, end});
  }

  int depth_;
  State st_;
  std::vector<Span> spans_;
};

// `text` with each span replaced by ***; overlapping and touching spans become one.
std::string apply(std::string_view text, std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < spans.size();) {
    Span merged = spans[i];
    for (++i; i < spans.size() && spans[i].begin <= merged.end; ++i) merged.end = std::max(merged.end, spans[i].end);
    if (merged.begin < pos) merged.begin = pos;
    out.append(text.substr(pos, merged.begin - pos));
    out.append(kRedacted);
    pos = merged.end;
  }
  out.append(text.substr(std::min(pos, text.size())));
  return out;
}

// The spans of a shell command line, on the text's own bytes.
std::vector<Span> text_spans(std::string_view text, int depth) {
  Redactor r(depth);
  std::vector<Span> out;
  for (const Word& w : shell_words(text)) {
    for (const Span& s : r.word(w.content)) out.push_back({w.at[s.begin], w.at[s.end - 1] + 1});
  }
  known_token_spans(text, out);
  return out;
}

std::vector<Span> Redactor::word(const std::string& c) {
  spans_.clear();
  if (std::exchange(st_.after_auth_header, false)) {
    if (is_auth_scheme(c)) st_.value_is_secret = true;
    else add(0, c.size());
    return spans_;
  }
  const bool in_braces = std::exchange(st_.value_in_braces, false);
  if (std::exchange(st_.value_is_secret, false) && !c.starts_with("--")) {
    const std::size_t last = in_braces ? c.find_last_not_of("}]\"',") : c.size() - 1;
    add(0, last == std::string::npos ? c.size() : last + 1);
    return spans_;
  }
  if (std::exchange(st_.user_option, false) && !c.starts_with("-")) {
    if (auto colon = c.find(':'); colon != std::string::npos) add(colon + 1, c.size());
    return spans_;
  }
  if (std::any_of(c.begin(), c.end(), is_space)) {
    if (depth_ < kMaxDepth) spans_ = text_spans(c, depth_ + 1);
    return spans_;
  }
  const std::string base = c.substr(c.rfind('/') == std::string::npos ? 0 : c.rfind('/') + 1);
  if (base == "login" || base == "sshpass") st_.login = true;
  if (!option(c)) value(c, 0);
  return spans_;
}

// Words that name a secret: --name[=value], NAME=value, Name: / Name:value, a bare config key.
// True when the word was handled here.
bool Redactor::option(const std::string& c) {
  std::size_t start = c.find_first_not_of("-+");
  if (start == std::string::npos) return true;
  const bool dashed = c[0] == '-';
  const std::size_t eq = c.find('=', start), colon = c.find(':', start);
  const std::size_t split = std::min(eq, colon);
  const std::string name = c.substr(start, split == std::string::npos ? std::string::npos : split - start);
  if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) return false;
  const bool is_user = name == "u" || name == "user" || name == "proxy-user";
  if (split == std::string::npos) {
    if (!dashed) {  // a bare lower-case config key with parts: aws configure set aws_secret_access_key V
      bool lower = std::any_of(name.begin(), name.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; });
      bool parts = name.find_first_of("_.") != std::string::npos;
      if (lower && parts && is_secret_name(name)) st_.value_is_secret = true;
      return lower && parts && st_.value_is_secret;
    }
    if (st_.login && (name == "p" || name == "P")) st_.value_is_secret = true;
    else if (is_user) st_.user_option = true;
    else if ((c.starts_with("--") || name.size() >= 3) && is_secret_name(name)) st_.value_is_secret = true;
    return true;
  }
  if (split == colon && c.compare(colon, 3, "://") == 0) return false;  // a URL
  const std::size_t v = split + 1;
  if (split == colon && !dashed && v == c.size()) {  // "Authorization:" - a header name
    if (is_secret_name(name)) st_.after_auth_header = true;
    return true;
  }
  if (is_secret_name(name)) add(v, c.size());
  else if (is_user && eq == split && c.find(':', v) != std::string::npos) add(c.find(':', v) + 1, c.size());
  else if (c.back() == ':' && is_secret_name(c.substr(v, c.size() - v - 1))) st_.after_auth_header = true;
  else value(std::string_view(c).substr(v), v);
  return true;
}

// A value: a URL, or a list of items (a,b / k=v,k2=v2 / k=v;k2=v2 / k=v&k2=v2). After an item
// with a secret name the rest of the value goes too: the secret may itself hold a comma.
void Redactor::value(std::string_view v, std::size_t offset) {
  if (v.find("://") != std::string_view::npos) return url(v, offset);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] != ',' && v[i] != ';' && v[i] != '&') continue;
    if (item(v.substr(start, i - start), offset + start, offset + v.size())) return;
    start = i + 1;
  }
}

// One item: k=v or k:v with a secret name (its value to `value_end` is redacted: true), or a
// word that looks like a credential.
bool Redactor::item(std::string_view v, std::size_t offset, std::size_t value_end) {
  std::size_t first = v.find_first_not_of("{[\"' ");
  std::size_t last = v.find_last_not_of("}]\"' ");
  if (first == std::string_view::npos) return false;
  std::string_view core = v.substr(first, last - first + 1);
  offset += first;
  const std::size_t split = core.find_first_of("=:");
  if (split != std::string_view::npos && split > 0) {
    std::string_view name = core.substr(0, split);
    while (!name.empty() && (name.back() == '"' || name.back() == '\'')) name.remove_suffix(1);
    if (std::all_of(name.begin(), name.end(), is_name_char) && is_secret_name(name)) {
      std::size_t body = core.find_first_not_of("\"' ", split + 1);
      if (body == std::string_view::npos) {  // "api_key": "..." - the value is the next word
        st_.value_is_secret = st_.value_in_braces = true;
        return true;
      }
      const bool last_item = offset - first + v.size() == value_end;  // keep its closing quotes, braces
      add(offset + body, last_item ? offset + core.size() : value_end);
      return true;
    }
  }
  if (looks_like_secret(core) || (st_.login && is_long_hex(core))) add(offset, offset + core.size());
  return false;
}

// scheme://user:password@host/path?query#fragment: the password, random-looking path segments
// (webhook tokens), secret query and fragment parameters.
void Redactor::url(std::string_view v, std::size_t offset) {
  const std::size_t authority = v.find("://") + 3;
  const std::size_t path = std::min(v.size(), v.find_first_of("/?#", authority));
  const std::size_t at = v.substr(authority, path - authority).rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = v.substr(authority, at);
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) add(offset + authority + colon + 1, offset + authority + at);
    else if (looks_like_secret(userinfo)) add(offset + authority, offset + authority + at);
  }
  const std::size_t query = std::min(v.size(), v.find_first_of("?#", path));
  for (std::size_t s = path; s < query;) {
    const std::size_t e = std::min(query, v.find('/', s + 1));
    const std::string_view segment = v.substr(s + 1, e > s ? e - s - 1 : 0);
    if (looks_like_secret(segment)) add(offset + s + 1, offset + e);
    s = e;
  }
  for (std::size_t s = query; s < v.size();) {
    const std::size_t e = std::min(v.size(), v.find_first_of("&;#", s + 1));
    const std::string_view param = v.substr(s + 1, e - s - 1);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && is_query_secret_name(param.substr(0, eq))) add(offset + s + 2 + eq, offset + e);
    else if (eq != std::string_view::npos && looks_like_secret(param.substr(eq + 1))) add(offset + s + 2 + eq, offset + e);
    s = e;
  }
}

}  // namespace

std::vector<std::string> redact_argv(const std::vector<std::string>& argv) {
  Redactor r(0);
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& arg : argv) {
    std::vector<Span> spans = r.word(arg);
    known_token_spans(arg, spans);
    out.push_back(apply(arg, std::move(spans)));
  }
  return out;
}

std::string redact_text(std::string_view text) { return apply(text, text_spans(text, 0)); }

}  // namespace vramdoc
