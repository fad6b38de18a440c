// Call-stack capture with the unwinder of the C++ runtime (.eh_frame), safe in any thread.
#include <unwind.h>

#include "tracer/recorder/recorder.hpp"

namespace vramdoc::tracer {
namespace {

struct Walk {
  std::uint64_t* out;
  int max_depth;
  int depth;
};

_Unwind_Reason_Code step(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  const auto ip = static_cast<std::uint64_t>(_Unwind_GetIP(context));
  if (ip == 0 || walk->depth >= walk->max_depth) return _URC_END_OF_STACK;
  walk->out[walk->depth++] = ip;
  return _URC_NO_REASON;
}

}  // namespace

int capture_stack(std::uint64_t* out, int max_depth) {
  Walk walk{out, max_depth, 0};
  _Unwind_Backtrace(step, &walk);
  return walk.depth;
}

}  // namespace vramdoc::tracer
