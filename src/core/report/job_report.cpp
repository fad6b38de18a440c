// Building a job report from what `analyze` was given (the renderers are render_*.cpp).
#include "core/report/job_report.hpp"

namespace vramdoc::report {

JobReport report_of_snapshot(snapshot::SnapshotReport s) {
  JobReport r;
  if (s.timeline) r.timeline = std::move(*s.timeline);
  if (s.diagnosis) r.diagnosis = std::move(*s.diagnosis);
  s.timeline.reset();
  s.diagnosis.reset();
  r.snapshot = std::move(s);
  return r;
}

}  // namespace vramdoc::report
