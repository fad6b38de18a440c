// The --web-config reader (exporter-toolkit format, YAML subset): what it accepts, what it refuses
// with a line number, and hostile input (mutations of valid files) that must never crash it or
// yield a config that would serve without what the file asked for.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/watch/web_config.hpp"
#include "mutate_text.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

// bcrypt hashes: OpenBSD's test vector ("U*U", cost 5) and the exporter-toolkit's sample.
const std::string kHashA = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
const std::string kHashY = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze";

const std::string kFull =
    "---\n"
    "# TLS and basic auth\n"
    "tls_server_config:\n"
    "  cert_file: server.crt   # relative: next to this file\n"
    "  key_file: \"/etc/vramdoc/server.key\"\n"
    "  client_auth_type: 'RequireAndVerifyClientCert'\n"
    "  client_ca_file: ca.pem\n"
    "  min_version: TLS13\n"
    "basic_auth_users:\n"
    "  alice: " + kHashA + "\n"
    "  'bob smith': " + kHashY + "\r\n";

std::string error_of(const std::string& text) {
  auto parsed = parse_web_config(text, "/etc/vramdoc");
  return parsed ? std::string("(accepted)") : parsed.error();
}

}  // namespace

TEST(WebConfig, ReadsTheToolkitFormat) {
  auto config = parse_web_config(kFull, "/etc/vramdoc");
  ASSERT_TRUE(config) << config.error();
  ASSERT_TRUE(config->tls);
  EXPECT_EQ(config->tls->cert_file, "/etc/vramdoc/server.crt");
  EXPECT_EQ(config->tls->key_file, "/etc/vramdoc/server.key");
  EXPECT_EQ(config->tls->client_ca_file, "/etc/vramdoc/ca.pem");
  EXPECT_EQ(config->tls->client_auth, ClientAuth::RequireAndVerifyClientCert);
  EXPECT_EQ(config->tls->min_version, TlsVersion::Tls13);
  EXPECT_EQ(config->tls->max_version, TlsVersion::Tls13);
  EXPECT_EQ(config->users.size(), 2U);
  EXPECT_EQ(config->users.at("alice"), kHashA);
  EXPECT_EQ(config->users.at("bob smith"), kHashY);
}

TEST(WebConfig, AuthWithoutTlsAndEmptyFiles) {
  auto auth_only = parse_web_config("basic_auth_users:\n    alice: \"" + kHashY + "\"\n", "");
  ASSERT_TRUE(auth_only) << auth_only.error();
  EXPECT_FALSE(auth_only->tls);
  EXPECT_EQ(auth_only->users.size(), 1U);
  auto empty = parse_web_config("# nothing\n\nbasic_auth_users: {}\n", "");
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_TRUE(empty->users.empty());
}

TEST(WebConfig, RefusesWhatItDoesNotServeWithTheLine) {
  EXPECT_EQ(error_of("tls_server_config:\n  cert_file: a\n"), "web config: tls_server_config needs both cert_file and key_file");
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites:\n"
                     "    - TLS_AES_128_GCM_SHA256\n").find("line 5: lists are not supported"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert: x\n").find("line 4: tls_server_config.cert is not supported"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config:\n  http2: false\n").find("line 1: http_server_config is not supported"), std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  alice: hunter2\n").find("line 2: the password of 'alice' must be a bcrypt hash"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  alice: " + kHashA + "\n  alice: " + kHashA + "\n").find("line 3: duplicate key alice"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  a:b: " + kHashA + "\n").find("line 2: a user name must be"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n\tcert_file: a\n").find("line 2: a tab"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n").find("obsolete"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n").find("without a client_auth_type"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n")
                .find("needs client_ca_file"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: &anchor\n  cert_file: a\n").find("line 1"), std::string::npos);
  EXPECT_NE(error_of("basic_auth_users: {alice: x}\n").find("line 1"), std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  alice: |\n    x\n").find("line 2"), std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  alice: \"" + kHashA + "\n").find("not closed"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n    key_file: b\n").find("line 3: inconsistent indentation"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n---\nbasic_auth_users: {}\n").find("one YAML document"),
            std::string::npos);
  EXPECT_NE(error_of("  alice: x\n").find("outside a section"), std::string::npos);
  EXPECT_NE(error_of("users:\n  alice: x\n").find("unknown key users"), std::string::npos);
  EXPECT_NE(error_of(std::string(kMaxWebConfigBytes + 1, '#')).find("larger than 64 KiB"), std::string::npos);
}

TEST(WebConfig, BcryptHashShape) {
  EXPECT_TRUE(is_bcrypt_hash(kHashA));
  EXPECT_TRUE(is_bcrypt_hash(kHashY));
  EXPECT_FALSE(is_bcrypt_hash("$2x$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"));  // not a, b or y
  EXPECT_FALSE(is_bcrypt_hash("$2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"));  // cost below 4
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPz"));   // short
  EXPECT_FALSE(is_bcrypt_hash("$6$salt$abcdefghijklmnopqrstuvwxyz"));                             // SHA-crypt
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPz*"));  // not base64
}

// Mutations of valid files: never a crash; whatever is accepted is a config that can be served
// as read (TLS with its files, users with bcrypt hashes).
TEST(WebConfig, FuzzedFilesNeverYieldAHalfConfig) {
  std::mt19937 rng(20);
  const std::string alphabet = " :#-'\"\t\r\n{}[]&*|>$\\ab";
  const std::vector<std::string> seeds = {kFull, "basic_auth_users:\n  alice: " + kHashY + "\n",
                                          "tls_server_config:\n  cert_file: c\n  key_file: k\n"};
  std::size_t accepted = 0;
  for (const auto& seed : seeds) {
    for (int i = 0; i < 3000; ++i) {
      const std::string text = fuzz::mutate_text(seed, rng, alphabet);
      auto parsed = parse_web_config(text, "/base");
      if (!parsed) {
        EXPECT_FALSE(parsed.error().empty());
        continue;
      }
      ++accepted;
      if (parsed->tls) {
        EXPECT_TRUE(!parsed->tls->cert_file.empty() && !parsed->tls->key_file.empty()) << text;
      }
      for (const auto& [user, hash] : parsed->users) EXPECT_TRUE(is_bcrypt_hash(hash) && !user.empty()) << text;
      // A file that names a TLS section or users never loses them silently.
      if (text.find("tls_server_config:\n") == 0 && text.find("\n  key_file: ") != std::string::npos) {
        EXPECT_TRUE(parsed->tls.has_value()) << text;
      }
    }
  }
  EXPECT_GT(accepted, 0U);
}

// Regression (issue 25): a hash of cost 31 was accepted, and start-up hashed a dummy at that cost
// (days of one core, SIGTERM ignored meanwhile). Above kMaxBcryptCost it is refused, with the line.
TEST(WebConfig, BcryptCostAboveTheBoundIsRefusedWithTheLine) {
  const std::string cost31 = "$2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
  ASSERT_TRUE(is_bcrypt_hash(cost31));
  EXPECT_EQ(bcrypt_cost(cost31), 31);
  auto parsed = parse_web_config("basic_auth_users:\n  alice: " + cost31 + "\n", "/base");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().find("line 2"), std::string::npos) << parsed.error();
  EXPECT_NE(parsed.error().find("has cost 31: at most 14"), std::string::npos) << parsed.error();
  EXPECT_TRUE(parse_web_config("basic_auth_users:\n  alice: " + kHashY + "\n", "/base"));  // cost 10
}

// Regression (issue 25): a byte-order mark made the first key "unknown key basic_auth_users",
// the difference invisible. YAML allows one at the start; it is read.
TEST(WebConfig, AByteOrderMarkIsRead) {
  auto parsed = parse_web_config("\xef\xbb\xbf" "basic_auth_users:\n  alice: " + kHashY + "\n", "/base");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->users.count("alice"), 1U);
}

// Regression (issue 25): a certificate or key that is a FIFO hung start-up (OpenSSL opened it and
// waited for a writer). The files are checked first: a regular file of at most 1 MiB.
TEST(WebConfig, AFifoOrDeviceAsKeyOrCertificateIsRefusedByName) {
  const std::string dir = ::testing::TempDir() + "vramdoc-web-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/key.pem").c_str(), 0600), 0);
  std::ofstream(dir + "/cert.pem") << "-----BEGIN CERTIFICATE-----\n";
  auto config = parse_web_config("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n", dir);
  ASSERT_TRUE(config) << config.error();
  auto checked = check_web_config_files(*config);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().find("tls_server_config.key_file: " + dir + "/key.pem is a FIFO"), std::string::npos) << checked.error();
  config->tls->key_file = "/dev/zero";
  checked = check_web_config_files(*config);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().find("/dev/zero is a character device"), std::string::npos) << checked.error();
  config->tls->key_file = dir + "/cert.pem";
  EXPECT_TRUE(check_web_config_files(*config));
  std::filesystem::remove_all(dir);
}
