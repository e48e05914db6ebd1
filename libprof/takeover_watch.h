// Tells lost activity buffers from a quiet program: the takeover policy the recorder applies
// after each periodic flush (Recorder::CheckCapture), kept free of CUPTI so that it can be tested
// anywhere.
//
// Another CUPTI client that registers its own buffer callbacks silently takes every record from
// then on. The only sign is that launches go on while no buffer reaches us, and counting launches
// costs a CUPTI callback per launch (about 5% of libprof's cost in a launch-bound loop, bench/).
// So launches are counted only while buffers have stopped coming: a flush tick that delivered a
// buffer proves CUPTI still serves libprof, and a quiet program launches nothing to count.
//
// Layer: libprof/ (CUDA-free). Used from the writer thread only; not thread-safe.
#pragma once

#include <cstdint>

namespace libprof {

class TakeoverWatch {
 public:
  // Flush ticks in a row, while counting, that saw launches but delivered no buffer before the
  // watch concludes that another client took CUPTI's buffers. A flush with flag 0 delivers every
  // buffer whose records are complete, full or not, and API records are complete when the call
  // returns, so one silent tick is already unusual; three leave room for a stalled writer.
  static constexpr int kSilentTicks = 3;

  // Logged once, when the watch concludes.
  static constexpr const char* kWarning =
      "CUDA activity no longer reaches libprof: another CUPTI client in this process (such as "
      "torch.profiler) has taken over CUPTI's activity buffers, and CUPTI serves one client. "
      "libprof's trace has no CUDA activity from here on (NVTX ranges continue); the other "
      "client's own results are unaffected";

  struct Verdict {
    bool count_launches = false;  // whether launches should be counted until the next tick
    bool taken_over = false;      // reported once; the watch is over after it
    uint64_t missed_launches = 0;  // launches counted since the silence began
  };

  // Once per flush tick. `buffers`: buffers delivered to libprof so far; `launches`: launches
  // counted so far (only while count_launches was true); `capturing`: whether CUDA activity is
  // being recorded at all (capture ranges and time windows close it, and then nothing is due).
  Verdict Tick(uint64_t buffers, uint64_t launches, bool capturing);

 private:
  bool counting_ = false;
  bool reported_ = false;
  uint64_t buffers_seen_ = 0;
  uint64_t launches_seen_ = 0;
  uint64_t launches_at_silence_ = 0;
  int silent_ticks_ = 0;
};

}  // namespace libprof
