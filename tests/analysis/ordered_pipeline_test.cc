// Proves the ordered pipeline (analysis/model/ordered_pipeline.h): items are finished on the
// caller's thread in the order they were submitted while their work runs on several threads at
// once; each item's turn runs in order, and so do another chain's steps of the items that
// take one; no more than workers + 1 items are in flight; one worker runs everything on the
// caller's thread; an exception from a work, a turn or a finish reaches the caller (after the
// workers are joined) without hanging.
#include "analysis/model/ordered_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace libprof::analysis {
namespace {

using namespace std::chrono_literals;

struct Item {
  int number = 0;
  int work_result = -1;  // set by the work
  int turn_seen = -1;    // the count of turns taken before this item's
};

TEST(OrderedPipelineTest, FinishesInSubmissionOrderWhileWorkRunsOnSeveralThreads) {
  for (size_t workers : {2, 3, 8}) {
    SCOPED_TRACE(workers);
    std::atomic<int> running{0}, most_running{0}, started{0}, finished{0}, most_in_flight{0};
    int turns = 0;  // touched in turns only
    std::vector<int> then_order;  // touched in the second chain's steps only
    std::vector<int> order;
    const std::thread::id caller = std::this_thread::get_id();
    bool finished_on_caller = true;
    auto raise = [](std::atomic<int>& most, int now) {
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
    };
    {
      OrderedPipeline<Item> pipeline(
          workers,
          [&](Item& item, PipelineTurn& turn) {
            raise(most_in_flight, ++started - finished.load());
            raise(most_running, ++running);
            // Uneven work, so that items end out of order; the first few wait (a second at
            // most) for another item to run beside them.
            std::mt19937 rng(item.number);
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
            for (int i = 0; i < 1000 && item.number < 4 && most_running.load() < 2; ++i) {
              std::this_thread::sleep_for(1ms);
            }
            turn([&] { item.turn_seen = turns++; });
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1000));
            item.work_result = item.number * 10;
            // Another chain, taken by two items of three: in order among those.
            if (item.number % 3 != 0) turn([&] { then_order.push_back(item.number); }, 2);
            --running;
          },
          [&](Item& item) {
            finished_on_caller = finished_on_caller && std::this_thread::get_id() == caller;
            EXPECT_EQ(item.work_result, item.number * 10);
            EXPECT_EQ(item.turn_seen, item.number);
            order.push_back(item.number);
            ++finished;
          });
      for (int i = 0; i < 40; ++i) pipeline.Submit(Item{.number = i});
      pipeline.Drain();
    }
    std::vector<int> expected(40);
    for (int i = 0; i < 40; ++i) expected[i] = i;
    EXPECT_EQ(order, expected);
    std::vector<int> expected_then;
    for (int i = 0; i < 40; ++i) {
      if (i % 3 != 0) expected_then.push_back(i);
    }
    EXPECT_EQ(then_order, expected_then);
    EXPECT_TRUE(finished_on_caller);
    EXPECT_GE(most_running.load(), 2);  // several at once
    EXPECT_LE(most_running.load(), static_cast<int>(workers));
    EXPECT_LE(most_in_flight.load(), static_cast<int>(workers) + 1);
  }
}

TEST(OrderedPipelineTest, OneWorkerRunsEachItemWholeOnTheCallersThread) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::string> log;
  OrderedPipeline<Item> pipeline(
      1,
      [&](Item& item, PipelineTurn& turn) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        log.push_back("work " + std::to_string(item.number));
        turn([&] { log.push_back("turn " + std::to_string(item.number)); });
      },
      [&](Item& item) { log.push_back("finish " + std::to_string(item.number)); });
  for (int i = 0; i < 2; ++i) pipeline.Submit(Item{.number = i});
  pipeline.Drain();
  EXPECT_EQ(log, (std::vector<std::string>{"work 0", "turn 0", "finish 0", "work 1", "turn 1",
                                           "finish 1"}));
}

// Submits `items` to a pipeline of `workers`, the work (or turn, or finish) of item `failing`
// throwing; returns what reached the caller ("" when nothing did) and the items finished.
struct Outcome {
  std::string error;
  std::vector<int> finished;
};
enum class FailIn { kWork, kTurn, kFinish };
Outcome RunFailing(size_t workers, int items, int failing, FailIn where) {
  Outcome out;
  try {
    OrderedPipeline<Item> pipeline(
        workers,
        [&](Item& item, PipelineTurn& turn) {
          if (where == FailIn::kWork && item.number == failing) throw std::runtime_error("work");
          turn([&] {
            if (where == FailIn::kTurn && item.number == failing) throw std::runtime_error("turn");
          });
        },
        [&](Item& item) {
          if (where == FailIn::kFinish && item.number == failing) {
            throw std::runtime_error("finish");
          }
          out.finished.push_back(item.number);
        });
    for (int i = 0; i < items; ++i) pipeline.Submit(Item{.number = i});
    pipeline.Drain();
  } catch (const std::runtime_error& e) {
    out.error = e.what();
  }
  return out;
}

TEST(OrderedPipelineTest, AnExceptionReachesTheCallerAndNoThreadHangs) {
  for (size_t workers : {1, 2, 4}) {
    for (int failing : {0, 3, 19}) {
      SCOPED_TRACE(std::to_string(workers) + " workers, item " + std::to_string(failing));
      for (auto [where, what] : {std::pair{FailIn::kWork, "work"}, std::pair{FailIn::kTurn, "turn"},
                                 std::pair{FailIn::kFinish, "finish"}}) {
        const Outcome out = RunFailing(workers, 20, failing, where);
        EXPECT_EQ(out.error, what);
        // Items before the failing one may be finished, in order; none after it.
        for (size_t i = 0; i < out.finished.size(); ++i) EXPECT_EQ(out.finished[i], int(i));
        EXPECT_LE(out.finished.size(), static_cast<size_t>(failing));
      }
    }
  }
  const Outcome fine = RunFailing(4, 20, -1, FailIn::kWork);
  EXPECT_EQ(fine.error, "");
  EXPECT_EQ(fine.finished.size(), 20u);
}

TEST(OrderedPipelineTest, AnalysisWorkersFollowsProfviewThreads) {
  const char* before = std::getenv("PROFVIEW_THREADS");
  const std::string saved = before ? before : "";
  setenv("PROFVIEW_THREADS", "3", 1);
  EXPECT_EQ(AnalysisWorkers(), 3u);
  setenv("PROFVIEW_THREADS", "1", 1);
  EXPECT_EQ(AnalysisWorkers(), 1u);
  setenv("PROFVIEW_THREADS", "lots", 1);  // not a number: the default
  const size_t fallback = AnalysisWorkers();
  unsetenv("PROFVIEW_THREADS");
  EXPECT_EQ(fallback, AnalysisWorkers());
  EXPECT_GE(AnalysisWorkers(), 1u);
  EXPECT_LE(AnalysisWorkers(), 8u);
  if (before) setenv("PROFVIEW_THREADS", saved.c_str(), 1);
}

}  // namespace
}  // namespace libprof::analysis
