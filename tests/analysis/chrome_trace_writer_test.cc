// Proves the Chrome trace writer's exact output: microseconds with three decimals, escaping, the
// members each phase carries, the document's framing, and that a failed stream is reported.
#include "analysis/reports/chrome_trace_writer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace libprof::analysis {
namespace {

TEST(ChromeTraceWriterTest, FormatsMicrosWithNanosecondDecimals) {
  EXPECT_EQ(FormatMicros(0), "0.000");
  EXPECT_EQ(FormatMicros(1), "0.001");
  EXPECT_EQ(FormatMicros(1'234'567), "1234.567");
  EXPECT_EQ(FormatMicros(-1), "-0.001");
  EXPECT_EQ(FormatMicros(-2'000), "-2.000");
  EXPECT_EQ(FormatMicros(INT64_MIN), "-9223372036854775.808");
}

TEST(ChromeTraceWriterTest, ArgsAreEscapedJson) {
  EventArgs args;
  args.Add("s", "a\"b\\c\n\x01")
      .Add("u", uint64_t{18'446'744'073'709'551'615u})
      .Add("i", int64_t{-5})
      .Add("b", true)
      .Add("d", 0.5)
      .Add("nan", 0.0 / 0.0)
      .AddJson("raw", "[1,2]");
  EXPECT_EQ(args.Json(),
            R"({"s":"a\"b\\c\n\u0001","u":18446744073709551615,"i":-5,"b":true,"d":0.5,)"
            R"("nan":null,"raw":[1,2]})");
  EXPECT_EQ(EventArgs().Json(), "{}");
}

TEST(ChromeTraceWriterTest, WritesEachPhaseWithItsMembers) {
  std::ostringstream out;
  EventArgs other;
  other.Add("generator", "test");
  ChromeTraceWriter w(&out, other);
  EventArgs args;
  args.Add("bytes", uint64_t{4});
  w.Write(ChromeEvent::Metadata("thread_name", 1, 2, &args));
  w.Write(ChromeEvent::Complete("k\"", "kernel", 1, 2, 1'500, 250).WithColor("terrible"));
  w.Write(ChromeEvent::Instant("mark", "nvtx", 1, 2, 7).WithArgs(&args));
  w.Write(ChromeEvent::FlowStart("launch", "launch", 1, 2, 1'500, 9));
  w.Write(ChromeEvent::FlowEnd("launch", "launch", 1, 3, 2'000, 9));
  w.Write(ChromeEvent::AsyncBegin("r", "nvtx", 1, 2, 0, 4));
  w.Write(ChromeEvent::AsyncEnd("r", "nvtx", 1, 3, 5, 4));
  EXPECT_TRUE(w.Finish());
  EXPECT_EQ(w.events(), 7u);
  EXPECT_EQ(out.str(),
            R"({"displayTimeUnit":"ns","otherData":{"generator":"test"},"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"bytes":4}},
{"ph":"X","name":"k\"","cat":"kernel","pid":1,"tid":2,"ts":1.500,"dur":0.250,"cname":"terrible"},
{"ph":"i","name":"mark","cat":"nvtx","pid":1,"tid":2,"ts":0.007,"s":"t","args":{"bytes":4}},
{"ph":"s","name":"launch","cat":"launch","pid":1,"tid":2,"ts":1.500,"id":9},
{"ph":"f","name":"launch","cat":"launch","pid":1,"tid":3,"ts":2.000,"id":9,"bp":"e"},
{"ph":"b","name":"r","cat":"nvtx","pid":1,"tid":2,"ts":0.000,"id":4},
{"ph":"e","name":"r","cat":"nvtx","pid":1,"tid":3,"ts":0.005,"id":4}
]}
)");
}

TEST(ChromeTraceWriterTest, EmptyDocumentIsValid) {
  std::ostringstream out;
  ChromeTraceWriter w(&out, EventArgs());
  EXPECT_TRUE(w.Finish());
  EXPECT_EQ(out.str(), "{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[\n\n]}\n");
}

TEST(ChromeTraceWriterTest, FailedStreamIsReported) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  ChromeTraceWriter w(&out, EventArgs());
  w.Write(ChromeEvent::Instant("x", "", 1, 1, 0));
  EXPECT_FALSE(w.Finish());
}

}  // namespace
}  // namespace libprof::analysis
