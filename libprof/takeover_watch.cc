#include "libprof/takeover_watch.h"

namespace libprof {

TakeoverWatch::Verdict TakeoverWatch::Tick(uint64_t buffers, uint64_t launches, bool capturing) {
  if (reported_) return {};
  const bool buffer_came = buffers != buffers_seen_;
  buffers_seen_ = buffers;
  if (!capturing || buffer_came) {
    counting_ = false;  // CUPTI still serves us, or nothing is due: nothing to watch
    silent_ticks_ = 0;
  } else if (!counting_) {
    counting_ = true;  // quiet: from now on, see whether launches go unrecorded
    silent_ticks_ = 0;
  } else if (launches > launches_seen_) {
    if (silent_ticks_++ == 0) launches_at_silence_ = launches_seen_;
  } else {
    silent_ticks_ = 0;  // a quiet program, not a lost one
  }
  launches_seen_ = launches;
  if (silent_ticks_ < kSilentTicks) return {.count_launches = counting_};
  reported_ = true;
  counting_ = false;
  return {.taken_over = true, .missed_launches = launches - launches_at_silence_};
}

}  // namespace libprof
