// The optional features this build has. features.cpp is the one file with #if on them.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "backends/watch/socket_stream.hpp"
#include "core/bench/plan.hpp"
#include "core/watch/web_config.hpp"

namespace vramdoc::cli {

// True when the CUPTI allocation tracer module was built.
bool have_cupti_tracer();
// How to get a missing feature, for error messages.
std::string how_to_enable_cuda();

// Runs `vramdoc bench`'s suites; progress lines go to the callback. (kernels/runner.hpp)
using BenchRunner = Result<bench::BenchReport> (*)(const bench::BenchOptions&,
                                                   const std::function<void(const std::string&)>&);
// The bench runner, or nullptr when this build has no CUDA kernels.
BenchRunner bench_runner();

// TLS streams for `watch --serve --web-config`; the error says how to get TLS when this build
// has none, or why OpenSSL refused the configured files.
Result<std::unique_ptr<backends::SocketStreamFactory>> tls_stream_factory(const watch::TlsServerConfig& config);

}  // namespace vramdoc::cli
