// HTTP basic authentication for `vramdoc watch --serve --web-config` (basic_auth_users: bcrypt
// hashes), checked with the system's crypt_r (libxcrypt: $2a$, $2b$, $2y$). bcrypt is slow on
// purpose (~70-170 ms at cost 10) and runs on the server's one thread, so: a password once verified
// is remembered as a cheap salted SHA-512-crypt digest (never in clear), and bcrypt may take at
// most a quarter of the thread's time (beyond that: 429). Comparisons are constant-time; an
// unknown user costs the same bcrypt as a known one. Decisions: docs/security.md.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/watch/http_server.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

enum class AuthOutcome {
  Allowed,
  Denied,     // no, malformed or wrong credentials: 401
  Throttled,  // a new password to verify while bcrypt has used its share of time: 429
};

class BasicAuth {
 public:
  // Users and their bcrypt hashes. Fails when this system's crypt cannot check bcrypt.
  static Result<std::unique_ptr<BasicAuth>> create(std::map<std::string, std::string> users);

  // Checks an Authorization header value ("Basic base64(user:password)").
  AuthOutcome check(std::string_view authorization);

  // The 401 answer (with WWW-Authenticate) or the 429 answer (with Retry-After).
  static HttpResponse refusal(AuthOutcome outcome);

 private:
  BasicAuth(std::map<std::string, std::string> users, std::string cache_setting, std::string dummy_hash);
  bool bcrypt_matches(const std::string& password, const std::string& hash);

  std::map<std::string, std::string> users_;         // name -> bcrypt hash
  std::string cache_setting_;                        // $6$rounds=1000$<random salt>$
  std::string dummy_hash_;                           // bcrypt of a random password, for unknown users
  std::map<std::string, std::string> verified_;      // name -> digest of the password last verified
  std::chrono::steady_clock::time_point not_before_;  // no new bcrypt check before this
};

// `text` decoded from base64 (RFC 4648, padding required); empty on malformed input.
std::optional<std::string> decode_base64(std::string_view text);

// Equal contents, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// crypt_r(3) of `phrase` with `setting` (a hash or a salt setting); empty when crypt refuses.
std::string crypt_hash(const std::string& phrase, const std::string& setting);

}  // namespace vramdoc::backends
