// A job as its processes: each process on each GPU has its own series and verdict (the
// classifier on that series, against that GPU's capacity); the job's verdict is the worst of
// them. Several files (one per node) are one job, their time axes aligned by each file's
// wall-clock start. Method: docs/run-analyze.md, "Several processes, several GPUs".
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/diagnosis.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// One process's own timeline: its series, its marks, its GPU's capacity.
struct ProcessTimeline {
  ProcessInfo who;
  std::string gpu_uuid;  // empty when unknown
  Timeline timeline;
};

// The processes of one recording. A recording without per-process series (version 1, the
// shared JSON) is one "process": the whole job, `gpu` empty. Each process gets its own step
// marks (those the step hook tagged with its pid; the job's untagged step marks when it has
// none), and the job's OOM messages go to the one process that ran out (the highest peak against
// its GPU's capacity); t is shifted by `shift_seconds`.
std::vector<ProcessTimeline> split_by_process(const Timeline& tl, double shift_seconds = 0);

// The processes of several recordings of one job (one per node), on one time axis: each file's
// t is shifted by its wall-clock start minus the earliest. `notes` says when a file has no start
// (version 1) and was put at 0. Ordered by rank, then host and pid.
std::vector<ProcessTimeline> job_processes(const std::vector<Timeline>& files, std::vector<std::string>& notes);

// One process's verdict.
struct ProcessVerdict {
  ProcessInfo who;
  std::string gpu_uuid;
  Diagnosis diagnosis;
};

// The per-process section of a report (a plain struct a report holds and renders).
struct JobVerdicts {
  Verdict verdict = Verdict::Inconclusive;  // the worst definite verdict; inconclusive only when all are
  std::string summary;  // e.g. "rank 1 (pid 4242, GPU 1) leaks 62.50 MiB per step; rank 0 stable"
  std::vector<ProcessVerdict> processes;  // in the order of the input (job_processes: by rank)
  std::optional<std::size_t> worst;       // the process whose verdict is the job's
  std::vector<std::string> notes;         // alignment of several files, OOM attribution, the other processes
  // Processes besides the training loops that accumulate (started one after another, none exiting
  // while the job runs): the job's verdict is then a leak of processes (job_accounting.cpp).
  std::string accumulating;               // the sentence; empty when they do not
};

// The processes of a job besides its training loops (the series with unit marks; of a pid with
// several series, its largest): DataLoader workers and helpers that made a CUDA context, a rank's
// stray context on another GPU. `loops` and `others` index `processes`.
struct OtherProcesses {
  std::vector<std::size_t> loops, others;
  std::string note;         // "besides the training loop (pid 544), 3 processes hold device memory: ..."; empty when none
  std::string accumulating; // set when they accumulate (at least 3 arrivals a second or more apart, none gone before the loops end)
};
OtherProcesses other_processes(const std::vector<ProcessTimeline>& processes);

// Classifies every process; the job's verdict and summary from theirs.
JobVerdicts judge_processes(const std::vector<ProcessTimeline>& processes);

// "rank 1 (pid 4242, GPU 1)", "pid 4242 (GPU 0)", "node2 rank 9 (pid 77, GPU 1)" with `with_host`.
std::string process_name(const ProcessInfo& who, bool with_host);
// Ranks or pids as compressed ranges: {0, 2, 3, 4, 7} -> "0, 2-4, 7".
std::string compress_ranges(std::vector<long> numbers);

// What a report shows for one or several recordings of a job: the timeline and diagnosis it
// charts and explains (the job itself when it is one process; otherwise the worst process, with
// the job's verdict as its summary) and, for several processes, each one's verdict.
struct JobJudgement {
  Timeline headline;
  Diagnosis diagnosis;
  std::optional<JobVerdicts> processes;  // set when the job has several processes or files
};

// Judges `files` (at least one) as one job. `trace`: what an allocation trace of the job says;
// it is weighed when the job is one process (a trace of several processes is the job's, not one
// process's: each is then judged on its own series).
JobJudgement judge_job(std::vector<Timeline> files, const std::optional<TraceEvidence>& trace = std::nullopt);

}  // namespace vramdoc::timeline
