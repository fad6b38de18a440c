// TLS for the exporter's connections (`vramdoc watch --serve --web-config`): an OpenSSL server
// context made from the web config's tls_server_config, and a non-blocking TLS stream for each
// accepted connection. Built only with OpenSSL 3's headers; reached through cli/features.cpp.
#pragma once
#include <memory>

#include "backends/watch/socket_stream.hpp"
#include "core/result.hpp"
#include "core/watch/web_config.hpp"

namespace vramdoc::tls {

// Loads OpenSSL, the certificate chain, the key (checked against the certificate) and, when
// client certificates are verified, the client CAs. The error names the file and OpenSSL's reason.
Result<std::unique_ptr<backends::SocketStreamFactory>> make_tls_factory(const watch::TlsServerConfig& config);

}  // namespace vramdoc::tls
