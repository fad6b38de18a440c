/* The exported NVML functions of the fakes (included by fake_nvml.h; see there). */
#if defined(FAKE_NVML_MODERN) || defined(FAKE_NVML_535)
#define FAKE_NVML_NEW_API 1
#endif

typedef struct { unsigned long long total, free, used; } mem_v1;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } mem_v2;
typedef struct { unsigned pid; unsigned long long used; } proc_v1;
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } proc_v2;
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; unsigned long long cc; } proc_v3cc;
typedef struct { char bus_id[16]; unsigned domain, bus, device, pci_device_id, subsys, reserved[4]; } pci_v1;
typedef struct { char legacy[16]; unsigned domain, bus, device, pci_device_id, subsys; char bus_id[32]; } pci_v3;
typedef struct { unsigned gpu, memory; } utilization;
typedef struct { unsigned pid; unsigned long long ts; unsigned sm, mem, enc, dec; } proc_util;

static nvmlReturn_t init(const char* name) {
  load_config();
  FAIL_IF_CONFIGURED(name);
  cfg.initialised = 1;
  return 0;
}
EXPORT nvmlReturn_t nvmlInit(void) { return init("nvmlInit"); }
EXPORT nvmlReturn_t nvmlShutdown(void) { cfg.initialised = 0; return 0; }
EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case 0: return "Success";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    case 25: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* n) { FAIL_IF_CONFIGURED("nvmlDeviceGetCount"); *n = cfg.devices; return 0; }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) {
  FAIL_IF_CONFIGURED("nvmlDeviceGetHandleByIndex");
  if (i >= cfg.devices) return INVALID_ARGUMENT;
  *d = (nvmlDevice_t)(uintptr_t)(i + 1);
  return 0;
}
/* v1 cannot tell reserved memory apart: it shows up in `used`. */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, mem_v1* m) {
  DEVICE("nvmlDeviceGetMemoryInfo");
  m->total = cfg.total; m->used = cfg.used + cfg.reserved; m->free = cfg.total - m->used;
  return 0;
}

static nvmlReturn_t fill_processes(int idx, unsigned* count, void* infos, int layout) {
  if (cfg.processes_file[0]) reload_processes();
  unsigned n = 0;
  for (unsigned i = 0; i < cfg.nprocs; ++i) n += cfg.procs[i].gpu < 0 || cfg.procs[i].gpu == idx;
  if (*count < n) { *count = n; return INSUFFICIENT_SIZE; }
  unsigned k = 0;
  for (unsigned i = 0; i < cfg.nprocs; ++i) {
    const fake_proc* p = &cfg.procs[i];
    if (p->gpu >= 0 && p->gpu != idx) continue;
    if (layout == 1) { proc_v1* o = (proc_v1*)infos + k; o->pid = p->pid; o->used = p->used; }
    if (layout == 2) { proc_v2* o = (proc_v2*)infos + k; o->pid = p->pid; o->used = p->used; o->gi = o->ci = 0xFFFFFFFFu; }
    if (layout == 3) { proc_v3cc* o = (proc_v3cc*)infos + k; o->pid = p->pid; o->used = p->used; o->gi = o->ci = 0xFFFFFFFFu; o->cc = 0; }
    ++k;
  }
  *count = n;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* n, void* infos) {
  DEVICE("nvmlDeviceGetComputeRunningProcesses");
  return fill_processes(idx, n, infos, 1);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, pci_v1* p) {
  DEVICE("nvmlDeviceGetPciInfo");
  memset(p, 0, sizeof *p);
  snprintf(p->bus_id, sizeof p->bus_id, "0000:%02X:00.0", cfg.bus + (unsigned)idx);
  p->bus = cfg.bus + (unsigned)idx; p->pci_device_id = cfg.pci_device_id;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* s, unsigned len) {
  DEVICE("nvmlDeviceGetName"); snprintf(s, len, "%s", cfg.name); return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* s, unsigned len) {
  DEVICE("nvmlDeviceGetUUID"); snprintf(s, len, "%s%d", cfg.uuid_prefix, idx); return 0;
}
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* s, unsigned len) {
  FAIL_IF_CONFIGURED("nvmlSystemGetDriverVersion"); snprintf(s, len, "%s", cfg.driver); return 0;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  FAIL_IF_CONFIGURED("nvmlSystemGetCudaDriverVersion"); *v = cfg.cuda_version; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, unsigned type, unsigned* mhz) {
  DEVICE("nvmlDeviceGetMaxClockInfo"); *mhz = type == 2 ? cfg.max_mem_clock : cfg.max_sm_clock; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned type, unsigned* mhz) {
  DEVICE("nvmlDeviceGetClockInfo"); *mhz = type == 2 ? cfg.mem_clock : cfg.sm_clock; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned sensor, unsigned* c) {
  DEVICE("nvmlDeviceGetTemperature"); if (sensor != 0) return INVALID_ARGUMENT; *c = cfg.temp; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* mw) {
  DEVICE("nvmlDeviceGetPowerUsage"); *mw = cfg.power_mw; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, utilization* u) {
  DEVICE("nvmlDeviceGetUtilizationRates"); u->gpu = cfg.util_gpu; u->memory = cfg.util_mem; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* r) {
  DEVICE("nvmlDeviceGetCurrentClocksThrottleReasons"); *r = cfg.throttle; return 0;
}

#ifdef FAKE_NVML_NEW_API
EXPORT nvmlReturn_t nvmlInit_v2(void) { return init("nvmlInit_v2"); }
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) { FAIL_IF_CONFIGURED("nvmlDeviceGetCount_v2"); *n = cfg.devices; return 0; }
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  FAIL_IF_CONFIGURED("nvmlDeviceGetHandleByIndex_v2");
  return nvmlDeviceGetHandleByIndex(i, d);
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, mem_v2* m) {
  DEVICE("nvmlDeviceGetMemoryInfo_v2");
  if (m->version != (sizeof(mem_v2) | (2u << 24))) return VERSION_MISMATCH;
  m->total = cfg.total; m->reserved = cfg.reserved; m->used = cfg.used;
  m->free = cfg.total - cfg.used - cfg.reserved;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* n, void* infos) {
  DEVICE("nvmlDeviceGetComputeRunningProcesses_v2"); return fill_processes(idx, n, infos, 2);
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* n, void* infos) {
  DEVICE("nvmlDeviceGetComputeRunningProcesses_v3");
#ifdef FAKE_NVML_535
  return fill_processes(idx, n, infos, 3);
#else
  return fill_processes(idx, n, infos, 2);
#endif
}
#ifdef FAKE_NVML_535
EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(void) { return NOT_SUPPORTED; }
#else
EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(void) { return NOT_SUPPORTED; }
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(void) { return NOT_SUPPORTED; }
#endif
static nvmlReturn_t fill_pci(nvmlDevice_t device, pci_v3* p, const char* name) {
  DEVICE(name);
  memset(p, 0, sizeof *p);
  p->bus = cfg.bus + (unsigned)idx; p->pci_device_id = cfg.pci_device_id;
  snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", p->bus);
  snprintf(p->legacy, sizeof p->legacy, "0000:%02X:00.0", p->bus);
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, pci_v3* p) { return fill_pci(d, p, "nvmlDeviceGetPciInfo_v2"); }
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, pci_v3* p) { return fill_pci(d, p, "nvmlDeviceGetPciInfo_v3"); }
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* s, unsigned len) {
  FAIL_IF_CONFIGURED("nvmlSystemGetNVMLVersion"); snprintf(s, len, "%s", cfg.nvml); return 0;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  FAIL_IF_CONFIGURED("nvmlSystemGetCudaDriverVersion_v2"); *v = cfg.cuda_version; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  DEVICE("nvmlDeviceGetCudaComputeCapability"); *major = cfg.cc_major; *minor = cfg.cc_minor; return 0;
}
#define UINT_GETTER(fn, field) \
  EXPORT nvmlReturn_t fn(nvmlDevice_t device, unsigned* v) { DEVICE(#fn); *v = cfg.field; return 0; }
UINT_GETTER(nvmlDeviceGetMemoryBusWidth, bus_width)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, pcie_gen)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, pcie_gen_max)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, pcie_width)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, pcie_width_max)
UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, power_limit_mw)
EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int* current, int* pending) {
  DEVICE("nvmlDeviceGetEccMode"); *current = *pending = cfg.ecc; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  DEVICE("nvmlDeviceGetMigMode"); *current = *pending = (unsigned)cfg.mig; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int* mode) {
  DEVICE("nvmlDeviceGetPersistenceMode"); *mode = cfg.persistence; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int* mode) {
  DEVICE("nvmlDeviceGetComputeMode"); *mode = cfg.compute_mode; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, unsigned counter, unsigned* kb) {
  DEVICE("nvmlDeviceGetPcieThroughput"); *kb = counter == 0 ? cfg.pcie_tx_kb : cfg.pcie_rx_kb; return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link, int* active) {
  DEVICE("nvmlDeviceGetNvLinkState");
  if (cfg.nvlinks == 0) return NOT_SUPPORTED;
  if (link >= 18) return INVALID_ARGUMENT;
  *active = (int)link < cfg.nvlinks;
  return 0;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* r) {
  DEVICE("nvmlDeviceGetCurrentClocksEventReasons"); *r = cfg.throttle; return 0;
}
/* One sample per process that has utilisation, stamped 1000 + pid microseconds. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, proc_util* out, unsigned* n,
                                                    unsigned long long since) {
  DEVICE("nvmlDeviceGetProcessUtilization");
  unsigned have = 0;
  for (unsigned i = 0; i < cfg.nprocs; ++i) have += cfg.procs[i].has_util && 1000ULL + cfg.procs[i].pid > since;
  if (have == 0) return NOT_FOUND;
  if (!out || *n < have) { *n = have; return INSUFFICIENT_SIZE; }
  unsigned k = 0;
  for (unsigned i = 0; i < cfg.nprocs; ++i) {
    const fake_proc* p = &cfg.procs[i];
    if (!p->has_util || 1000ULL + p->pid <= since) continue;
    out[k].pid = p->pid; out[k].ts = 1000ULL + p->pid; out[k].sm = p->sm; out[k].mem = p->mem;
    out[k].enc = out[k].dec = 0;
    ++k;
  }
  *n = k;
  return 0;
}
#endif
