// Plain C++ signatures of the CUDA side, so that everything else is ordinary, testable C++.
#pragma once
#include <string>

namespace vramdoc::bench {

// Number of CUDA devices the runtime sees; -1 with `why` filled when the runtime cannot start.
int cuda_device_count(std::string* why);

}  // namespace vramdoc::bench
