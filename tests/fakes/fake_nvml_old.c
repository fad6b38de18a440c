/* Fake NVML of an old driver: only the plain v1 symbols (no _v2 memory, no _v2/_v3 processes). */
#include "fake_nvml.h"
