// Proves that the structure check used by the export tests finds each kind of malformed
// timeline (so that its silence on the exports means something).
#include "tests/analysis/chrome_trace_check.h"

#include <gtest/gtest.h>

namespace libprof::analysis::testing {
namespace {

using Json = nlohmann::json;

// A document from the events given as JSON text, with names for pid 1, tids 1 and 2.
Json Doc(const std::string& events) {
  return Json::parse(
      R"({"displayTimeUnit":"ns","traceEvents":[
      {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t1"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"t2"}})" +
      (events.empty() ? "" : "," + events) + "]}");
}

TEST(ChromeTraceCheckTest, WellFormedDocumentPasses) {
  const Json doc = Doc(R"(
    {"ph":"X","name":"outer","pid":1,"tid":1,"ts":1.000,"dur":10.000},
    {"ph":"X","name":"inner","pid":1,"tid":1,"ts":2.000,"dur":3.000},
    {"ph":"s","name":"f","cat":"c","pid":1,"tid":1,"ts":2.000,"id":7},
    {"ph":"X","name":"gpu","pid":1,"tid":2,"ts":4.000,"dur":1.000},
    {"ph":"f","name":"f","cat":"c","pid":1,"tid":2,"ts":4.000,"id":7,"bp":"e"},
    {"ph":"b","name":"a","cat":"n","pid":1,"tid":1,"ts":1.000,"id":3},
    {"ph":"e","name":"a","cat":"n","pid":1,"tid":2,"ts":9.000,"id":3})");
  EXPECT_TRUE(CheckChromeTrace(doc).empty());
}

TEST(ChromeTraceCheckTest, FindsEachProblem) {
  auto problems = [](const std::string& events) { return CheckChromeTrace(Doc(events)); };
  // Partial overlap on one track.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},
                        {"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":5})")
                .size(),
            1u);
  // Time going back on a track.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":1},
                        {"ph":"i","name":"b","pid":1,"tid":1,"ts":3,"s":"t"})")
                .size(),
            1u);
  // Negative duration.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-1})").size(), 1u);
  // A flow start without its end, and an end without its start.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},
                        {"ph":"s","name":"f","pid":1,"tid":1,"ts":1,"id":1})")
                .size(),
            1u);
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},
                        {"ph":"f","name":"f","pid":1,"tid":1,"ts":1,"id":1,"bp":"e"})")
                .size(),
            1u);
  // A flow end outside any slice.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5},
                        {"ph":"s","name":"f","pid":1,"tid":1,"ts":1,"id":1},
                        {"ph":"f","name":"f","pid":1,"tid":2,"ts":1,"id":1,"bp":"e"})")
                .size(),
            1u);
  // An async begin without end.
  EXPECT_EQ(problems(R"({"ph":"b","name":"a","cat":"n","pid":1,"tid":1,"ts":1,"id":3})").size(),
            1u);
  // An unnamed track and an unnamed process.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"tid":9,"ts":1,"dur":1})").size(), 1u);
  EXPECT_EQ(problems(R"({"ph":"i","name":"a","pid":2,"tid":1,"ts":1,"s":"t"})").size(), 2u);
  // Missing members, and a document that is not a trace.
  EXPECT_EQ(problems(R"({"ph":"X","name":"a","pid":1,"ts":1,"dur":1})").size(), 1u);
  EXPECT_EQ(CheckChromeTrace(Json::parse(R"({"events":[]})")).size(), 1u);
}

}  // namespace
}  // namespace libprof::analysis::testing
