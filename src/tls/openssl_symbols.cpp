#include "tls/openssl_symbols.hpp"

#include <mutex>
#include <optional>
#include <vector>

namespace vramdoc::tls {

namespace {

// The library's path may be given for tests (VRAMDOC_LIBSSL, VRAMDOC_LIBCRYPTO); else the soname.
Result<OpenSsl> resolve() {
  auto crypto = backends::Library::open("VRAMDOC_LIBCRYPTO", "libcrypto.so.3");
  auto ssl = crypto ? backends::Library::open("VRAMDOC_LIBSSL", "libssl.so.3") : Result<backends::Library>(make_error(""));
  if (!crypto || !ssl)
    return make_error("cannot load OpenSSL 3 (" + (crypto ? ssl.error() : crypto.error()) +
                      "): install it (Debian/Ubuntu: apt install libssl3) or serve TLS through a reverse proxy "
                      "(docs/security.md)");
  OpenSsl symbols;
  std::optional<std::string> missing;
  {
    void* library = ssl->handle();
#define VRAMDOC_SSL(name) VRAMDOC_OPENSSL_ROW(VRAMDOC_SYMBOL_RESOLVE, name)
    VRAMDOC_LIBSSL_SYMBOLS(VRAMDOC_SSL)
#undef VRAMDOC_SSL
  }
  {
    void* library = crypto->handle();
#define VRAMDOC_CRYPTO(name) VRAMDOC_OPENSSL_ROW(VRAMDOC_SYMBOL_RESOLVE, name)
    VRAMDOC_LIBCRYPTO_SYMBOLS(VRAMDOC_CRYPTO)
#undef VRAMDOC_CRYPTO
  }
  if (missing) return make_error("the OpenSSL library lacks " + *missing + " (OpenSSL 3 is needed)");
  // The libraries stay loaded for the life of the process: the resolved functions point into them.
  static std::vector<backends::Library> kept;
  kept.push_back(std::move(*crypto));
  kept.push_back(std::move(*ssl));
  return symbols;
}

}  // namespace

std::string OpenSsl::last_error(const std::string& fallback) const {
  std::string out;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out = text;  // the last one is the most specific
  }
  return out.empty() ? fallback : out;
}

Result<const OpenSsl*> load_openssl() {
  static std::once_flag once;
  static Result<OpenSsl> loaded = make_error("not loaded");
  std::call_once(once, [] { loaded = resolve(); });
  if (!loaded) return make_error(loaded.error());
  return &loaded.value();
}

}  // namespace vramdoc::tls
