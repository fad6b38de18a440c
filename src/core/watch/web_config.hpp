// `vramdoc watch --serve --web-config FILE`: the Prometheus exporter-toolkit's web configuration
// (TLS and basic auth), the subset vramdoc serves. The file is YAML; this reads the block-mapping
// subset the format needs and refuses the rest (flow collections, anchors, tags, multi-line
// scalars) and any setting it does not implement, so that no security setting is silently
// ignored. Format and decisions: docs/security.md.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc::watch {

// The exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType).
enum class ClientAuth {
  NoClientCert,
  RequestClientCert,           // asked for, not required, not verified
  RequireAnyClientCert,        // required, not verified
  VerifyClientCertIfGiven,     // verified against client_ca_file when sent
  RequireAndVerifyClientCert,  // required and verified: the one that authenticates clients
};

enum class TlsVersion { Tls12, Tls13 };

struct TlsServerConfig {
  std::string cert_file;       // PEM: the server's certificate (chain)
  std::string key_file;        // PEM: its private key
  std::string client_ca_file;  // PEM: CAs client certificates are verified against; may be empty
  ClientAuth client_auth = ClientAuth::NoClientCert;
  TlsVersion min_version = TlsVersion::Tls12;
  TlsVersion max_version = TlsVersion::Tls13;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;           // absent: plain HTTP
  std::map<std::string, std::string> users;     // basic_auth_users: name -> bcrypt hash; empty: no auth
};

// The largest web config file accepted.
inline constexpr std::size_t kMaxWebConfigBytes = 64 * 1024;

// The largest certificate, key or CA file accepted (PEM).
inline constexpr std::size_t kMaxPemFileBytes = 1024 * 1024;

// Checks that the files the config names (cert_file, key_file, client_ca_file) are regular files
// of at most kMaxPemFileBytes, before OpenSSL opens them: a FIFO or /dev/zero there hung start-up.
// The error names the setting and the file.
Result<bool> check_web_config_files(const WebConfig& config);

// Parses a web config. Relative file names are taken relative to `base_dir` (the folder of the
// config file, as the exporter-toolkit does). Errors name the line and what to change.
Result<WebConfig> parse_web_config(std::string_view text, const std::string& base_dir);

// True for a bcrypt hash as crypt(3) and htpasswd -B write it: $2a$, $2b$ or $2y$, a cost of
// 04 to 31, then 53 characters of bcrypt's base64 (22 of salt, 31 of hash).
bool is_bcrypt_hash(std::string_view hash);

// The highest bcrypt cost accepted: each step doubles the work of checking a new password (cost
// 10: ~0.1-0.2 s, 14: ~1.5-3 s on one core; 31 would take days, and start-up hashes one at the
// highest cost of the file). docs/security.md.
inline constexpr int kMaxBcryptCost = 14;

// The cost of a bcrypt hash (is_bcrypt_hash must hold).
int bcrypt_cost(std::string_view hash);

}  // namespace vramdoc::watch
