/* A fake libcuda.so.1 for tests, configured at cuInit from the key=value file named by
 * $FAKE_CUDA_CONFIG: devices=N, bus=FIRST_BUS (device i sits on bus FIRST_BUS + i), name=...,
 * total=BYTES, init_error=CUresult, attr.N=VALUE (CUdevice_attribute N), driver=13000.
 * Defaults describe an H200. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_ATTR 256
typedef int CUresult;

static struct {
  int devices, bus, init_error, driver, initialised;
  char name[96];
  unsigned long long total;
  int attr[MAX_ATTR];
} cfg;

static void load_config(void) {
  memset(&cfg, 0, sizeof cfg);
  cfg.devices = 1; cfg.bus = 0x19; cfg.driver = 13000; cfg.total = 150754820096ULL;
  strcpy(cfg.name, "NVIDIA H200");
  static const int defaults[][2] = {
      {8, 49152}, {10, 32}, {12, 65536}, {13, 1980000}, {16, 132}, {36, 3201000}, {37, 6144},
      {38, 52428800}, {39, 2048}, {75, 9}, {76, 0}, {81, 233472}, {82, 65536}, {97, 232448}};
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; ++i) cfg.attr[defaults[i][0]] = defaults[i][1];
  const char* path = getenv("FAKE_CUDA_CONFIG");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    char* eq = strchr(line, '=');
    if (!eq) continue;
    *eq = 0;
    const char* v = eq + 1;
    if (!strcmp(line, "devices")) cfg.devices = atoi(v);
    else if (!strcmp(line, "bus")) cfg.bus = (int)strtol(v, NULL, 0);
    else if (!strcmp(line, "init_error")) cfg.init_error = atoi(v);
    else if (!strcmp(line, "driver")) cfg.driver = atoi(v);
    else if (!strcmp(line, "total")) cfg.total = strtoull(v, NULL, 0);
    else if (!strcmp(line, "name")) snprintf(cfg.name, sizeof cfg.name, "%s", v);
    else if (!strncmp(line, "attr.", 5)) {
      int n = atoi(line + 5);
      if (n >= 0 && n < MAX_ATTR) cfg.attr[n] = (int)strtol(v, NULL, 0);
    }
  }
  fclose(f);
}

EXPORT CUresult cuInit(unsigned flags) {
  load_config();
  if (flags != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
  if (cfg.init_error) return cfg.init_error;
  cfg.initialised = 1;
  return 0;
}
EXPORT CUresult cuGetErrorString(CUresult rc, const char** text) {
  *text = rc == 100 ? "no CUDA-capable device is detected" : rc == 3 ? "initialization error" : "unknown error";
  return 0;
}
EXPORT CUresult cuDriverGetVersion(int* v) { *v = cfg.driver; return 0; }
EXPORT CUresult cuDeviceGetCount(int* n) { if (!cfg.initialised) return 3; *n = cfg.devices; return 0; }
EXPORT CUresult cuDeviceGet(int* device, int ordinal) {
  if (!cfg.initialised) return 3;
  if (ordinal < 0 || ordinal >= cfg.devices) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *device = ordinal;
  return 0;
}
EXPORT CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!cfg.initialised) return 3;
  if (device < 0 || device >= cfg.devices || attribute < 0 || attribute >= MAX_ATTR) return 1;
  if (attribute == 33) *value = cfg.bus + device;
  else *value = cfg.attr[attribute];
  return 0;
}
EXPORT CUresult cuDeviceGetName(char* name, int len, int device) {
  if (device < 0 || device >= cfg.devices) return 101;
  snprintf(name, (size_t)len, "%s", cfg.name);
  return 0;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, int device) {
  if (device < 0 || device >= cfg.devices) return 101;
  *bytes = (size_t)cfg.total;
  return 0;
}
