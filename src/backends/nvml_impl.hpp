// The NVML backend's state and call helpers, shared by nvml.cpp (loading, memory, processes)
// and nvml_queries.cpp (static facts, samples). Internal: only the NVML backend includes it.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/nvml.hpp"
#include "backends/nvml_api.hpp"
#include "backends/nvml_symbols.hpp"

namespace vramdoc::backends {

namespace api = nvml_api;
using nvml_symbols::Symbols;

struct Nvml::Impl {
  std::optional<Library> library;
  Symbols sym;
  std::vector<api::Device> devices;  // null where the handle could not be had
  std::vector<std::string> handle_errors;
  mutable std::mutex mutex;                               // guards last_util_us
  mutable std::vector<unsigned long long> last_util_us;   // per device: newest process sample seen

  ~Impl() {
    if (sym.shutdown) sym.shutdown.fn();  // before the library closes (the member goes after this body)
  }

  // "nvmlDeviceGetMemoryInfo_v2: Insufficient Permissions (NVML error 4)".
  std::string describe(const char* function, api::Return rc) const {
    std::string text = sym.error_string ? sym.error_string.fn(rc) : "error";
    return std::string(function ? function : "NVML") + ": " + text + " (NVML error " + std::to_string(rc) + ")";
  }

  Result<api::Device> device(unsigned index) const {
    if (index >= devices.size()) {
      return make_error("no GPU with index " + std::to_string(index) + " (NVML sees " +
                        std::to_string(devices.size()) + ")");
    }
    if (!devices[index]) return make_error(handle_errors[index]);
    return devices[index];
  }
};

namespace nvml_detail {


// Calls a getter of one value; the value when it succeeded, nothing otherwise.
template <class T, class Fn, class... Args>
std::optional<T> get(const nvml_symbols::Symbol<Fn>& s, Args... args) {
  if (!s) return std::nullopt;
  T value{};
  if (s.fn(args..., &value) != api::kSuccess) return std::nullopt;
  return value;
}

template <class Fn, class... Args>
std::optional<std::string> get_string(const nvml_symbols::Symbol<Fn>& s, Args... args) {
  if (!s) return std::nullopt;
  char buffer[api::kStringBufferBytes] = {};
  if (s.fn(args..., buffer, sizeof buffer) != api::kSuccess) return std::nullopt;
  buffer[sizeof buffer - 1] = '\0';
  return std::string(buffer);
}

}  // namespace nvml_detail

}  // namespace vramdoc::backends
