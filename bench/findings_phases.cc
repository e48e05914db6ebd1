// findings_phases: where the time of windowed `profview findings` goes, one trace at a time: the
// read floor (decoding only), the windowed read with no analysis (trace_windows.h; with the
// default windows, then with findings'), the plan read and the run read of WindowedFindings
// (windowed_findings.h). Prints key=value lines: each phase's wall time and the CPU time of all
// threads over it; for the windowed reads also the CPU time of the thread that cut them.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "analysis/model/ordered_pipeline.h"
#include "analysis/model/trace_windows.h"
#include "analysis/rules/windowed_findings.h"
#include "proto/trace_reader.h"

namespace {

double Since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// CPU seconds of all the process's threads so far (the reads run on several).
double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  using libprof::analysis::WindowedFindings;
  libprof::analysis::LimitMallocArenas();  // as profview
  if (argc != 2) {
    std::fputs("usage: findings_phases TRACE\n", stderr);
    return 2;
  }
  const std::string path = argv[1];
  auto begin = std::chrono::steady_clock::now();
  double cpu = CpuSeconds();
  auto reader = libprof::TraceReader::Open(path);
  if (!reader) {
    std::fprintf(stderr, "findings_phases: %s\n", reader.error().c_str());
    return 1;
  }
  libprof::TraceRecords chunk;
  uint64_t records = 0;
  while ((*reader)->Next(&chunk)) records += chunk.RecordCount();
  std::printf("records=%llu floor_s=%.3f cpu_s=%.3f workers=%zu\n",
              static_cast<unsigned long long>(records), Since(begin), CpuSeconds() - cpu,
              libprof::analysis::AnalysisWorkers());

  libprof::analysis::WindowLimits limits;
  limits.call_stacks = true;
  limits.hold_pageable_pairs = true;
  begin = std::chrono::steady_clock::now();
  cpu = CpuSeconds();
  auto read = libprof::analysis::ReadInWindows(path, limits,
                                               [](const libprof::analysis::ProcessTrace&) {});
  if (!read) return 1;
  std::printf("windows=%zu exact=%d windowed_read_s=%.3f cpu_s=%.3f cutting_cpu_s=%.3f\n",
              read->windows, read->exact ? 1 : 0, Since(begin), CpuSeconds() - cpu,
              read->cutting_cpu_s);
  // The same with windowed findings' windows (windowed_findings.cc: 2^16 records), the size
  // both its reads cut.
  limits.cut_every_records = size_t{1} << 16;
  begin = std::chrono::steady_clock::now();
  cpu = CpuSeconds();
  read = libprof::analysis::ReadInWindows(path, limits,
                                          [](const libprof::analysis::ProcessTrace&) {});
  if (!read) return 1;
  std::printf("findings_windows=%zu exact=%d windowed_read_s=%.3f cpu_s=%.3f cutting_cpu_s=%.3f\n",
              read->windows, read->exact ? 1 : 0, Since(begin), CpuSeconds() - cpu,
              read->cutting_cpu_s);

  begin = std::chrono::steady_clock::now();
  cpu = CpuSeconds();
  auto plan = WindowedFindings::Plan(path, {});
  if (!plan) return 1;
  std::printf("plan_s=%.3f cpu_s=%.3f exact=%d\n", Since(begin), CpuSeconds() - cpu,
              plan->exact() ? 1 : 0);
  if (!plan->exact()) return 0;
  begin = std::chrono::steady_clock::now();
  cpu = CpuSeconds();
  uint64_t findings = 0;
  if (!plan->Run([&](libprof::analysis::Finding&&, uint64_t) { ++findings; })) return 1;
  std::printf("findings=%llu run_s=%.3f cpu_s=%.3f\n", static_cast<unsigned long long>(findings),
              Since(begin), CpuSeconds() - cpu);
  return 0;
}
