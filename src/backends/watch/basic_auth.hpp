// HTTP basic authentication for `vramdoc watch --serve --web-config` (basic_auth_users: bcrypt
// hashes), checked with the system's crypt_r (libxcrypt: $2a$, $2b$, $2y$). bcrypt is slow on
// purpose (~70-170 ms at cost 10), so it runs on the server's worker thread, never on the one
// that serves (a check stalled every other scrape); a password once verified is remembered as a
// cheap salted SHA-512-crypt digest (never in clear), checked on the serving thread; bcrypt checks
// come one at a time and take at most a quarter of the time (beyond that: 429). Every new
// password costs the work of one bcrypt at the file's highest cost, whoever the user (known,
// unknown, at a lower cost), so timing does not tell users apart. Comparisons are constant-time.
// Decisions: docs/security.md.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
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
  // Users and their bcrypt hashes (costs 4 to watch::kMaxBcryptCost). Fails when this system's
  // crypt cannot check bcrypt.
  static Result<std::unique_ptr<BasicAuth>> create(std::map<std::string, std::string> users);

  // The HTTP server's gate (thread-safe): a remembered password is allowed at once, malformed or
  // throttled credentials refused at once, a new password verified by a bcrypt check (GateDecision::Verify).
  GateDecision screen(const HttpRequest& request);
  // Checks an Authorization header value ("Basic base64(user:password)") at once, bcrypt included.
  AuthOutcome check(std::string_view authorization);
  // The bcrypt work the last check did, in rounds (2^cost per hash): the same for every user.
  std::uint64_t last_check_rounds() const;
  // Until when a new bcrypt check is refused (Throttled): the last one's time, times the idle factor.
  std::chrono::steady_clock::time_point idle_until() const { return not_before_; }

  // The 401 answer (with WWW-Authenticate) or the 429 answer (with Retry-After).
  static HttpResponse refusal(AuthOutcome outcome);

 private:
  struct Credentials {
    std::string user, password, digest;  // digest: the cheap one remembered once verified
  };
  BasicAuth(std::map<std::string, std::string> users, std::string cache_setting, std::map<int, std::string> dummies);
  // Malformed: Denied; remembered: Allowed; else the credentials to verify (nullopt outcome).
  std::optional<AuthOutcome> quick(std::string_view authorization, Credentials& credentials);
  // The bcrypt check, padded to the work of the highest cost; records a verified password.
  bool verify(const Credentials& credentials);

  const std::map<std::string, std::string> users_;   // name -> bcrypt hash
  const std::string cache_setting_;                  // $6$rounds=1000$<random salt>$
  const std::map<int, std::string> dummies_;         // cost -> bcrypt of a random password at it
  const int max_cost_;                               // the highest cost of the users' hashes
  mutable std::mutex mutex_;                         // guards what follows
  std::map<std::string, std::string> verified_;      // name -> digest of the password last verified
  std::chrono::steady_clock::time_point not_before_;  // no new bcrypt check before this
  bool checking_ = false;                            // a bcrypt check is under way
  std::uint64_t last_rounds_ = 0;
};

// `text` decoded from base64 (RFC 4648, padding required); empty on malformed input.
std::optional<std::string> decode_base64(std::string_view text);

// Equal contents, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// crypt_r(3) of `phrase` with `setting` (a hash or a salt setting); empty when crypt refuses.
std::string crypt_hash(const std::string& phrase, const std::string& setting);

}  // namespace vramdoc::backends
