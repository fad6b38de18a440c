// The web config reader: a line scanner for the YAML block-mapping subset (two levels, scalar
// values, plain or quoted), then the exporter-toolkit's meaning of each key. Hostile input gets
// an error naming the line; nothing here recurses, so no input can nest deeper than two levels.
#include "core/watch/web_config.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/input_file.hpp"

namespace vramdoc::watch {

namespace {

enum class ValueKind { Block, Scalar, Null, EmptyMap };

struct Entry {
  std::size_t line = 0;
  std::size_t indent = 0;
  std::string key;
  ValueKind kind = ValueKind::Block;
  std::string value;
};

Error at_line(std::size_t line, const std::string& what) {
  return make_error("web config line " + std::to_string(line) + ": " + what);
}

// The line without its comment: '#' at the start or after a space, outside quotes.
std::string_view strip_comment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '"' && c == '\\') ++i;
    else if (quote && c == quote) quote = 0;
    else if (!quote && (c == '"' || c == '\'') && (i == 0 || line[i - 1] == ' ' || line[i - 1] == ':')) quote = c;
    else if (!quote && c == '#' && (i == 0 || line[i - 1] == ' ')) return line.substr(0, i);
  }
  return line;
}

// A quoted scalar starting at text[0]; `used` gets the characters it took.
Result<std::string> quoted(std::string_view text, std::size_t line, std::size_t& used) {
  const char q = text[0];
  std::string out;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (q == '\'' && c == '\'') {
      if (i + 1 < text.size() && text[i + 1] == '\'') {
        out += '\'', ++i;
        continue;
      }
      used = i + 1;
      return out;
    }
    if (q == '"' && c == '"') {
      used = i + 1;
      return out;
    }
    if (q == '"' && c == '\\') {
      if (++i == text.size()) break;
      static constexpr std::string_view kFrom = "\"\\/nt", kTo = "\"\\/\n\t";
      const auto k = kFrom.find(text[i]);
      if (k == std::string_view::npos) return at_line(line, std::string("the escape \\") + text[i] + " is not supported");
      out += kTo[k];
      continue;
    }
    out += c;
  }
  return at_line(line, "a quoted value is not closed on its line (multi-line values are not supported)");
}

bool plain_start_ok(char c) { return std::string_view("-?:,[]{}#&*!|>%@`'\"").find(c) == std::string_view::npos; }

// One "key: value" line (comment removed, not blank).
Result<Entry> scan_entry(std::string_view text, std::size_t line) {
  Entry e;
  e.line = line;
  e.indent = text.find_first_not_of(' ');
  std::string_view rest = text.substr(e.indent);
  if (rest.starts_with("- ") || rest == "-") return at_line(line, "lists are not supported (cipher_suites and the like)");
  std::size_t used = 0;
  if (rest[0] == '"' || rest[0] == '\'') {
    auto key = quoted(rest, line, used);
    if (!key) return make_error(key.error());
    e.key = *key;
  } else {
    if (!plain_start_ok(rest[0])) return at_line(line, std::string("a key cannot start with '") + rest[0] + "'");
    used = rest.find(':');
    while (used != std::string_view::npos && used + 1 < rest.size() && rest[used + 1] != ' ') used = rest.find(':', used + 1);
    if (used == std::string_view::npos) return at_line(line, "expected \"key: value\"");
    e.key = std::string(rest.substr(0, used));
    while (!e.key.empty() && e.key.back() == ' ') e.key.pop_back();
  }
  rest.remove_prefix(used);
  if (rest.empty() || rest[0] != ':' || (rest.size() > 1 && rest[1] != ' '))
    return at_line(line, "expected \"key: value\" (a colon and a space after the key)");
  rest.remove_prefix(1);
  rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(' ')));
  if (rest.empty()) return e;  // a block follows
  if (rest[0] == '"' || rest[0] == '\'') {
    auto value = quoted(rest, line, used);
    if (!value) return make_error(value.error());
    if (rest.substr(used).find_first_not_of(' ') != std::string_view::npos)
      return at_line(line, "text after a quoted value");
    e.kind = ValueKind::Scalar, e.value = *value;
  } else if (rest == "{}") {
    e.kind = ValueKind::EmptyMap;
  } else if (rest == "~" || rest == "null") {
    e.kind = ValueKind::Null;
  } else if (!plain_start_ok(rest[0]) || rest.find(": ") != std::string_view::npos) {
    return at_line(line, "only plain or quoted one-line values are supported (no flow collections, anchors, "
                         "tags or block scalars)");
  } else {
    e.kind = ValueKind::Scalar, e.value = std::string(rest);
  }
  return e;
}

Result<std::vector<Entry>> scan(std::string_view text) {
  if (text.size() > kMaxWebConfigBytes) return make_error("the web config is larger than 64 KiB");
  std::vector<Entry> entries;
  std::size_t line = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.size(), text.find('\n', start));
    std::string_view raw = text.substr(start, end - start);
    start = end + 1, ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view content = strip_comment(raw);
    while (!content.empty() && content.back() == ' ') content.remove_suffix(1);
    if (content.empty()) continue;
    if (std::any_of(content.begin(), content.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      return at_line(line, "a tab or control character (indent with spaces)");
    if (content == "---" && entries.empty()) continue;
    if (content == "---" || content == "...") return at_line(line, "only one YAML document is supported");
    auto entry = scan_entry(content, line);
    if (!entry) return make_error(entry.error());
    entries.push_back(std::move(*entry));
  }
  return entries;
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + (base_dir.back() == '/' ? "" : "/") + path;
}

Result<ClientAuth> client_auth_of(const Entry& e) {
  static const std::array<std::pair<std::string_view, ClientAuth>, 6> kNames = {{
      {"NoClientCert", ClientAuth::NoClientCert},
      {"RequestClientCert", ClientAuth::RequestClientCert},
      {"RequireAnyClientCert", ClientAuth::RequireAnyClientCert},
      {"RequireClientCert", ClientAuth::RequireAnyClientCert},  // the toolkit's older name
      {"VerifyClientCertIfGiven", ClientAuth::VerifyClientCertIfGiven},
      {"RequireAndVerifyClientCert", ClientAuth::RequireAndVerifyClientCert},
  }};
  for (const auto& [name, value] : kNames)
    if (e.value == name) return value;
  return at_line(e.line, "client_auth_type '" + e.value + "' is not one of NoClientCert, RequestClientCert, "
                         "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert");
}

Result<TlsVersion> version_of(const Entry& e) {
  if (e.value == "TLS12") return TlsVersion::Tls12;
  if (e.value == "TLS13") return TlsVersion::Tls13;
  if (e.value == "TLS10" || e.value == "TLS11")
    return at_line(e.line, e.key + " " + e.value + " is refused: TLS 1.0 and 1.1 are obsolete (RFC 8996)");
  return at_line(e.line, e.key + " '" + e.value + "' is not TLS12 or TLS13");
}

// One key of tls_server_config.
std::optional<Error> tls_key(const Entry& e, TlsServerConfig& tls, const std::string& base_dir) {
  static constexpr std::array<std::string_view, 7> kUnsupported = {
      "cert", "key", "client_ca", "client_allowed_sans", "cipher_suites", "prefer_server_cipher_suites", "curve_preferences"};
  if (std::find(kUnsupported.begin(), kUnsupported.end(), e.key) != kUnsupported.end())
    return at_line(e.line, "tls_server_config." + e.key + " is not supported by vramdoc (it reads cert_file, "
                           "key_file, client_ca_file, client_auth_type, min_version, max_version)");
  if (e.kind == ValueKind::Block || e.kind == ValueKind::EmptyMap) return at_line(e.line, e.key + " must be one value");
  const std::string value = e.kind == ValueKind::Null ? "" : e.value;
  if (e.key == "cert_file") tls.cert_file = resolve(value, base_dir);
  else if (e.key == "key_file") tls.key_file = resolve(value, base_dir);
  else if (e.key == "client_ca_file") tls.client_ca_file = resolve(value, base_dir);
  else if (e.key == "client_auth_type" && !value.empty()) {
    auto auth = client_auth_of(e);
    if (!auth) return Error{auth.error()};
    tls.client_auth = *auth;
  } else if ((e.key == "min_version" || e.key == "max_version") && !value.empty()) {
    auto v = version_of(e);
    if (!v) return Error{v.error()};
    (e.key == "min_version" ? tls.min_version : tls.max_version) = *v;
  } else if (e.key != "client_auth_type" && e.key != "min_version" && e.key != "max_version") {
    return at_line(e.line, "unknown key tls_server_config." + e.key);
  }
  return std::nullopt;
}

// One user of basic_auth_users.
std::optional<Error> user_key(const Entry& e, WebConfig& config) {
  if (e.key.empty() || e.key.find(':') != std::string::npos || e.key.size() > 256)
    return at_line(e.line, "a user name must be 1 to 256 bytes without ':' (basic auth splits at the first ':')");
  if (e.kind != ValueKind::Scalar || !is_bcrypt_hash(e.value))
    return at_line(e.line, "the password of '" + e.key + "' must be a bcrypt hash ($2y$10$... from "
                           "`htpasswd -nBC 10 \"\" | tr -d ':\\n'`), never the password itself");
  if (const int cost = bcrypt_cost(e.value); cost > kMaxBcryptCost)
    return at_line(e.line, "the bcrypt hash of '" + e.key + "' has cost " + std::to_string(cost) + ": at most " +
                               std::to_string(kMaxBcryptCost) + " is accepted (each step doubles the time a new password "
                               "takes to check; make the hash again at cost 10-12: htpasswd -nBC 10 \"\")");
  if (config.users.size() >= 1000) return at_line(e.line, "more than 1000 users");
  config.users[e.key] = e.value;
  return std::nullopt;
}

std::optional<Error> check_tls(const TlsServerConfig& tls) {
  if (tls.cert_file.empty() || tls.key_file.empty())
    return make_error("web config: tls_server_config needs both cert_file and key_file");
  const bool verifies = tls.client_auth == ClientAuth::VerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (verifies && tls.client_ca_file.empty())
    return make_error("web config: client_auth_type VerifyClientCertIfGiven / RequireAndVerifyClientCert needs client_ca_file");
  if (tls.client_auth == ClientAuth::NoClientCert && !tls.client_ca_file.empty())  // as the toolkit refuses it
    return make_error("web config: client_ca_file is set without a client_auth_type "
                      "(RequireAndVerifyClientCert authenticates clients by their certificates)");
  if (tls.min_version == TlsVersion::Tls13 && tls.max_version == TlsVersion::Tls12)
    return make_error("web config: min_version is above max_version");
  return std::nullopt;
}

}  // namespace

bool is_bcrypt_hash(std::string_view hash) {
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') return false;
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
  });
}

Result<bool> check_web_config_files(const WebConfig& config) {
  if (!config.tls) return true;
  const std::pair<const char*, const std::string*> files[] = {
      {"cert_file", &config.tls->cert_file}, {"key_file", &config.tls->key_file}, {"client_ca_file", &config.tls->client_ca_file}};
  for (const auto& [key, path] : files) {
    if (path->empty()) continue;
    if (auto ok = check_input_file(*path, kMaxPemFileBytes); !ok)
      return make_error("web config: tls_server_config." + std::string(key) + ": " + ok.error());
  }
  return true;
}

int bcrypt_cost(std::string_view hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

Result<WebConfig> parse_web_config(std::string_view text, const std::string& base_dir) {
  // A byte-order mark (Windows editors write one) starts a YAML stream legally; unread, it made
  // the first key "unknown" with the difference invisible.
  if (text.starts_with("\xef\xbb\xbf")) text.remove_prefix(3);
  auto entries = scan(text);
  if (!entries) return make_error(entries.error());
  WebConfig config;
  TlsServerConfig tls;
  bool has_tls = false;
  std::string section;
  bool section_is_block = false;
  std::size_t child_indent = 0;
  std::vector<std::string> seen_top, seen_child;
  for (const Entry& e : *entries) {
    if (e.indent == 0) {
      if (std::find(seen_top.begin(), seen_top.end(), e.key) != seen_top.end()) return at_line(e.line, "duplicate key " + e.key);
      seen_top.push_back(e.key), seen_child.clear(), child_indent = 0;
      section = e.key, section_is_block = e.kind == ValueKind::Block;
      if (e.key == "http_server_config" || e.key == "rate_limit")
        return at_line(e.line, e.key + " is not supported by vramdoc (its server is HTTP/1.1 with fixed limits: docs/watch.md)");
      if (e.key != "tls_server_config" && e.key != "basic_auth_users") return at_line(e.line, "unknown key " + e.key);
      if (e.kind == ValueKind::Scalar) return at_line(e.line, e.key + " must be a block of keys");
      has_tls = has_tls || (e.key == "tls_server_config" && e.kind == ValueKind::Block);
      continue;
    }
    if (section.empty() || !section_is_block) return at_line(e.line, "indented key outside a section");
    if (child_indent == 0) child_indent = e.indent;
    if (e.indent != child_indent) return at_line(e.line, "inconsistent indentation (more than two levels are not used)");
    if (std::find(seen_child.begin(), seen_child.end(), e.key) != seen_child.end()) return at_line(e.line, "duplicate key " + e.key);
    seen_child.push_back(e.key);
    auto problem = section == "tls_server_config" ? tls_key(e, tls, base_dir) : user_key(e, config);
    if (problem) return *problem;
  }
  if (has_tls) {
    if (auto problem = check_tls(tls)) return *problem;
    config.tls = tls;
  }
  return config;
}

}  // namespace vramdoc::watch
