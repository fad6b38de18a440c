#include "cli/features.hpp"

#include "vramdoc/config.h"

#if VRAMDOC_HAVE_CUDA
#include "bench/runner.hpp"
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

}  // namespace vramdoc::cli
