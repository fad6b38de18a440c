#include "tls/tls_server.hpp"

#include <algorithm>
#include <climits>

#include "tls/openssl_symbols.hpp"

namespace vramdoc::tls {

namespace {

using backends::Io;
using backends::IoStatus;
using watch::ClientAuth;

// RequestClientCert / RequireAnyClientCert: a certificate is asked for but not checked.
int accept_any_certificate(int, X509_STORE_CTX*) { return 1; }

class TlsStream final : public backends::SocketStream {
 public:
  TlsStream(const OpenSsl& lib, SSL* ssl) : lib_(lib), ssl_(ssl) {}
  ~TlsStream() override { lib_.SSL_free(ssl_); }
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  Io handshake() override {
    lib_.ERR_clear_error();
    const int r = lib_.SSL_do_handshake(ssl_);
    return r == 1 ? Io{} : status(r);
  }
  Io read(char* buffer, std::size_t size) override {
    lib_.ERR_clear_error();
    const int r = lib_.SSL_read(ssl_, buffer, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
    return r > 0 ? Io{IoStatus::Done, static_cast<std::size_t>(r)} : status(r);
  }
  Io write(const char* data, std::size_t size) override {
    if (size == 0) return {};
    lib_.ERR_clear_error();
    const int r = lib_.SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
    return r > 0 ? Io{IoStatus::Done, static_cast<std::size_t>(r)} : status(r);
  }
  void finish() override {
    lib_.ERR_clear_error();
    lib_.SSL_shutdown(ssl_);  // sends close_notify; the peer's is not waited for
    lib_.ERR_clear_error();
  }

 private:
  Io status(int result) {
    const int error = lib_.SSL_get_error(ssl_, result);
    lib_.ERR_clear_error();
    switch (error) {
      case SSL_ERROR_WANT_READ: return {IoStatus::WantRead, 0};
      case SSL_ERROR_WANT_WRITE: return {IoStatus::WantWrite, 0};
      case SSL_ERROR_ZERO_RETURN: return {IoStatus::Closed, 0};
      default: return {IoStatus::Failed, 0};  // a bad handshake, a rejected certificate, a reset
    }
  }

  const OpenSsl& lib_;
  SSL* ssl_;
};

class TlsFactory final : public backends::SocketStreamFactory {
 public:
  TlsFactory(const OpenSsl& lib, SSL_CTX* context) : lib_(lib), context_(context) {}
  ~TlsFactory() override { lib_.SSL_CTX_free(context_); }
  TlsFactory(const TlsFactory&) = delete;
  TlsFactory& operator=(const TlsFactory&) = delete;

  std::unique_ptr<backends::SocketStream> wrap(int fd) override {
    SSL* ssl = lib_.SSL_new(context_);
    if (!ssl) return nullptr;
    if (lib_.SSL_set_fd(ssl, fd) != 1) {
      lib_.SSL_free(ssl);
      return nullptr;
    }
    lib_.SSL_set_accept_state(ssl);
    return std::make_unique<TlsStream>(lib_, ssl);
  }

 private:
  const OpenSsl& lib_;
  SSL_CTX* context_;
};

// Protocol versions, options and modes: TLS 1.2 or newer, no renegotiation (a CPU sink), no
// session resumption (nothing to cache per client), writes that may return after one record.
void set_protocol(const OpenSsl& lib, SSL_CTX* ctx, const watch::TlsServerConfig& c) {
  const auto version = [](watch::TlsVersion v) { return v == watch::TlsVersion::Tls13 ? TLS1_3_VERSION : TLS1_2_VERSION; };
  lib.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version(c.min_version), nullptr);
  lib.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version(c.max_version), nullptr);
  lib.SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION |
                                   SSL_OP_NO_TICKET);
  lib.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
  lib.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_OFF, nullptr);
}

// client_auth_type as OpenSSL's verify mode (Go's tls.ClientAuthType semantics).
int verify_mode(ClientAuth auth, SSL_verify_cb& callback) {
  callback = nullptr;
  switch (auth) {
    case ClientAuth::NoClientCert: return SSL_VERIFY_NONE;
    case ClientAuth::RequestClientCert: callback = accept_any_certificate; return SSL_VERIFY_PEER;
    case ClientAuth::RequireAnyClientCert:
      callback = accept_any_certificate;
      return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    case ClientAuth::VerifyClientCertIfGiven: return SSL_VERIFY_PEER;
    case ClientAuth::RequireAndVerifyClientCert: return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  }
  return SSL_VERIFY_NONE;
}

}  // namespace

Result<std::unique_ptr<backends::SocketStreamFactory>> make_tls_factory(const watch::TlsServerConfig& c) {
  auto loaded = load_openssl();
  if (!loaded) return make_error(loaded.error());
  const OpenSsl& lib = **loaded;
  lib.ERR_clear_error();
  SSL_CTX* ctx = lib.SSL_CTX_new(lib.TLS_server_method());
  if (!ctx) return make_error("cannot create a TLS context: " + lib.last_error("no reason given"));
  auto failure = [&](const std::string& what) {
    Error e{what + ": " + lib.last_error("no reason given")};
    lib.SSL_CTX_free(ctx);
    return e;
  };
  set_protocol(lib, ctx, c);
  if (lib.SSL_CTX_use_certificate_chain_file(ctx, c.cert_file.c_str()) != 1)
    return failure("cannot use the certificate " + c.cert_file);
  if (lib.SSL_CTX_use_PrivateKey_file(ctx, c.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return failure("cannot use the private key " + c.key_file);
  if (lib.SSL_CTX_check_private_key(ctx) != 1)
    return failure("the private key " + c.key_file + " does not belong to the certificate " + c.cert_file);
  if (!c.client_ca_file.empty()) {
    if (lib.SSL_CTX_load_verify_locations(ctx, c.client_ca_file.c_str(), nullptr) != 1)
      return failure("cannot use the client CA file " + c.client_ca_file);
    if (STACK_OF(X509_NAME)* names = lib.SSL_load_client_CA_file(c.client_ca_file.c_str()))
      lib.SSL_CTX_set_client_CA_list(ctx, names);  // the CAs named to clients; the context owns the list
  }
  SSL_verify_cb callback = nullptr;
  const int mode = verify_mode(c.client_auth, callback);
  lib.SSL_CTX_set_verify(ctx, mode, callback);
  return std::unique_ptr<backends::SocketStreamFactory>(std::make_unique<TlsFactory>(lib, ctx));
}

}  // namespace vramdoc::tls
