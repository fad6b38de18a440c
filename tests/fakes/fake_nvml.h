/* A fake libnvidia-ml.so.1 for tests, configured at nvmlInit from the key=value file named by
 * $FAKE_NVML_CONFIG (see docs/info.md for the keys). Layouts follow NVIDIA's public nvml.h,
 * declared here on their own so a layout slip in the backend shows up as a test failure.
 * Each fake_nvml_<variant>.c defines which symbol versions it exports, then includes this file:
 *   FAKE_NVML_MODERN  _v2/_v3 symbols, memory v2 (checks the version word), processes v2 layout
 *   FAKE_NVML_535     as modern, but _v3 processes use the 535-era layout with CC memory
 *   (neither)         only the plain v1 symbols of an old driver */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
#define EXPORT __attribute__((visibility("default")))
#define NOT_SUPPORTED 3
#define INVALID_ARGUMENT 2
#define NOT_FOUND 6
#define INSUFFICIENT_SIZE 7
#define VERSION_MISMATCH 25
#define MAX_PROCS 256

typedef struct { unsigned pid; unsigned long long used; unsigned sm, mem; int has_util; int gpu; /* -1: every GPU */ } fake_proc;

static struct {
  unsigned devices;
  unsigned long long total, used, reserved;
  char name[96], uuid_prefix[64], driver[32], nvml[32];
  unsigned bus, pci_device_id, bus_width, max_mem_clock, max_sm_clock, sm_clock, mem_clock;
  int cc_major, cc_minor, cuda_version, ecc, mig, persistence, compute_mode, nvlinks;
  unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, util_gpu, util_mem;
  unsigned pcie_tx_kb, pcie_rx_kb, power_mw, power_limit_mw, temp;
  unsigned long long throttle;
  fake_proc procs[MAX_PROCS];
  unsigned nprocs;
  char fail[1024];  /* "name:rc,name:rc" */
  int fail_device;  /* device calls fail only on this index (-1: every device) */
  char fail_when_exists[512];  /* when set, device calls fail only while this file exists (mid-run) */
  char processes_file[512];  /* when set, the process lists are read from it at every call: "GPU PID BYTES" lines */
  int initialised;
} cfg;

static void set_defaults(void) {
  memset(&cfg, 0, sizeof cfg);
  cfg.devices = 1;
  cfg.total = 150754820096ULL; cfg.used = 4194304000ULL; cfg.reserved = 566034432ULL;
  strcpy(cfg.name, "NVIDIA H200"); strcpy(cfg.uuid_prefix, "GPU-fake0000-0000-0000-0000-00000000000");
  strcpy(cfg.driver, "580.95.05"); strcpy(cfg.nvml, "13.580.95.05");
  cfg.bus = 0x19; cfg.pci_device_id = 0x233510DE; cfg.bus_width = 6144;
  cfg.max_mem_clock = 3201; cfg.max_sm_clock = 1980; cfg.sm_clock = 1755; cfg.mem_clock = 3201;
  cfg.cc_major = 9; cfg.cc_minor = 0; cfg.cuda_version = 13000; cfg.ecc = 1; cfg.persistence = 1;
  cfg.pcie_gen = 5; cfg.pcie_gen_max = 5; cfg.pcie_width = 16; cfg.pcie_width_max = 16;
  cfg.util_gpu = 37; cfg.util_mem = 12; cfg.pcie_tx_kb = 1000; cfg.pcie_rx_kb = 2000;
  cfg.power_mw = 123456; cfg.power_limit_mw = 700000; cfg.temp = 41; cfg.throttle = 0x4;
  cfg.nvlinks = 18;
  cfg.fail_device = -1;
}

static void parse_processes(const char* v) {  /* pid:bytes[:sm:mem],...  bytes "na" = not available */
  while (*v && cfg.nprocs < MAX_PROCS) {
    fake_proc* p = &cfg.procs[cfg.nprocs++];
    p->gpu = -1;
    p->pid = (unsigned)strtoul(v, (char**)&v, 10);
    if (*v == ':') ++v;
    if (strncmp(v, "na", 2) == 0) { p->used = ~0ULL; v += 2; } else p->used = strtoull(v, (char**)&v, 10);
    if (*v == ':') { p->sm = (unsigned)strtoul(v + 1, (char**)&v, 10); p->has_util = 1; }
    if (*v == ':') p->mem = (unsigned)strtoul(v + 1, (char**)&v, 10);
    while (*v && *v != ',') ++v;
    if (*v == ',') ++v;
  }
}

static void load_config(void) {
  set_defaults();
  const char* path = getenv("FAKE_NVML_CONFIG");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    char* eq = strchr(line, '=');
    if (!eq || line[0] == '#') continue;
    *eq = 0;
    const char *k = line, *v = eq + 1;
    unsigned long long n = strtoull(v, NULL, 0);
#define NUM(key, field) else if (!strcmp(k, key)) cfg.field = (__typeof__(cfg.field))n;
#define STR(key, field) else if (!strcmp(k, key)) snprintf(cfg.field, sizeof cfg.field, "%s", v);
    if (0) {}
    NUM("devices", devices) NUM("total", total) NUM("used", used) NUM("reserved", reserved)
    STR("name", name) STR("uuid_prefix", uuid_prefix) STR("driver", driver) STR("nvml", nvml) STR("fail", fail)
    STR("fail_when_exists", fail_when_exists) STR("processes_file", processes_file)
    NUM("bus", bus) NUM("pci_device_id", pci_device_id) NUM("bus_width", bus_width)
    NUM("max_mem_clock", max_mem_clock) NUM("max_sm_clock", max_sm_clock) NUM("sm_clock", sm_clock)
    NUM("mem_clock", mem_clock) NUM("cc_major", cc_major) NUM("cc_minor", cc_minor)
    NUM("cuda_version", cuda_version) NUM("ecc", ecc) NUM("mig", mig) NUM("persistence", persistence)
    NUM("compute_mode", compute_mode) NUM("nvlinks", nvlinks) NUM("pcie_gen", pcie_gen)
    NUM("pcie_gen_max", pcie_gen_max) NUM("pcie_width", pcie_width) NUM("pcie_width_max", pcie_width_max)
    NUM("util_gpu", util_gpu) NUM("util_mem", util_mem) NUM("pcie_tx_kb", pcie_tx_kb)
    NUM("pcie_rx_kb", pcie_rx_kb) NUM("power_mw", power_mw) NUM("power_limit_mw", power_limit_mw)
    NUM("temp", temp) NUM("throttle", throttle) NUM("fail_device", fail_device)
    else if (!strcmp(k, "processes")) parse_processes(v);
#undef NUM
#undef STR
  }
  fclose(f);
}

/* processes_file: what a test job says it holds now, "GPU PID BYTES" per line (the last line of a
 * (GPU, PID) wins, so a job appends its new size every step). */
static void reload_processes(void) {
  FILE* f = fopen(cfg.processes_file, "r");
  cfg.nprocs = 0;
  if (!f) return;
  int gpu;
  unsigned pid;
  unsigned long long used;
  while (fscanf(f, "%d %u %llu", &gpu, &pid, &used) == 3) {
    unsigned i = 0;
    while (i < cfg.nprocs && !(cfg.procs[i].gpu == gpu && cfg.procs[i].pid == pid)) ++i;
    if (i == cfg.nprocs) {
      if (cfg.nprocs == MAX_PROCS) break;
      ++cfg.nprocs;
    }
    cfg.procs[i] = (fake_proc){pid, used, 0, 0, 0, gpu};
  }
  fclose(f);
}

/* The configured error code for `function`, or 0. */
static nvmlReturn_t failure(const char* function) {
  size_t len = strlen(function);
  for (const char* p = strstr(cfg.fail, function); p; p = strstr(p + 1, function)) {
    if ((p == cfg.fail || p[-1] == ',') && p[len] == ':') return (nvmlReturn_t)atoi(p + len + 1);
  }
  return 0;
}
#define FAIL_IF_CONFIGURED(name) do { nvmlReturn_t rc_ = failure(name); if (rc_) return rc_; } while (0)

static int device_index(nvmlDevice_t d) {  /* handles are index + 1 */
  uintptr_t i = (uintptr_t)d;
  return (i >= 1 && i <= cfg.devices) ? (int)(i - 1) : -1;
}
/* A device call's configured error, limited by fail_device and fail_when_exists. */
static nvmlReturn_t device_failure(const char* function, int idx) {
  if (cfg.fail_device >= 0 && idx != cfg.fail_device) return 0;
  if (cfg.fail_when_exists[0] && access(cfg.fail_when_exists, F_OK) != 0) return 0;
  return failure(function);
}
#define DEVICE(name) int idx = device_index(device); \
  do { nvmlReturn_t rc_ = device_failure(name, idx); if (rc_) return rc_; } while (0); \
  if (idx < 0 || !cfg.initialised) return INVALID_ARGUMENT

#include "fake_nvml_symbols.h"
