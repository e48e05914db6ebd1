#include "libprof/settings.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace libprof {
namespace {

Settings Parse(const std::map<std::string, std::string>& env, std::vector<std::string>* warnings) {
  return ParseSettings(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

// Proves the defaults hold when nothing is set, and that no warning is given then.
TEST(SettingsTest, DefaultsWithEmptyEnvironment) {
  std::vector<std::string> warnings;
  Settings s = Parse({}, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(s.output, "libprof-%p.pb");
  EXPECT_EQ(s.flush_interval_ms, 1000u);
  EXPECT_EQ(s.buffer_size_kb, 8192u);
  EXPECT_TRUE(s.kinds.kernels);
  EXPECT_TRUE(s.kinds.nvtx);
  EXPECT_FALSE(s.kinds.graph_trace);
  // On by default: the session enables it only at the first use of managed memory.
  EXPECT_TRUE(s.kinds.uvm);
  EXPECT_EQ(s.api_filter, ApiFilter::kSignificant);
}

// Proves valid values of every variable are taken.
TEST(SettingsTest, ValidValuesAreTaken) {
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_OUTPUT", "/tmp/x-%p.pb"},
                      {"LIBPROF_FLUSH_INTERVAL_MS", "250"},
                      {"LIBPROF_BUFFER_SIZE_KB", "1024"},
                      {"LIBPROF_BUFFER_POOL", "2"},
                      {"LIBPROF_MAX_BUFFERS", "8"},
                      {"LIBPROF_FORCE_OVERWRITE", "yes"},
                      {"LIBPROF_WATCH_TAKEOVER", "0"},
                      {"LIBPROF_LOG_LEVEL", "debug"},
                      {"LIBPROF_API_FILTER", "all"},
                      {"LIBPROF_TRACE", "kernel,memcpy,nvtx"}},
                     &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(s.output, "/tmp/x-%p.pb");
  EXPECT_EQ(s.flush_interval_ms, 250u);
  EXPECT_EQ(s.buffer_size_kb, 1024u);
  EXPECT_EQ(s.buffer_pool, 2u);
  EXPECT_EQ(s.max_buffers, 8u);
  EXPECT_TRUE(s.force_overwrite);
  EXPECT_FALSE(s.watch_takeover);
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.api_filter, ApiFilter::kAll);
  EXPECT_TRUE(s.kinds.kernels);
  EXPECT_TRUE(s.kinds.memcpy);
  EXPECT_TRUE(s.kinds.nvtx);
  EXPECT_FALSE(s.kinds.runtime_api);
  EXPECT_FALSE(s.kinds.memset);
}

// Proves each bad value gets one warning naming the variable, and the default is kept.
TEST(SettingsTest, BadValuesWarnAndKeepDefaults) {
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_FLUSH_INTERVAL_MS", "soon"},
                      {"LIBPROF_BUFFER_SIZE_KB", "-5"},
                      {"LIBPROF_BUFFER_POOL", "99999999999999999999"},
                      {"LIBPROF_FORCE_OVERWRITE", "maybe"},
                      {"LIBPROF_LOG_LEVEL", "loud"},
                      {"LIBPROF_API_FILTER", "some"},
                      {"LIBPROF_TRACE", "kernel,bogus"}},
                     &warnings);
  ASSERT_EQ(warnings.size(), 7u);
  Settings defaults;
  EXPECT_EQ(s.flush_interval_ms, defaults.flush_interval_ms);
  EXPECT_EQ(s.buffer_size_kb, defaults.buffer_size_kb);
  EXPECT_EQ(s.buffer_pool, defaults.buffer_pool);
  EXPECT_EQ(s.force_overwrite, defaults.force_overwrite);
  EXPECT_EQ(s.log_level, "warn");
  EXPECT_EQ(s.api_filter, ApiFilter::kSignificant);
  EXPECT_TRUE(s.kinds.runtime_api);  // the whole default set, not a partial parse
  for (const char* name : {"LIBPROF_FLUSH_INTERVAL_MS", "LIBPROF_BUFFER_SIZE_KB",
                           "LIBPROF_BUFFER_POOL", "LIBPROF_FORCE_OVERWRITE", "LIBPROF_LOG_LEVEL",
                           "LIBPROF_API_FILTER", "LIBPROF_TRACE"}) {
    bool named = false;
    for (const auto& w : warnings) named |= w.find(name) != std::string::npos;
    EXPECT_TRUE(named) << name;
  }
}

// Proves out-of-range numbers are refused (a 1-byte buffer or a 0 ms flush would break capture).
TEST(SettingsTest, OutOfRangeNumbersAreRefused) {
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_BUFFER_SIZE_KB", "1"}, {"LIBPROF_FLUSH_INTERVAL_MS", "0"}},
                     &warnings);
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(s.buffer_size_kb, 8192u);
  EXPECT_EQ(s.flush_interval_ms, 1000u);
}

// Proves "cuda" selects every CUDA kind without NVTX, and "all" adds NVTX.
TEST(SettingsTest, TraceGroups) {
  std::vector<std::string> warnings;
  Settings cuda = Parse({{"LIBPROF_TRACE", "cuda"}}, &warnings);
  EXPECT_TRUE(cuda.kinds.kernels && cuda.kinds.memcpy && cuda.kinds.runtime_api);
  EXPECT_FALSE(cuda.kinds.nvtx);
  Settings all = Parse({{"LIBPROF_TRACE", "all"}}, &warnings);
  EXPECT_TRUE(all.kinds.nvtx && all.kinds.kernels);
  Settings with_graph = Parse({{"LIBPROF_TRACE", "cuda,nvtx,graph"}}, &warnings);
  EXPECT_TRUE(with_graph.kinds.graph_trace && with_graph.kinds.nvtx && with_graph.kinds.kernels);
  // uvm is a CUDA kind: in both aliases, and alone without the others.
  EXPECT_TRUE(all.kinds.uvm && cuda.kinds.uvm);
  Settings only_uvm = Parse({{"LIBPROF_TRACE", "uvm"}}, &warnings);
  EXPECT_TRUE(only_uvm.kinds.uvm);
  EXPECT_FALSE(only_uvm.kinds.kernels || only_uvm.kinds.nvtx);
  EXPECT_TRUE(warnings.empty());
}

// Proves the kind list is one table (proto/capture_kinds.h): the words collect.sh checks against
// are exactly those the parser takes, an unknown one is refused naming them all, and the
// defaults and the header's spelling come from the same rows.
TEST(SettingsTest, TraceKindsComeFromOneTable) {
  EXPECT_EQ(CaptureKindWords(" "),
            "cuda all runtime driver kernel memcpy memset sync memory nvtx overhead graph uvm");
  std::vector<std::string> warnings;
  for (const CaptureKindName& kind : kCaptureKinds) {
    Settings s = Parse({{"LIBPROF_TRACE", kind.name}}, &warnings);
    EXPECT_EQ(s.ToMap()["LIBPROF_TRACE"], kind.name);
  }
  EXPECT_TRUE(warnings.empty());
  Parse({{"LIBPROF_TRACE", "kernel,bogus"}}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "LIBPROF_TRACE=kernel,bogus: unknown kind 'bogus' (known: cuda, all, runtime, driver, "
            "kernel, memcpy, memset, sync, memory, nvtx, overhead, graph, uvm); using the default set");
  EXPECT_EQ(Settings().ToMap()["LIBPROF_TRACE"],
            "runtime,driver,kernel,memcpy,memset,sync,memory,nvtx,overhead,uvm");
}

// Proves LIBPROF_TRACE_LIST is read, and stays out of the header's settings (it is plumbing).
TEST(SettingsTest, TraceListIsReadNotRecorded) {
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_TRACE_LIST", "/tmp/list"}}, &warnings);
  EXPECT_EQ(s.trace_list, "/tmp/list");
  EXPECT_FALSE(s.ToMap().contains("LIBPROF_TRACE_LIST"));
}

// Proves the header's settings map reflects the parsed values.
TEST(SettingsTest, ToMapRoundsTrip) {
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_TRACE", "kernel,nvtx"}, {"LIBPROF_FLUSH_INTERVAL_MS", "50"}},
                     &warnings);
  auto map = s.ToMap();
  EXPECT_EQ(map["LIBPROF_TRACE"], "kernel,nvtx");
  EXPECT_EQ(map["LIBPROF_FLUSH_INTERVAL_MS"], "50");
}

// Proves the capture-range syntax: the three forms are taken, anything else is refused.
TEST(SettingsTest, CaptureRanges) {
  CaptureRange range;
  std::string error;
  ASSERT_TRUE(ParseCaptureRange("cudaProfilerApi", &range, &error));
  EXPECT_EQ(range.kind, CaptureRange::Kind::kCudaProfilerApi);
  ASSERT_TRUE(ParseCaptureRange("nvtx:train step", &range, &error));
  EXPECT_EQ(range.kind, CaptureRange::Kind::kNvtx);
  EXPECT_EQ(range.nvtx_message, "train step");
  EXPECT_EQ(range.nvtx_domain, "");
  ASSERT_TRUE(ParseCaptureRange("nvtx:step@a@myapp", &range, &error));
  EXPECT_EQ(range.nvtx_message, "step@a");
  EXPECT_EQ(range.nvtx_domain, "myapp");
  for (const char* bad : {"nvtx:", "nvtx:@d", "nvtx:x@", "cudaprofilerapi", "range"}) {
    EXPECT_FALSE(ParseCaptureRange(bad, &range, &error)) << bad;
    EXPECT_EQ(range.kind, CaptureRange::Kind::kAlways);
  }
  std::vector<std::string> warnings;
  Settings s = Parse({{"LIBPROF_CAPTURE_RANGE", "nvtx:"}, {"LIBPROF_DELAY_MS", "1500"},
                      {"LIBPROF_DURATION_MS", "x"}},
                     &warnings);
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(s.capture_range, "");
  EXPECT_EQ(s.delay_ms, 1500u);
  EXPECT_EQ(s.duration_ms, 0u);
}

}  // namespace
}  // namespace libprof

namespace libprof {
namespace {

// Proves LIBPROF_BACKTRACE and LIBPROF_BACKTRACE_DEPTH: blocking and 32 by default, the three
// modes taken, a bad mode or depth warned about and replaced by the default, and the header map
// saying what was used.
TEST(SettingsTest, Backtrace) {
  std::vector<std::string> warnings;
  Settings defaults = Parse({}, &warnings);
  EXPECT_EQ(defaults.backtrace, BacktraceMode::kBlocking);
  EXPECT_EQ(defaults.backtrace_depth, 32u);
  EXPECT_EQ(defaults.ToMap()["LIBPROF_BACKTRACE"], "blocking");
  for (auto [text, mode] : {std::pair{"none", BacktraceMode::kNone},
                            std::pair{"all", BacktraceMode::kAll},
                            std::pair{"blocking", BacktraceMode::kBlocking}}) {
    Settings s = Parse({{"LIBPROF_BACKTRACE", text}, {"LIBPROF_BACKTRACE_DEPTH", "8"}}, &warnings);
    EXPECT_EQ(s.backtrace, mode) << text;
    EXPECT_EQ(s.backtrace_depth, 8u);
    EXPECT_EQ(s.ToMap()["LIBPROF_BACKTRACE"], text);
    EXPECT_EQ(s.ToMap()["LIBPROF_BACKTRACE_DEPTH"], "8");
  }
  EXPECT_TRUE(warnings.empty());
  Settings bad = Parse({{"LIBPROF_BACKTRACE", "some"}, {"LIBPROF_BACKTRACE_DEPTH", "0"}}, &warnings);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("LIBPROF_BACKTRACE=some"), std::string::npos);
  EXPECT_NE(warnings[1].find("LIBPROF_BACKTRACE_DEPTH=0"), std::string::npos);
  EXPECT_EQ(bad.backtrace, BacktraceMode::kBlocking);
  EXPECT_EQ(bad.backtrace_depth, 32u);
}

// Proves LIBPROF_PYTHON_FRAMES: on by default, 0 turns it off, and the header says which.
TEST(SettingsTest, PythonFrames) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(Parse({}, &warnings).python_frames);
  EXPECT_EQ(Parse({}, &warnings).ToMap()["LIBPROF_PYTHON_FRAMES"], "1");
  Settings off = Parse({{"LIBPROF_PYTHON_FRAMES", "0"}}, &warnings);
  EXPECT_FALSE(off.python_frames);
  EXPECT_EQ(off.ToMap()["LIBPROF_PYTHON_FRAMES"], "0");
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace libprof
