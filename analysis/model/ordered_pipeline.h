// Analyses a sequence of items (the windows of a trace read in windows) several at once on
// worker threads, and finishes each on the caller's thread in the order they were given, so
// that what the caller hands on is what a sequential loop hands on:
//   work(item, turn)   on a worker, any number at once; `turn(step)` runs `step` once every
//                      earlier item's work has run its step or ended: one at a time, in order
//                      (a chain for the little state one item passes to the next);
//                      `turn(step, k)` the same in chain k (PipelineTurn::kChains of them, each
//                      in its own order, independent of the others'): for in-order passes that
//                      need what the work made after an earlier step, or that share nothing and
//                      so may run beside each other, on the workers instead of in `finish`;
//   finish(item)       on the caller's thread (in Submit or Drain), in the order of Submit.
// At most `workers + 1` items are submitted and not finished (memory holds that many windows).
// With one worker there is no thread: Submit runs work and finish at once, the sequential loop.
// An exception from work (or a step) stops the pipeline: the workers are joined and the first
// one is rethrown by the caller's next Submit or Drain; one from finish leaves through the
// caller, and the destructor joins the workers (each ends its item's work first).
//
// Layer: analysis/model/. The standard library only.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace libprof::analysis {

// Workers for the analyses that use several threads: PROFVIEW_THREADS when set to a positive
// number (1: none, the sequential path, as tests force it), else the machine's hardware threads,
// at most 8 (the windows in flight each hold a window's records, index and stream model).
size_t AnalysisWorkers();

// For a program that runs pipelines (profview), once at the start of main: glibc's malloc gives
// each thread an arena of its own, which keeps the memory of the windows that thread analysed
// after they are freed, so that the peak grows with the workers; two arenas keep it near one
// thread's (bench/README.md). MALLOC_ARENA_MAX, when set, decides instead.
void LimitMallocArenas();

class PipelineTurn {
 public:
  static constexpr size_t kChains = 5;
  // Runs `step` in item order in chain `chain` (see above), at most once per work and chain.
  void operator()(const std::function<void()>& step, size_t chain = 0);

 private:
  template <typename Item>
  friend class OrderedPipeline;
  struct Shared;
  struct Stopped {};  // thrown out of a step's wait when the pipeline stops: ends that work
  PipelineTurn(Shared* shared, uint64_t number) : shared_(shared), number_(number) {}
  Shared* shared_;  // null: sequential
  uint64_t number_;
  bool taken_[kChains] = {};
};

// The state the workers and the caller share, under one mutex; item numbers count from 0.
struct PipelineTurn::Shared {
  std::mutex mutex;
  std::condition_variable changed;
  // Per chain: the item whose step runs next, and passed[i - turn]: item i's step ran, or its
  // work ended.
  uint64_t turn[kChains] = {};
  std::deque<bool> passed[kChains];
  bool stopped = false;
  std::exception_ptr error;  // the first work's or step's

  // Item `number`'s step in `chain` ran or its work ended: that chain's turn moves past every
  // item so marked.
  void Pass(size_t chain, uint64_t number);
};

template <typename Item>
class OrderedPipeline {
 public:
  using Work = std::function<void(Item&, PipelineTurn&)>;
  using Finish = std::function<void(Item&)>;

  OrderedPipeline(size_t workers, Work work, Finish finish)
      : work_(std::move(work)), finish_(std::move(finish)), capacity_(workers + 1) {
    if (workers <= 1) return;
    threads_.reserve(workers);
    for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { Serve(); });
  }
  OrderedPipeline(const OrderedPipeline&) = delete;
  OrderedPipeline& operator=(const OrderedPipeline&) = delete;
  ~OrderedPipeline() { Stop(); }

  // Hands `item` to the workers; first finishes the oldest items while `workers + 1` are in
  // flight, and afterwards those already worked on.
  void Submit(Item item) {
    if (threads_.empty()) {  // sequential
      PipelineTurn turn(nullptr, 0);
      work_(item, turn);
      finish_(item);
      return;
    }
    std::unique_lock lock(shared_.mutex);
    while (slots_.size() >= capacity_) FinishOldest(lock);
    slots_.push_back(std::make_unique<Slot>(std::move(item), submitted_++));
    for (std::deque<bool>& passed : shared_.passed) passed.push_back(false);
    shared_.changed.notify_all();
    while (!slots_.empty() && (slots_.front()->done || shared_.error)) FinishOldest(lock);
  }
  // Finishes every item submitted.
  void Drain() {
    if (threads_.empty()) return;
    std::unique_lock lock(shared_.mutex);
    while (!slots_.empty()) FinishOldest(lock);
  }

 private:
  struct Slot {
    Slot(Item i, uint64_t n) : item(std::move(i)), number(n) {}
    Item item;
    uint64_t number;
    bool done = false;
  };
  // Called with the lock held; unlocks while `finish` runs.
  void FinishOldest(std::unique_lock<std::mutex>& lock) {
    shared_.changed.wait(lock, [&] { return slots_.front()->done || shared_.error; });
    if (shared_.error) {
      const std::exception_ptr error = shared_.error;
      lock.unlock();
      Stop();
      std::rethrow_exception(error);
    }
    std::unique_ptr<Slot> slot = std::move(slots_.front());
    slots_.pop_front();
    lock.unlock();
    finish_(slot->item);
    slot.reset();  // (its memory goes before the next item's is taken)
    lock.lock();
  }

  void Serve() {
    std::unique_lock lock(shared_.mutex);
    for (;;) {
      shared_.changed.wait(lock, [&] { return shared_.stopped || started_ < submitted_; });
      if (shared_.stopped) return;
      Slot& slot = *slots_[started_ - (submitted_ - slots_.size())];
      ++started_;
      lock.unlock();
      std::exception_ptr error;
      PipelineTurn turn(&shared_, slot.number);
      try {
        work_(slot.item, turn);
      } catch (const PipelineTurn::Stopped&) {
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !shared_.error) shared_.error = error;
      slot.done = true;
      for (size_t chain = 0; chain < PipelineTurn::kChains; ++chain) {
        if (!turn.taken_[chain]) shared_.Pass(chain, slot.number);
      }
      shared_.changed.notify_all();
    }
  }

  void Stop() {
    {
      std::lock_guard lock(shared_.mutex);
      shared_.stopped = true;
      shared_.changed.notify_all();
    }
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  Work work_;
  Finish finish_;
  const size_t capacity_;
  PipelineTurn::Shared shared_;
  std::deque<std::unique_ptr<Slot>> slots_;  // submitted, not finished: numbers front..
  uint64_t submitted_ = 0, started_ = 0;
  std::vector<std::thread> threads_;  // last: started once the rest is built
};

}  // namespace libprof::analysis
