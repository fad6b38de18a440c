/* Fake NVML of a current driver: _v2/_v3 symbols, memory v2, processes in the v2 layout. */
#define FAKE_NVML_MODERN 1
#include "fake_nvml.h"
