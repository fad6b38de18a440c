// Runs a job under vramdoc's capture: python/vramdoc/_capture.py, written as sitecustomize.py into
// a private folder put first on the job's PYTHONPATH, fakes CUDA as the target card in every
// Python process of the job and writes the trace core/capture reads (docs/estimator.md,
// "Estimating a script"). The job is started by launcher.* in its own process group.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::backends {

struct CaptureJob {
  std::vector<std::string> argv;        // the job: python train.py ARGS
  std::string_view module_text;         // the capture module's source (compiled into the binary)
  std::uint64_t steps = 3;              // optimizer steps (or forwards under no_grad) to capture
  std::chrono::seconds timeout{600};    // --capture-timeout
  std::string gpu_name;                 // what torch.cuda.get_device_name() shows
  std::uint64_t gpu_bytes = 0;          // total_memory
  int cc_major = 9, cc_minor = 0, sms = 132;
  bool show_output = false;             // the job's output to ours (else to a log: its tail on failure)
};

struct CaptureOutcome {
  std::string trace_text;   // what the capture wrote (empty if it never started)
  int exit_status = 0;      // as a shell reports it
  bool timed_out = false;
  std::string output_tail;  // the job's last output lines (show_output off)
};

// Runs `job` to its end, to the capture's last step or to the timeout. The error is for a job
// that could not start (no such command) or a private folder that could not be made.
Result<CaptureOutcome> run_capture(const CaptureJob& job);

}  // namespace vramdoc::backends
