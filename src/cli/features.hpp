// The optional features this build has. features.cpp is the one file with #if on them.
#pragma once
#include <string>

namespace vramdoc::cli {

// True when the CUDA benchmark kernels were built in.
bool have_cuda_kernels();
// True when the CUPTI allocation tracer module was built.
bool have_cupti_tracer();
// How to get a missing feature, for error messages.
std::string how_to_enable_cuda();

}  // namespace vramdoc::cli
