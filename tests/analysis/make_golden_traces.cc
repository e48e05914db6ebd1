// Writes the synthetic traces of scenarios.h (plus an empty, a truncated and a corrupt file)
// into the directory given as argv[1], for the golden tests of the profview CLI.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/analysis/scenarios.h"

namespace t = libprof::analysis::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_golden_traces DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  t::Nrm2Scenario().Write(dir + "/nrm2.pb");
  t::StreamsScenario().Write(dir + "/streams.pb");
  t::ThreadsScenario().Write(dir + "/threads.pb");
  t::IdleScenario().Write(dir + "/idle.pb", 16 << 10);
  t::HostOnlyScenario().Write(dir + "/hostonly.pb");
  t::LaunchBoundScenario().Write(dir + "/launch_bound.pb");
  t::OverlapScenario().Write(dir + "/overlap.pb");
  t::TwoWayCopiesScenario().Write(dir + "/two_way_copies.pb");
  t::CallSitesScenario().Write(dir + "/callsites.pb");
  {
    const auto ranks = t::LateRankScenario();  // one file per rank, in a directory of their own
    std::filesystem::create_directories(dir + "/job");
    for (size_t r = 0; r < ranks.size(); ++r) {
      ranks[r].Write(dir + "/job/rank" + std::to_string(r) + ".pb");
    }
  }
  t::StartUpScenario().Write(dir + "/startup.pb");
  t::UnifiedMemoryScenario().Write(dir + "/unified_memory.pb");
  t::MemoryPoolScenario().Write(dir + "/memory_pools.pb");
  t::TraceBuilder empty(9191);
  empty.SetEnd(100);
  empty.Write(dir + "/empty.pb");
  // A second process for multi-file summaries: nrm2 again under another pid.
  t::TraceBuilder second = t::Nrm2Scenario();
  second.header().pid = 4343;
  second.header().rank = 1;  // as if launched by torchrun
  second.header().rank_source = "RANK";
  second.Write(dir + "/nrm2_b.pb");
  // Cut short: the idle trace (several chunks) without its last 100 bytes.
  {
    std::ifstream in(dir + "/idle.pb", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir + "/truncated.pb", std::ios::binary).write(bytes.data(), bytes.size() - 100);
    // Corrupt: a chunk whose bytes are garbage.
    std::string corrupt = bytes;
    for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 64; ++i) corrupt[i] = '\xff';
    std::ofstream(dir + "/corrupt.pb", std::ios::binary).write(corrupt.data(), corrupt.size());
  }
  // profview diff and check: a training loop at two lengths, and with a blocking read-back.
  t::TrainingStepsScenario(10, false).Write(dir + "/steps_10.pb");
  t::TrainingStepsScenario(20, false).Write(dir + "/steps_20.pb");
  t::TrainingStepsScenario(10, true).Write(dir + "/steps_10_readback.pb");
  // Another program: no API, kernel or range name in common with the others.
  {
    t::TraceBuilder other(6060);
    other.Api("cuInit", 1, 2);
    other.Api("cuDeviceGet", 3, 4);
    other.SetEnd(10);
    other.Write(dir + "/other_program.pb");
  }
  // Rank 0 of the job whose rank 1 is nrm2_b.pb: diff pairs processes by rank.
  {
    t::TraceBuilder rank0 = t::Nrm2Scenario();
    rank0.header().rank = 0;
    rank0.header().rank_source = "RANK";
    rank0.Write(dir + "/nrm2_rank0.pb");
  }
  {
    // A trace of a schema this profview does not read: the header's schema_version (field 2,
    // varint 1: the bytes 0x10 0x01, the first such pair of the file) set to 99.
    std::ifstream in(dir + "/nrm2.pb", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find("\x10\x01");
    if (at == std::string::npos || at > 64) {
      std::cerr << "make_golden_traces: no schema version in nrm2.pb's header\n";
      return 1;
    }
    bytes[at + 1] = 99;
    std::ofstream(dir + "/future_schema.pb", std::ios::binary).write(bytes.data(), bytes.size());
  }
  std::ofstream(dir + "/not_a_trace.pb") << "hello, this is not a trace\n";
  return 0;
}
