// findings_phases: where the time of windowed `profview findings` goes, one trace at a time: the
// read floor (decoding only), the windowed read with no analysis (trace_windows.h), the plan
// read and the run read of WindowedFindings (windowed_findings.h). Prints key=value lines.
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
  auto reader = libprof::TraceReader::Open(path);
  if (!reader) {
    std::fprintf(stderr, "findings_phases: %s\n", reader.error().c_str());
    return 1;
  }
  libprof::TraceRecords chunk;
  uint64_t records = 0;
  while ((*reader)->Next(&chunk)) records += chunk.RecordCount();
  std::printf("records=%llu floor_s=%.3f workers=%zu\n", static_cast<unsigned long long>(records),
              Since(begin), libprof::analysis::AnalysisWorkers());

  libprof::analysis::WindowLimits limits;
  limits.call_stacks = true;
  limits.hold_pageable_pairs = true;
  begin = std::chrono::steady_clock::now();
  auto read = libprof::analysis::ReadInWindows(path, limits,
                                               [](const libprof::analysis::ProcessTrace&) {});
  if (!read) return 1;
  std::printf("windows=%zu exact=%d windowed_read_s=%.3f\n", read->windows, read->exact ? 1 : 0,
              Since(begin));

  begin = std::chrono::steady_clock::now();
  auto plan = WindowedFindings::Plan(path, {});
  if (!plan) return 1;
  std::printf("plan_s=%.3f exact=%d\n", Since(begin), plan->exact() ? 1 : 0);
  if (!plan->exact()) return 0;
  begin = std::chrono::steady_clock::now();
  uint64_t findings = 0;
  if (!plan->Run([&](libprof::analysis::Finding&&, uint64_t) { ++findings; })) return 1;
  std::printf("findings=%llu run_s=%.3f\n", static_cast<unsigned long long>(findings),
              Since(begin));
  return 0;
}
