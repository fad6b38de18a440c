#include "tls/openssl_symbols.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

#include <mutex>

namespace vramdoc::tls {

namespace {

// The library's path may be given for tests (VRAMDOC_LIBSSL, VRAMDOC_LIBCRYPTO); else the soname.
void* open_library(const char* variable, const char* soname) {
  const char* path = std::getenv(variable);
  return dlopen(path && *path ? path : soname, RTLD_NOW | RTLD_LOCAL);
}

Result<OpenSsl> resolve() {
  void* crypto = open_library("VRAMDOC_LIBCRYPTO", "libcrypto.so.3");
  void* ssl = crypto ? open_library("VRAMDOC_LIBSSL", "libssl.so.3") : nullptr;
  if (!crypto || !ssl)
    return make_error(std::string("cannot load OpenSSL 3 (") + dlerror() +
                      "): install it (Debian/Ubuntu: apt install libssl3) or serve TLS through a reverse proxy "
                      "(docs/security.md)");
  OpenSsl lib;
  std::string missing;
#define VRAMDOC_RESOLVE(handle)                                                              \
  [&](auto& field, const char* name) {                                                       \
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(handle, name)); \
    if (!field) missing += std::string(missing.empty() ? "" : ", ") + name;                  \
  }
  auto from_ssl = VRAMDOC_RESOLVE(ssl);
  auto from_crypto = VRAMDOC_RESOLVE(crypto);
#undef VRAMDOC_RESOLVE
#define VRAMDOC_SSL(name) from_ssl(lib.name, #name);
#define VRAMDOC_CRYPTO(name) from_crypto(lib.name, #name);
  VRAMDOC_LIBSSL_SYMBOLS(VRAMDOC_SSL)
  VRAMDOC_LIBCRYPTO_SYMBOLS(VRAMDOC_CRYPTO)
#undef VRAMDOC_SSL
#undef VRAMDOC_CRYPTO
  if (!missing.empty()) return make_error("the OpenSSL library lacks " + missing + " (OpenSSL 3 is needed)");
  return lib;
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
