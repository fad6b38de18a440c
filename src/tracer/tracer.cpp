// The allocation tracer, loaded by the CUDA driver through CUDA_INJECTION64_PATH.
// Empty for now (issue 6 fills it): it only acknowledges the injection.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() { return 1; }
