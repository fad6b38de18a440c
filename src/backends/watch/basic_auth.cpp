#include "backends/watch/basic_auth.hpp"

#include <crypt.h>
#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cstring>

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
  std::string dummy = users.empty() ? std::string() : crypt_hash(*password, users.begin()->second);
  if (!users.empty() && dummy.empty()) return make_error("crypt(3) refused the bcrypt hash of " + users.begin()->first);
  return std::unique_ptr<BasicAuth>(new BasicAuth(std::move(users), "$6$rounds=1000$" + *salt + "$", std::move(dummy)));
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users, std::string cache_setting, std::string dummy_hash)
    : users_(std::move(users)), cache_setting_(std::move(cache_setting)), dummy_hash_(std::move(dummy_hash)) {}

bool BasicAuth::bcrypt_matches(const std::string& password, const std::string& hash) {
  const auto start = Clock::now();
  const std::string computed = crypt_hash(password, hash);
  const auto end = Clock::now();
  not_before_ = end + kIdleFactor * (end - start);
  return !computed.empty() && constant_time_equal(computed, hash);
}

AuthOutcome BasicAuth::check(std::string_view authorization) {
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
  const std::string user = decoded->substr(0, colon), password = decoded->substr(colon + 1);
  const std::string digest = crypt_hash(user + ":" + password, cache_setting_);
  if (auto seen = verified_.find(user); seen != verified_.end() && !digest.empty() && constant_time_equal(seen->second, digest))
    return AuthOutcome::Allowed;
  if (Clock::now() < not_before_) return AuthOutcome::Throttled;
  const auto known = users_.find(user);
  const bool ok = bcrypt_matches(password, known != users_.end() ? known->second : dummy_hash_) && known != users_.end();
  if (!ok) return AuthOutcome::Denied;
  if (!digest.empty()) verified_[user] = digest;  // one entry per configured user at most
  return AuthOutcome::Allowed;
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
