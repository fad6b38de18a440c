#include "backends/watch/basic_auth.hpp"

#include <crypt.h>
#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/watch/web_config.hpp"

namespace vramdoc::backends {

namespace {

using Clock = std::chrono::steady_clock;

// OpenBSD's bcrypt test vector: crypt must reproduce it, or this system cannot check bcrypt.
constexpr const char* kProbePassword = "U*U";
constexpr const char* kProbeSetting = "$2b$05$CCCCCCCCCCCCCCCCCCCCC.";
constexpr const char* kProbeHash = "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
// bcrypt may use a quarter of the server thread: after a check of d, none for 3 d.
constexpr int kIdleFactor = 3;

// `n` random characters of crypt's salt alphabet.
Result<std::string> random_salt(std::size_t n) {
  static constexpr char kAlphabet[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string bytes(n, '\0');
  if (getrandom(bytes.data(), n, 0) != static_cast<ssize_t>(n)) return make_error("no random bytes from the kernel");
  for (char& c : bytes) c = kAlphabet[static_cast<unsigned char>(c) % 64];
  return bytes;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        v[k] = 0, ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = base64_value(c)) < 0) return std::nullopt;
    }
    const unsigned n = (static_cast<unsigned>(v[0]) << 18) | (static_cast<unsigned>(v[1]) << 12) |
                       (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

std::string crypt_hash(const std::string& phrase, const std::string& setting) {
  auto data = std::make_unique<crypt_data>();  // 32 KiB: not on the stack
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_r(phrase.c_str(), setting.c_str(), data.get());
  if (out == nullptr || out[0] == '*') return {};  // libxcrypt's failure tokens start with '*'
  return out;
}

Result<std::unique_ptr<BasicAuth>> BasicAuth::create(std::map<std::string, std::string> users) {
  if (crypt_hash(kProbePassword, kProbeSetting) != kProbeHash)
    return make_error("this system's crypt(3) cannot check bcrypt hashes (basic_auth_users needs libxcrypt, "
                      "as on Debian 11+ / Ubuntu 20.04+ / RHEL 8+)");
  auto salt = random_salt(16);
  auto password = random_salt(32);
  if (!salt || !password) return make_error(salt ? password.error() : salt.error());
  // One dummy hash per cost in use: an unknown user is checked against the highest, a user at a
  // lower cost is padded with checks against its own (verify()).
  std::map<int, std::string> dummies;
  for (const auto& [user, hash] : users) {
    if (!watch::is_bcrypt_hash(hash)) return make_error("the password of " + user + " is not a bcrypt hash");
    const int cost = watch::bcrypt_cost(hash);
    if (cost > watch::kMaxBcryptCost)
      return make_error("the bcrypt hash of " + user + " has cost " + std::to_string(cost) + ", above " +
                        std::to_string(watch::kMaxBcryptCost));
    if (dummies.count(cost)) continue;
    std::string dummy = crypt_hash(*password, hash);
    if (dummy.empty()) return make_error("crypt(3) refused the bcrypt hash of " + user);
    dummies[cost] = std::move(dummy);
  }
  return std::unique_ptr<BasicAuth>(new BasicAuth(std::move(users), "$6$rounds=1000$" + *salt + "$", std::move(dummies)));
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users, std::string cache_setting, std::map<int, std::string> dummies)
    : users_(std::move(users)), cache_setting_(std::move(cache_setting)), dummies_(std::move(dummies)),
      max_cost_(dummies_.empty() ? 0 : dummies_.rbegin()->first) {}

bool BasicAuth::verify(const Credentials& c) {
  const auto start = Clock::now();
  const auto known = users_.find(c.user);
  bool ok = false;
  std::uint64_t rounds = 0;
  if (known != users_.end()) {
    const int cost = watch::bcrypt_cost(known->second);
    const std::string computed = crypt_hash(c.password, known->second);
    ok = !computed.empty() && constant_time_equal(computed, known->second);
    // The rest of a check at the highest cost: 2^(max - cost) - 1 more at this one.
    const std::uint64_t checks = std::uint64_t{1} << (max_cost_ - cost);
    for (std::uint64_t i = 1; i < checks; ++i) (void)crypt_hash(c.password, dummies_.at(cost));
    rounds = checks << cost;
  } else if (!dummies_.empty()) {
    (void)crypt_hash(c.password, dummies_.rbegin()->second);  // an unknown user: as long as any
    rounds = std::uint64_t{1} << max_cost_;
  }
  const auto end = Clock::now();
  std::lock_guard lock(mutex_);
  not_before_ = end + kIdleFactor * (end - start);
  checking_ = false;
  last_rounds_ = rounds;
  if (ok && !c.digest.empty()) verified_[c.user] = c.digest;  // one entry per configured user at most
  return ok;
}

std::optional<AuthOutcome> BasicAuth::quick(std::string_view authorization, Credentials& credentials) {
  constexpr std::string_view kScheme = "Basic ";
  if (authorization.size() < kScheme.size() || authorization.size() > 4096) return AuthOutcome::Denied;
  for (std::size_t i = 0; i < kScheme.size(); ++i)  // the scheme is case-insensitive (RFC 7617)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != std::tolower(static_cast<unsigned char>(kScheme[i])))
      return AuthOutcome::Denied;
  authorization.remove_prefix(kScheme.size());
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  const auto decoded = decode_base64(authorization);
  if (!decoded) return AuthOutcome::Denied;
  const std::size_t colon = decoded->find(':');
  // crypt reads C strings: "pass\0anything" must not pass for "pass".
  if (colon == std::string::npos || decoded->find('\0') != std::string::npos) return AuthOutcome::Denied;
  credentials.user = decoded->substr(0, colon), credentials.password = decoded->substr(colon + 1);
  credentials.digest = crypt_hash(credentials.user + ":" + credentials.password, cache_setting_);
  std::lock_guard lock(mutex_);
  if (auto seen = verified_.find(credentials.user);
      seen != verified_.end() && !credentials.digest.empty() && constant_time_equal(seen->second, credentials.digest))
    return AuthOutcome::Allowed;
  if (checking_ || Clock::now() < not_before_) return AuthOutcome::Throttled;
  checking_ = true;  // this caller verifies next
  return std::nullopt;
}

GateDecision BasicAuth::screen(const HttpRequest& request) {
  Credentials credentials;
  if (auto outcome = quick(request.authorization, credentials)) {
    if (*outcome == AuthOutcome::Allowed) return {};
    return {GateDecision::Kind::Refuse, refusal(*outcome), nullptr};
  }
  return {GateDecision::Kind::Verify, {}, [this, credentials]() -> std::optional<HttpResponse> {
            if (verify(credentials)) return std::nullopt;
            return refusal(AuthOutcome::Denied);
          }};
}

AuthOutcome BasicAuth::check(std::string_view authorization) {
  Credentials credentials;
  if (auto outcome = quick(authorization, credentials)) return *outcome;
  return verify(credentials) ? AuthOutcome::Allowed : AuthOutcome::Denied;
}

std::uint64_t BasicAuth::last_check_rounds() const {
  std::lock_guard lock(mutex_);
  return last_rounds_;
}

HttpResponse BasicAuth::refusal(AuthOutcome outcome) {
  HttpResponse r;
  if (outcome == AuthOutcome::Throttled) {
    r.status = 429;
    r.body = "Too many new passwords to check: retry in a second\n";
    r.headers = {{"Retry-After", "1"}};
  } else {
    r.status = 401;
    r.body = "Unauthorized\n";
    r.headers = {{"WWW-Authenticate", "Basic realm=\"vramdoc\", charset=\"UTF-8\""}};
  }
  return r;
}

}  // namespace vramdoc::backends
