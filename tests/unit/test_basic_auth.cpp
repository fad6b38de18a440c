// Basic auth for the exporter: bcrypt through the system's crypt (OpenBSD's test vector), the
// remembered password that spares bcrypt, the share of time bcrypt may take, malformed headers.
#include <gtest/gtest.h>

#include <thread>

#include "backends/watch/basic_auth.hpp"

using namespace vramdoc;
using namespace vramdoc::backends;

namespace {

// OpenBSD's bcrypt test vector: the password "U*U" at cost 5.
const std::string kHash = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

std::string basic(const std::string& user_password) {
  static constexpr char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < user_password.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(user_password[i]) << 16;
    if (i + 1 < user_password.size()) n |= static_cast<unsigned char>(user_password[i + 1]) << 8;
    if (i + 2 < user_password.size()) n |= static_cast<unsigned char>(user_password[i + 2]);
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += i + 1 < user_password.size() ? kTable[(n >> 6) & 63] : '=';
    out += i + 2 < user_password.size() ? kTable[n & 63] : '=';
  }
  return "Basic " + out;
}

// Past the time bcrypt must rest after its last check (a multiple of the check's own time: under
// load a check at cost 7 took long enough that a fixed 100 ms was too short, and the next check
// came back Throttled).
void rest(const BasicAuth& a) { std::this_thread::sleep_until(a.idle_until() + std::chrono::milliseconds(1)); }

}  // namespace

TEST(BasicAuth, SystemCryptChecksBcrypt) {
  EXPECT_EQ(crypt_hash("U*U", kHash), kHash);
  EXPECT_EQ(crypt_hash("U*U", "$2y$05$CCCCCCCCCCCCCCCCCCCCC."), "$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW");
  EXPECT_EQ(crypt_hash("U*U", "$2y$05$"), "");  // crypt's failure token is not a hash
}

TEST(BasicAuth, RightPasswordOnceThenRememberedWrongOnesRefused) {
  auto auth = BasicAuth::create({{"prometheus", kHash}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  EXPECT_EQ(a.check(basic("prometheus:U*U")), AuthOutcome::Allowed);
  // At once again: remembered, no bcrypt, so not held back by bcrypt's share of time.
  EXPECT_EQ(a.check(basic("prometheus:U*U")), AuthOutcome::Allowed);
  EXPECT_EQ(a.check("bAsIc " + basic("prometheus:U*U").substr(6)), AuthOutcome::Allowed);  // the scheme's case
  // A new password right after a bcrypt check must wait its turn.
  rest(a);
  EXPECT_EQ(a.check(basic("prometheus:U*V")), AuthOutcome::Denied);
  EXPECT_EQ(a.check(basic("prometheus:U*W")), AuthOutcome::Throttled);
  rest(a);
  EXPECT_EQ(a.check(basic("nobody:U*U")), AuthOutcome::Denied);  // costs a bcrypt check too
  EXPECT_EQ(a.check(basic("prometheus:U*U")), AuthOutcome::Allowed);  // remembered, even now
}

TEST(BasicAuth, MalformedCredentialsAreDenied) {
  auto auth = BasicAuth::create({{"prometheus", kHash}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  for (const std::string& header : {std::string(), std::string("Bearer abc"), std::string("Basic"),
                                    std::string("Basic !!!!"), basic("no-colon"), basic(std::string("prometheus:U*U\0x", 16)),
                                    std::string("Basic ") + std::string(5000, 'A')}) {
    rest(a);
    EXPECT_EQ(a.check(header), AuthOutcome::Denied) << header;
  }
}

TEST(BasicAuth, RefusalsSayHowToAuthenticate) {
  const auto denied = BasicAuth::refusal(AuthOutcome::Denied);
  EXPECT_EQ(denied.status, 401);
  ASSERT_EQ(denied.headers.size(), 1U);
  EXPECT_EQ(denied.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(denied.headers[0].second, "Basic realm=\"vramdoc\", charset=\"UTF-8\"");
  const auto throttled = BasicAuth::refusal(AuthOutcome::Throttled);
  EXPECT_EQ(throttled.status, 429);
  EXPECT_EQ(throttled.headers[0].first, "Retry-After");
}

TEST(BasicAuth, Base64AndConstantTimeEqual) {
  EXPECT_EQ(decode_base64(""), "");
  EXPECT_EQ(decode_base64("YQ=="), "a");
  EXPECT_EQ(decode_base64("YWI="), "ab");
  EXPECT_EQ(decode_base64("YWJj"), "abc");
  for (const char* bad : {"YQ=", "Y===", "YQ==YWJj", "YW=j", "YWJ!", "=QQQ"}) EXPECT_FALSE(decode_base64(bad)) << bad;
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
}

// Regression (issue 25): an unknown user was checked against a dummy at the first user's cost,
// a known user at its own: with users of different costs, the time told them apart. Every new
// password now costs the work of one check at the file's highest cost.
TEST(BasicAuth, EveryNewPasswordCostsTheWorkOfTheHighestCost) {
  const std::string low = crypt_hash("low-secret", "$2b$04$abcdefghijklmnopqrstuu");
  const std::string high = crypt_hash("high-secret", "$2b$07$abcdefghijklmnopqrstuu");
  ASSERT_FALSE(low.empty());
  ASSERT_FALSE(high.empty());
  auto auth = BasicAuth::create({{"low", low}, {"high", high}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  const std::uint64_t rounds = 1U << 7;
  const std::pair<std::string, AuthOutcome> tries[] = {{"low:low-secret", AuthOutcome::Allowed},
                                                       {"high:wrong", AuthOutcome::Denied},
                                                       {"nobody:x", AuthOutcome::Denied},
                                                       {"low:wrong", AuthOutcome::Denied}};
  for (const auto& [credentials, outcome] : tries) {
    rest(a);
    EXPECT_EQ(a.check(basic(credentials)), outcome) << credentials;
    EXPECT_EQ(a.last_check_rounds(), rounds) << credentials;
  }
}

// Regression (issue 25): a hash of cost 31 made start-up hash a dummy at that cost (days).
TEST(BasicAuth, ACostAboveTheBoundIsRefused) {
  auto auth = BasicAuth::create({{"u", "$2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"}});
  ASSERT_FALSE(auth);
  EXPECT_NE(auth.error().find("cost 31"), std::string::npos) << auth.error();
}

// The server's gate: a remembered password passes at once, a new one is a Verify (the worker's
// job), a second new one while it runs is told to retry (429), malformed ones are refused.
TEST(BasicAuth, ScreenDefersBcryptToTheWorker) {
  auto auth = BasicAuth::create({{"prometheus", kHash}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  HttpRequest r;
  r.authorization = basic("prometheus:U*U");
  GateDecision first = a.screen(r);
  ASSERT_EQ(first.kind, GateDecision::Kind::Verify);
  HttpRequest other;
  other.authorization = basic("prometheus:other");
  EXPECT_EQ(a.screen(other).kind, GateDecision::Kind::Refuse);  // one bcrypt check at a time
  EXPECT_EQ(a.screen(other).refusal.status, 429);
  EXPECT_EQ(first.verify(), std::nullopt);  // the right password: allowed
  EXPECT_EQ(a.screen(r).kind, GateDecision::Kind::Allow);  // remembered now
  HttpRequest bad;
  bad.authorization = "Basic !!!";
  EXPECT_EQ(a.screen(bad).refusal.status, 401);
}
