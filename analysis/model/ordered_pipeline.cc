#include "analysis/model/ordered_pipeline.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace libprof::analysis {

size_t AnalysisWorkers() {
  if (const char* env = std::getenv("PROFVIEW_THREADS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return std::min<size_t>(n, 64);
  }
  // Eight: the run read's analysis scaled to about that on the 16-core device host, and each
  // window in flight holds its records, index and stream model (bench/README.md).
  return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
}

void LimitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
}

void PipelineTurn::operator()(const std::function<void()>& step, size_t chain) {
  if (shared_ == nullptr) {  // sequential: every earlier item is finished
    step();
    return;
  }
  {
    std::unique_lock lock(shared_->mutex);
    shared_->changed.wait(lock, [&] {
      return shared_->turn[chain] == number_ || shared_->stopped || shared_->error != nullptr;
    });
    // Once a work or a step threw, no later step runs (a sink called in a step after it threw
    // would see findings handed on past the failure).
    if (shared_->turn[chain] != number_ || shared_->stopped || shared_->error != nullptr) {
      throw Stopped{};
    }
  }
  step();
  std::lock_guard lock(shared_->mutex);
  taken_[chain] = true;
  shared_->Pass(chain, number_);
  shared_->changed.notify_all();
}

void PipelineTurn::Shared::Pass(size_t chain, uint64_t number) {
  std::deque<bool>& chain_passed = passed[chain];
  chain_passed[number - turn[chain]] = true;
  while (!chain_passed.empty() && chain_passed.front()) {
    chain_passed.pop_front();
    ++turn[chain];
  }
}

}  // namespace libprof::analysis
