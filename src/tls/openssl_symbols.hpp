// OpenSSL 3 through dlopen: the functions the exporter's TLS uses, typed by OpenSSL's own headers
// and resolved from libssl.so.3 / libcrypto.so.3 when a web config asks for TLS. The binary does
// not link OpenSSL, so it starts on machines without it (docs/security.md, "Decisions"). Loaded
// by backends/library.hpp, as NVML and the CUDA driver are; every row is required.
#pragma once
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <string>

#include "backends/library.hpp"
#include "core/result.hpp"

namespace vramdoc::tls {

#define VRAMDOC_LIBSSL_SYMBOLS(X)          \
  X(TLS_server_method)                     \
  X(SSL_CTX_new)                           \
  X(SSL_CTX_free)                          \
  X(SSL_CTX_ctrl)                          \
  X(SSL_CTX_set_options)                   \
  X(SSL_CTX_use_certificate_chain_file)    \
  X(SSL_CTX_use_PrivateKey_file)           \
  X(SSL_CTX_check_private_key)             \
  X(SSL_CTX_load_verify_locations)         \
  X(SSL_CTX_set_verify)                    \
  X(SSL_load_client_CA_file)               \
  X(SSL_CTX_set_client_CA_list)            \
  X(SSL_new)                               \
  X(SSL_free)                              \
  X(SSL_set_fd)                            \
  X(SSL_set_accept_state)                  \
  X(SSL_do_handshake)                      \
  X(SSL_read)                              \
  X(SSL_write)                             \
  X(SSL_get_error)                         \
  X(SSL_shutdown)

#define VRAMDOC_LIBCRYPTO_SYMBOLS(X) \
  X(ERR_get_error)                   \
  X(ERR_error_string_n)              \
  X(ERR_clear_error)

// A row of the tables above in backends/library.hpp's form: X(member, need, type, names...).
#define VRAMDOC_OPENSSL_ROW(X, name) X(name, ::vramdoc::backends::kRequired, decltype(&::name), #name)

// The resolved functions, named (and called) as in OpenSSL.
struct OpenSsl {
#define VRAMDOC_FIELD(name) VRAMDOC_OPENSSL_ROW(VRAMDOC_SYMBOL_MEMBER, name)
  VRAMDOC_LIBSSL_SYMBOLS(VRAMDOC_FIELD)
  VRAMDOC_LIBCRYPTO_SYMBOLS(VRAMDOC_FIELD)
#undef VRAMDOC_FIELD

  // OpenSSL's reason for the last failure (its error queue, emptied), or `fallback`.
  std::string last_error(const std::string& fallback) const;
};

// Opens libssl.so.3 and libcrypto.so.3 once and resolves every symbol; the error says what to
// install. The libraries stay loaded for the life of the process.
Result<const OpenSsl*> load_openssl();

}  // namespace vramdoc::tls
