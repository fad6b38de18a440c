#include "cli/features.hpp"

#include "vramdoc/config.h"

#if VRAMDOC_HAVE_CUDA
#include "kernels/runner.hpp"
#endif
#if VRAMDOC_HAVE_TLS
#include "tls/tls_server.hpp"
#endif

namespace vramdoc::cli {

bool have_cupti_tracer() { return VRAMDOC_HAVE_CUPTI; }

std::string how_to_enable_cuda() {
  return "this vramdoc was built without CUDA: install the CUDA toolkit (nvcc) and rebuild "
         "(cmake -DVRAMDOC_CUDA=ON)";
}

BenchRunner bench_runner() {
#if VRAMDOC_HAVE_CUDA
  return &bench::run_bench;
#else
  return nullptr;
#endif
}

Result<std::unique_ptr<backends::SocketStreamFactory>> tls_stream_factory(const watch::TlsServerConfig& config) {
#if VRAMDOC_HAVE_TLS
  return tls::make_tls_factory(config);
#else
  (void)config;
  return make_error("this vramdoc was built without TLS: install OpenSSL 3's headers (apt install libssl-dev) and "
                    "rebuild, or put a TLS reverse proxy in front of it (docs/security.md)");
#endif
}

}  // namespace vramdoc::cli
