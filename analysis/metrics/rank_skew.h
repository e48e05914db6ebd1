// Collectives across ranks: each instance matched on every rank that took part (same
// communicator, same sequence number, same operation), the ranks' clocks aligned on the moments
// they all leave a collective, and each rank's time in an instance split into waiting for the
// last rank to arrive and the transfer itself; the late rank of each instance, and per rank how
// often it made the others wait and for how long.
//
// Model. On every rank the collective's device work starts when its stream reaches it (the
// rank's arrival) and cannot finish before every rank has arrived; all ranks leave it at about
// the same moment. So, on aligned clocks: last = the latest arrival; a rank waited
// (last - its arrival) and transferred (its end - last); the late rank is the one that arrived
// last, late by (last - the latest other arrival); the others waited the sum of their waits.
//
// Clocks. Ranks on different hosts have clocks that disagree. The end of an instance is common
// to its ranks, so a rank's offset from the reference rank (the lowest) is the median, over the
// instances both took part in, of the difference of their ends; ranks that share no instance
// with the reference are aligned through a rank already aligned. The residual error is what is
// left: per rank, the root mean square and the largest distance of its aligned ends from each
// instance's mean end.
//
// Layer: analysis/metrics/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/model/collectives.h"

namespace libprof::analysis {

struct RankClock {
  size_t process = 0;      // index into the processes given
  uint32_t rank = 0;       // the process's rank (RankOf)
  int64_t offset_ns = 0;   // subtract from this process's times to get the reference's clock
  bool aligned = false;    // false: no instance shared with an aligned rank (offset 0)
  uint64_t instances = 0;  // matched instances it took part in
  double rms_residual_ns = 0;
  uint64_t max_residual_ns = 0;
};

struct InstanceMember {
  size_t process = 0;
  uint32_t rank = 0;
  size_t call = 0;           // index into that process's calls
  uint64_t arrive_ns = 0;    // aligned (reference clock)
  uint64_t end_ns = 0;       // aligned
  uint64_t wait_ns = 0;
  uint64_t transfer_ns = 0;
};

struct CollectiveInstance {
  std::string op{};
  uint64_t comm = 0;
  uint64_t seq = 0;
  uint64_t bytes = 0;  // the message (per rank) as NCCL gives it
  std::vector<InstanceMember> members{};  // by rank
  size_t late = 0;              // index into members: the rank that arrived last
  uint64_t late_by_ns = 0;      // its arrival minus the latest other arrival
  uint64_t others_wait_ns = 0;  // the waits of the other members, summed
};

// A call that could not be matched on every rank of its communicator: listed, not dropped.
struct UnmatchedCall {
  size_t process = 0;
  uint32_t rank = 0;
  std::string op{};
  uint64_t comm = 0;
  uint64_t seq = 0;
  std::string reason{};  // "seen on 3 of 4 ranks", "operation differs across ranks: ..."
};

struct StragglerRow {
  uint32_t rank = 0;
  size_t process = 0;
  uint64_t instances = 0;     // matched instances it took part in
  uint64_t late = 0;          // instances in which it arrived last by >= the threshold
  uint64_t late_by_ns = 0;    // summed over those
  uint64_t caused_wait_ns = 0;  // the others' waits in those
  uint64_t waited_ns = 0;     // its own waits, over every instance
  uint64_t transfer_ns = 0;   // its own transfers
};

struct RankSkewReport {
  std::vector<RankClock> clocks{};  // one per process
  std::vector<CollectiveInstance> instances{};  // in order of aligned arrival of the first rank
  std::vector<UnmatchedCall> unmatched{};
  std::vector<StragglerRow> stragglers{};  // by caused wait, largest first
  uint64_t max_residual_ns = 0;
};

// The rank a process goes by: its header's rank, else its rank in the first communicator that
// says, else its index among the processes given.
uint32_t RankOf(const ProcessCollectives& process, size_t index);

// `min_late_ns`: an instance counts against its late rank (stragglers' `late`) only when the
// rank was late by at least this much; below it, arrival order is noise.
RankSkewReport AnalyzeRankSkew(std::span<const ProcessCollectives> processes,
                               uint64_t min_late_ns);

}  // namespace libprof::analysis
