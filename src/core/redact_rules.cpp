// Which names are secret and which words look like credentials (docs/security.md, "What is
// redacted"). The thresholds come from the statistics of random strings, not from examples.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/redact.hpp"
#include "core/redact_rules.hpp"

namespace vramdoc {

namespace {

using redact_detail::Span;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

template <std::size_t N>
bool one_of(std::string_view word, const std::array<std::string_view, N>& list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// "HF_TOKEN" -> {hf, token}; "apiKey" -> {api, key}; "--auth-token" -> {auth, token}.
std::vector<std::string> name_components(std::string_view name) {
  std::vector<std::string> parts;
  std::string part;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool camel_break = is_upper(c) && i > 0 && is_lower(name[i - 1]);
    if (!is_alnum(c) || camel_break) {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    }
    if (is_alnum(c)) part += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

// A last component that makes the name point at a secret, not hold one: --token-file, --auth-type.
constexpr std::array<std::string_view, 26> kReferenceLast = {
    "file", "files", "path", "paths", "dir", "directory", "filename", "stdin", "env", "url", "uri",
    "endpoint", "host", "port", "type", "kind", "method", "mode", "provider", "backend", "format",
    "length", "len", "size", "timeout", "name"};
// Words before "token" that make it a tokenizer's special token (--pad-token, --max-new-token).
constexpr std::array<std::string_view, 18> kTokenizerQualifiers = {
    "pad", "eos", "bos", "unk", "sep", "cls", "mask", "start", "end", "special", "image", "audio",
    "video", "vision", "max", "min", "num", "stop"};
// Words before "key" that make it a data field or a sort key, not a credential (--text-key).
constexpr std::array<std::string_view, 30> kDataKeyQualifiers = {
    "sort", "primary", "foreign", "group", "dict", "cache", "hash", "partition", "column", "metric",
    "monitor", "join", "lookup", "map", "index", "shard", "input", "output", "label", "image", "text",
    "prompt", "response", "chosen", "rejected", "caption", "target", "feature", "rng", "seed"};
// Components that hold a secret wherever they stand, also as the end of a longer word (PGPASSWORD).
constexpr std::array<std::string_view, 17> kSecretSuffixes = {
    "password", "passwd", "passphrase", "secret", "secrets", "pwd", "credential", "credentials",
    "cookie", "cookies", "apikey", "accesskey", "secretkey", "privatekey", "sessionid", "auth",
    "authorization"};

bool is_secret_component(const std::vector<std::string>& parts, std::size_t i) {
  const std::string& c = parts[i];
  const std::string_view before = i > 0 ? std::string_view(parts[i - 1]) : std::string_view();
  if (c == "token") return !one_of(before, kTokenizerQualifiers);
  if (c.size() > 5 && c.ends_with("token")) return true;  // hftoken, authtoken, accesstoken
  if (c == "key" || c == "keys") return i == 0 || !one_of(before, kDataKeyQualifiers);
  if (c == "session" || c == "bearer") return true;
  if (c == "pass") return i > 0 && i + 1 == parts.size();  // DB_PASS, smtp-pass; not --pass 3
  for (std::string_view suffix : kSecretSuffixes)
    if (c.ends_with(suffix)) return c != "author" && c != "cwd";
  return false;
}

// The longest run of letters and digits in `word`, '/' and '+' joined in (base64 keeps them).
std::string_view longest_run(std::string_view word, std::string& joined) {
  joined.clear();
  for (char c : word)
    if (c != '/' && c != '+' && c != '=') joined += c;
  std::string_view best, all(joined);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= all.size(); ++i) {
    if (i < all.size() && is_alnum(all[i])) continue;
    if (i - start > best.size()) best = all.substr(start, i - start);
    start = i + 1;
  }
  return best;
}

// A random string changes between upper case, lower case and digits at most characters (62 %
// of neighbours for base62, 40 % for base36); words and version numbers change once per word.
bool random_looking(std::string_view run) {
  if (run.size() < 20) return false;
  auto cls = [](char c) { return is_digit(c) ? 0 : is_upper(c) ? 1 : 2; };
  std::size_t digits = 0, changes = 0;
  for (std::size_t i = 0; i < run.size(); ++i) {
    digits += is_digit(run[i]);
    if (i > 0 && cls(run[i]) != cls(run[i - 1])) ++changes;
  }
  if (digits < 2 || digits == run.size()) return false;
  return static_cast<double>(changes) / static_cast<double>(run.size() - 1) >= 0.3;
}

struct Prefix {
  std::string_view text;
  std::size_t min_run;  // the token's longest letter-and-digit run after the prefix
};
constexpr std::array<Prefix, 20> kPrefixes = {{
    {"hf_", 20},   {"sk-", 16},    {"ghp_", 20},   {"gho_", 20},       {"ghu_", 20},
    {"ghs_", 20},  {"ghr_", 20},   {"github_pat_", 20}, {"glpat-", 16}, {"xoxb-", 8},
    {"xoxp-", 8},  {"xoxa-", 8},   {"xoxr-", 8},   {"xoxs-", 8},       {"xapp-", 8},
    {"AIza", 30},  {"dckr_pat_", 16}, {"npm_", 30}, {"pypi-", 30},     {"sk_live_", 16},
}};

bool is_token_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

// The end of a known-prefix token starting at `at`, or `at` when there is none.
std::size_t known_token_end(std::string_view text, std::size_t at) {
  const std::string_view rest = text.substr(at);
  if ((rest.starts_with("AKIA") || rest.starts_with("ASIA")) && rest.size() >= 20) {
    const bool body = std::all_of(rest.begin() + 4, rest.begin() + 20, [](char c) { return is_upper(c) || is_digit(c); });
    if (body && (rest.size() == 20 || !is_alnum(rest[20]))) return at + 20;
  }
  if (rest.starts_with("eyJ")) {  // a JWT: header.payload.signature, base64url
    std::size_t end = at, dots = 0;
    while (end < text.size() && (is_token_char(text[end]) || text[end] == '.')) dots += text[end++] == '.';
    if (dots == 2 && end - at >= 30) return end;
  }
  for (const auto& p : kPrefixes) {
    if (!rest.starts_with(p.text)) continue;
    std::size_t end = at + p.text.size();
    while (end < text.size() && is_token_char(text[end])) ++end;
    std::string joined;
    const auto run = longest_run(text.substr(at + p.text.size(), end - at - p.text.size()), joined);
    const bool has_digit = std::any_of(run.begin(), run.end(), is_digit);
    if (run.size() >= p.min_run && has_digit) return end;
  }
  return at;
}

}  // namespace

bool is_secret_name(std::string_view name) {
  if (name == "PWD" || name == "OLDPWD") return false;  // the shell's working directory
  const auto parts = name_components(name);
  if (parts.empty() || one_of(std::string_view(parts.back()), kReferenceLast)) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (is_secret_component(parts, i)) return true;
  return false;
}

bool looks_like_secret(std::string_view word) {
  while (!word.empty() && (word.front() == '"' || word.front() == '\'')) word.remove_prefix(1);
  while (!word.empty() && (word.back() == '"' || word.back() == '\'')) word.remove_suffix(1);
  if (!word.empty() && known_token_end(word, 0) == word.size()) return true;
  if (word.size() < 20 || word.front() == '/' || word.front() == '~' || word.starts_with("./") ||
      word.starts_with("../"))
    return false;  // short, or a file system path
  const bool token_chars = std::all_of(word.begin(), word.end(), [](char c) {
    return is_alnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.' || c == '~';
  });
  if (!token_chars) return false;
  if (std::all_of(word.begin(), word.end(), [](char c) { return is_hex(c) || c == '-'; })) return false;
  std::string joined;
  return random_looking(longest_run(word, joined));
}

std::string executable_name(std::string_view argv0) {
  argv0 = argv0.substr(0, argv0.find_first_of(" \t\n"));
  if (auto slash = argv0.rfind('/'); slash != std::string_view::npos && slash + 1 < argv0.size())
    argv0.remove_prefix(slash + 1);
  return redact_text(argv0);
}

namespace redact_detail {

void known_token_spans(std::string_view text, std::vector<Span>& out) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i > 0 && is_alnum(text[i - 1])) continue;
    const std::size_t end = known_token_end(text, i);
    if (end > i) {
      out.push_back({i, end});
      i = end - 1;
    }
  }
}

bool is_query_secret_name(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return is_secret_name(name) || lower == "sig" || lower == "signature" || lower == "code" ||
         lower.ends_with("-signature");
}

bool is_auth_scheme(std::string_view word) {
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "bearer" || lower == "basic" || lower == "token" || lower == "digest" || lower == "negotiate" ||
         lower == "apikey";
}

bool is_long_hex(std::string_view word) {
  return word.size() >= 32 && std::all_of(word.begin(), word.end(), is_hex);
}

bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }

}  // namespace redact_detail

}  // namespace vramdoc
