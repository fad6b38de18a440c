// The optional features this build has. features.cpp is the one file with #if on them.
#pragma once
#include <functional>
#include <string>

#include "core/bench/plan.hpp"

namespace vramdoc::cli {

// True when the CUPTI allocation tracer module was built.
bool have_cupti_tracer();
// How to get a missing feature, for error messages.
std::string how_to_enable_cuda();

// Runs `vramdoc bench`'s suites; progress lines go to the callback. (bench/runner.hpp)
using BenchRunner = Result<bench::BenchReport> (*)(const bench::BenchOptions&,
                                                   const std::function<void(const std::string&)>&);
// The bench runner, or nullptr when this build has no CUDA kernels.
BenchRunner bench_runner();

}  // namespace vramdoc::cli
