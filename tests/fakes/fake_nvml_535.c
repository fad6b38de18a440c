/* Fake NVML of a 535-era driver: _v3 processes fill the longer struct with CC-protected memory. */
#define FAKE_NVML_535 1
#include "fake_nvml.h"
