// Tests of libprof/backtrace/: stack walking past the profiler's own frames, interning, and
// symbolisation (module, build id, offsets, demangled names, static functions) against a test
// library with known functions and a fixed build id.
#include <dlfcn.h>
#include <sys/mman.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "libprof/backtrace/blocking_apis.h"
#include "libprof/backtrace/call_site_recorder.h"
#include "libprof/backtrace/perf_map.h"
#include "libprof/backtrace/python_frame_table.h"
#include "libprof/backtrace/python_frames.h"
#include "libprof/backtrace/stack_table.h"
#include "libprof/backtrace/stack_walker.h"
#include "libprof/backtrace/symbolizer.h"

namespace callsite_test {
int Outer(void (*probe)(void*), void* arg);
}

namespace libprof {
namespace {

// The build id given to libcallsite_test_lib.so by its link options.
constexpr const char* kLibraryBuildId = "0123456789abcdef00112233";

struct Capture {
  SkipRanges skip;
  std::vector<uintptr_t> pcs;
  CallSiteRecorder* recorder = nullptr;
  uint64_t correlation_id = 0;
};

// Called from inside the test library, as CUPTI's callback is called from inside CUDA.
void Probe(void* arg) {
  auto* capture = static_cast<Capture*>(arg);
  if (capture->recorder != nullptr) {
    capture->recorder->OnApiEnter(capture->correlation_id);
    return;
  }
  uintptr_t pcs[64];
  const size_t n = WalkStack(capture->skip, pcs, 64);
  capture->pcs.assign(pcs, pcs + n);
}

// A static function of the test program: named only by the executable's .symtab.
static __attribute__((noinline, noipa)) int CallThroughLibrary(Capture* capture) {
  const int r = callsite_test::Outer(&Probe, capture);
  asm volatile("" ::: "memory");
  return r;
}

SkipRanges OwnCode() {
  SkipRanges skip;
  for (const AddressRange& r : OwnCodeRanges()) skip.Add(r);
  return skip;
}

std::string Basename(const std::string& path) { return std::filesystem::path(path).filename(); }

// Proves the walk drops the leading frames in the skip ranges (here the test program, standing
// for libprof) and keeps the library's and the outer frames of the program, innermost first,
// and that each frame is symbolised: module, build id, offsets, demangled names, including a
// static function of the library and one of the program that dladdr cannot name.
TEST(BacktraceTest, WalkSkipsOwnFramesAndSymbolises) {
  Capture capture;
  capture.skip = OwnCode();
  ASSERT_GT(capture.skip.count, 0u);
  CallThroughLibrary(&capture);
  ASSERT_GE(capture.pcs.size(), 3u);

  Symbolizer symbolizer;
  const SymbolizedFrame hop = symbolizer.Symbolize(capture.pcs[0]);
  const SymbolizedFrame outer = symbolizer.Symbolize(capture.pcs[1]);
  const SymbolizedFrame caller = symbolizer.Symbolize(capture.pcs[2]);

  EXPECT_EQ(hop.function, "StaticHop(void (*)(void*), void*, int)");
  EXPECT_EQ(outer.function, "callsite_test::Outer(void (*)(void*), void*)");
  EXPECT_EQ(caller.function, "libprof::(anonymous namespace)::CallThroughLibrary("
                             "libprof::(anonymous namespace)::Capture*)");
  for (const SymbolizedFrame* f : {&hop, &outer}) {
    EXPECT_TRUE(f->has_module);
    EXPECT_EQ(Basename(f->module_path), "libcallsite_test_lib.so");
    EXPECT_EQ(f->build_id, kLibraryBuildId);
    EXPECT_FALSE(f->executable);
    EXPECT_GT(f->function_offset, 0u);  // a return address lies after the function's start
    EXPECT_LT(f->function_offset, 256u);
  }
  // Offsets checked against the loader's own view of Outer: module offset minus the offset in
  // the function is Outer's address relative to the library's load base.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&callsite_test::Outer), &info), 0);
  EXPECT_EQ(outer.module_offset - outer.function_offset,
            reinterpret_cast<uintptr_t>(&callsite_test::Outer) -
                reinterpret_cast<uintptr_t>(info.dli_fbase));
  // The static function: dladdr (exported symbols only) does not name it; .symtab does.
  Dl_info hop_info{};
  dladdr(reinterpret_cast<void*>(capture.pcs[0] - 1), &hop_info);
  EXPECT_TRUE(hop_info.dli_sname == nullptr ||
              std::string(hop_info.dli_sname).find("StaticHop") == std::string::npos);
  // The program's frame: the executable, found through /proc/self/exe.
  EXPECT_TRUE(caller.executable);
  EXPECT_EQ(caller.module_path, std::filesystem::canonical("/proc/self/exe").string());
  EXPECT_FALSE(caller.build_id.empty());
}

// Proves the same call site always interns to the same stack and another to another, that the
// recorder hands the pairs over once, and that Symbolize writes each stack, frame and module once
// with names interned.
TEST(BacktraceTest, RecorderInternsAndSymbolises) {
  CallSiteRecorder recorder(16, OwnCode());
  Capture capture;
  capture.recorder = &recorder;
  volatile uint64_t calls = 3;  // a bound the compiler cannot unroll: one call site
  for (uint64_t corr = 1; corr <= calls; ++corr) {
    capture.correlation_id = corr;
    CallThroughLibrary(&capture);
  }
  capture.correlation_id = 4;
  callsite_test::Outer(&Probe, &capture);  // another call site
  std::vector<CallSitePair> pairs;
  recorder.TakePairs(&pairs);
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[0].second, pairs[1].second);
  EXPECT_EQ(pairs[0].second, pairs[2].second);
  EXPECT_NE(pairs[0].second, pairs[3].second);
  recorder.TakePairs(&pairs);
  EXPECT_TRUE(pairs.empty());

  StringInterner strings;
  TraceRecords out;
  recorder.TakeNewStacks(strings, &out, /*final=*/true);
  ASSERT_EQ(out.call_stacks.size(), 2u);
  for (const CallStack& stack : out.call_stacks) {
    for (uint32_t frame_id : stack.frame_ids) {
      ASSERT_GE(frame_id, 1u);
      ASSERT_LE(frame_id, out.stack_frames.size());
      EXPECT_EQ(out.stack_frames[frame_id - 1].id, frame_id);
    }
  }
  std::vector<std::pair<uint32_t, std::string>> all;
  strings.CollectFrom(0, &all);
  auto named = [&](uint32_t id) {
    for (const auto& [i, s] : all) {
      if (i == id) return s;
    }
    return std::string();
  };
  const StackFrame& first = out.stack_frames[out.call_stacks[0].frame_ids[0] - 1];
  EXPECT_EQ(named(first.function_id), "StaticHop(void (*)(void*), void*, int)");
  ASSERT_GE(first.module_id, 1u);
  const StackModule& module = out.stack_modules[first.module_id - 1];
  EXPECT_EQ(Basename(named(module.path_id)), "libcallsite_test_lib.so");
  EXPECT_EQ(module.build_id, kLibraryBuildId);
  // Frames are shared: both stacks start with the same two library frames.
  EXPECT_EQ(out.call_stacks[0].frame_ids[0], out.call_stacks[1].frame_ids[0]);
  EXPECT_EQ(out.call_stacks[0].frame_ids[1], out.call_stacks[1].frame_ids[1]);
  // One module entry per module.
  for (size_t i = 0; i < out.stack_modules.size(); ++i) {
    for (size_t j = i + 1; j < out.stack_modules.size(); ++j) {
      EXPECT_NE(out.stack_modules[i].path_id, out.stack_modules[j].path_id);
    }
  }
  EXPECT_EQ(recorder.missed(), 0u);
}

// Proves the depth limit: a recorder of depth 1 keeps the innermost frame only.
TEST(BacktraceTest, DepthLimit) {
  CallSiteRecorder recorder(1, OwnCode());
  Capture capture;
  capture.recorder = &recorder;
  CallThroughLibrary(&capture);
  StringInterner strings;
  TraceRecords out;
  recorder.TakeNewStacks(strings, &out, /*final=*/true);
  ASSERT_EQ(out.call_stacks.size(), 1u);
  EXPECT_EQ(out.call_stacks[0].frame_ids.size(), 1u);
}

// Proves interning: equal address lists share an id, any difference (an address, the length)
// gives another, and ids are dense from 1, also across the table's growth.
TEST(StackTableTest, EqualStacksShareIds) {
  StackTable table(100000, 8);
  const uintptr_t a[] = {1, 2, 3}, b[] = {1, 2, 4};
  EXPECT_EQ(table.Intern(a, 3), 1u);
  EXPECT_EQ(table.Intern(b, 3), 2u);
  EXPECT_EQ(table.Intern(a, 2), 3u);
  EXPECT_EQ(table.Intern(a, 3), 1u);
  EXPECT_EQ(table.Intern(a, 0), 0u);
  for (uintptr_t i = 0; i < 10000; ++i) {
    const uintptr_t s[] = {i, i * 7, 99};
    EXPECT_EQ(table.Intern(s, 3), 4 + i);
  }
  for (uintptr_t i = 0; i < 10000; i += 997) {
    const uintptr_t s[] = {i, i * 7, 99};
    EXPECT_EQ(table.Intern(s, 3), 4 + i);
  }
  const auto snapshot = table.Snapshot();
  ASSERT_EQ(snapshot.size(), 10003u);
  EXPECT_EQ(snapshot[1].pcs, (std::vector<uintptr_t>{1, 2, 4}));
  EXPECT_TRUE(snapshot[1].python.empty());
  EXPECT_EQ(table.Snapshot(10002).size(), 1u);  // the newest only
  EXPECT_TRUE(table.Snapshot(10003).empty());
  EXPECT_EQ(table.refused(), 0u);
}

// Proves the bounds: stacks past the depth are cut, and past the capacity a new stack gets 0
// and is counted while known stacks still resolve.
TEST(StackTableTest, Bounds) {
  StackTable table(2, 2);
  const uintptr_t a[] = {1, 2, 3}, b[] = {1, 2, 4}, c[] = {5}, d[] = {6};
  EXPECT_EQ(table.Intern(a, 3), 1u);
  EXPECT_EQ(table.Intern(b, 3), 1u);  // {1, 2} once cut to depth 2
  EXPECT_EQ(table.Intern(c, 1), 2u);
  EXPECT_EQ(table.Intern(d, 1), 0u);
  EXPECT_EQ(table.refused(), 1u);
  EXPECT_EQ(table.Intern(c, 1), 2u);
}

// Proves that the Python frames are part of a stack's identity: the same native frames with other
// Python frames (another line of the script) are another stack, and the lists come back apart.
TEST(StackTableTest, PythonFramesAreKeyed) {
  StackTable table(100, 8);
  const uintptr_t pcs[] = {1, 2, 3};
  const uint32_t line7[] = {1, 2}, line9[] = {3, 2};
  EXPECT_EQ(table.Intern(pcs, 3, line7, 2), 1u);
  EXPECT_EQ(table.Intern(pcs, 3, line9, 2), 2u);
  EXPECT_EQ(table.Intern(pcs, 3), 3u);
  EXPECT_EQ(table.Intern(pcs, 3, line7, 2), 1u);
  // The split between native and Python frames counts too, not only the values.
  const uintptr_t two[] = {1, 2};
  const uint32_t three[] = {3};
  const uint32_t python_only[] = {9};
  EXPECT_EQ(table.Intern(two, 2, three, 1), 4u);
  EXPECT_EQ(table.Intern(nullptr, 0, python_only, 1), 5u);  // a stack of Python frames only
  const auto snapshot = table.Snapshot();
  ASSERT_EQ(snapshot.size(), 5u);
  EXPECT_EQ(snapshot[1].pcs, (std::vector<uintptr_t>{1, 2, 3}));
  EXPECT_EQ(snapshot[1].python, (std::vector<uint32_t>{3, 2}));
  EXPECT_TRUE(snapshot[4].pcs.empty());
}

// Proves Python frames intern by content (file, function and line all count), survive the
// table's growth, and stop at the capacity with a count.
TEST(PythonFrameTableTest, InternsByContent) {
  PythonFrameTable table(5000);
  EXPECT_EQ(table.Intern("train.py", "step", 7), 1u);
  EXPECT_EQ(table.Intern("train.py", "step", 8), 2u);
  EXPECT_EQ(table.Intern("train.py", "stepx", 7), 3u);
  EXPECT_EQ(table.Intern("train.pys", "tep", 7), 4u);
  EXPECT_EQ(table.Intern(std::string("train.py"), std::string("step"), 7), 1u);
  for (uint32_t i = 0; i < 4000; ++i) EXPECT_EQ(table.Intern("m.py", "f", i), 5 + i);
  EXPECT_EQ(table.Intern("m.py", "f", 1234), 5u + 1234);
  EXPECT_EQ(table.Get(2), (PythonFrameTable::Frame{"train.py", "step", 8}));
  EXPECT_EQ(table.Get(0), PythonFrameTable::Frame{});
  PythonFrameTable small(1);
  EXPECT_EQ(small.Intern("a.py", "f", 1), 1u);
  EXPECT_EQ(small.Intern("a.py", "f", 2), 0u);
  EXPECT_EQ(small.refused(), 1u);
}

// Proves which interpreters the reader accepts: CPython 3.9 to 3.13 with a GIL, nothing else.
TEST(PythonFramesTest, VersionCheck) {
  for (const char* v : {"3.9.18 (main, Jan 1 2024)", "3.10.0", "3.11.2 (main, Apr 28 2025, 14:11:48) "
                        "[GCC 12.2.0]", "3.12.3", "3.13.1 (main)"}) {
    EXPECT_TRUE(CheckPythonVersion(v).supported) << v;
  }
  EXPECT_EQ(CheckPythonVersion("3.12.3").minor, 12);
  for (const char* v : {"3.8.10", "3.14.0", "2.7.18", "", "x.y", "3.", "3.13.0 experimental "
                        "free-threading build (main, Oct 7 2024)"}) {
    const PythonVersionCheck check = CheckPythonVersion(v);
    EXPECT_FALSE(check.supported) << v;
    EXPECT_FALSE(check.reason.empty()) << v;
  }
}

// Proves the test program itself, which embeds no Python, gets no reader (and so pays nothing).
TEST(PythonFramesTest, NoPythonNoReader) {
  EXPECT_EQ(PythonFrameReader::Find(), nullptr);
}

// Proves stacks are handed over as they come: each take returns only the stacks interned since
// the previous one, with only the frames not written before, and ids that continue.
TEST(BacktraceTest, NewStacksAreTakenOnce) {
  CallSiteRecorder recorder(16, OwnCode());
  Capture capture;
  capture.recorder = &recorder;
  CallThroughLibrary(&capture);
  StringInterner strings;
  TraceRecords first;
  recorder.TakeNewStacks(strings, &first, /*final=*/false);
  ASSERT_EQ(first.call_stacks.size(), 1u);
  EXPECT_EQ(first.call_stacks[0].id, 1u);
  TraceRecords none;
  recorder.TakeNewStacks(strings, &none, /*final=*/false);
  EXPECT_TRUE(none.call_stacks.empty());
  EXPECT_TRUE(none.stack_frames.empty());
  callsite_test::Outer(&Probe, &capture);  // another call site through the same library frames
  TraceRecords second;
  recorder.TakeNewStacks(strings, &second, /*final=*/true);
  ASSERT_EQ(second.call_stacks.size(), 1u);
  EXPECT_EQ(second.call_stacks[0].id, 2u);
  EXPECT_TRUE(second.stack_modules.empty() ||
              second.stack_modules[0].id > first.stack_modules.size());
  // The shared library frames were written with the first stack and are referred to by id.
  EXPECT_EQ(second.call_stacks[0].frame_ids[0], first.call_stacks[0].frame_ids[0]);
  EXPECT_LT(second.stack_frames.size(), second.call_stacks[0].frame_ids.size());
  for (const StackFrame& f : second.stack_frames) EXPECT_GT(f.id, first.stack_frames.size());
  // Final: noting has stopped.
  EXPECT_FALSE(recorder.enabled());
}

// Proves the perf-map parser: hex with or without 0x, names with spaces, bad lines skipped, by
// address, and the later of two symbols at one address kept.
TEST(PerfMapTest, Parses) {
  const auto symbols = ParsePerfMap(
      "7f0000002000 20 julia_foo_12\n"
      "0x7f0000001000 0x100 py::step:/home/u/train.py\n"
      "garbage\n"
      "7f0000003000 zz bad size\n"
      "7f0000004000 0 empty\n"
      "7f0000002000 40 julia_foo_13\r\n"
      "7f0000005000 10 LazyCompile:~f a.js:3\n"
      "7f0000006000 10");
  ASSERT_EQ(symbols.size(), 3u);
  EXPECT_EQ(symbols[0], (PerfMapSymbol{0x7f0000001000, 0x100, "py::step:/home/u/train.py"}));
  EXPECT_EQ(symbols[1], (PerfMapSymbol{0x7f0000002000, 0x40, "julia_foo_13"}));
  EXPECT_EQ(symbols[2], (PerfMapSymbol{0x7f0000005000, 0x10, "LazyCompile:~f a.js:3"}));
}

// Proves lookups: inside a symbol's range only, and lines appended after a first read are found
// (a JIT appends as it compiles), while a line being written (no newline yet) waits.
TEST(PerfMapTest, FindsAndFollowsAppends) {
  const std::string path = ::testing::TempDir() + "/perf-test-" + std::to_string(getpid()) + ".map";
  {
    std::ofstream out(path);
    out << "1000 100 first\n";
  }
  PerfMap map(path);
  ASSERT_NE(map.Find(0x1000), nullptr);
  EXPECT_EQ(map.Find(0x10ff)->name, "first");
  EXPECT_EQ(map.Find(0x1100), nullptr);
  EXPECT_EQ(map.Find(0xfff), nullptr);
  {
    std::ofstream out(path, std::ios::app);
    out << "2000 10 second\n3000 10 thi";
  }
  ASSERT_NE(map.Find(0x2008), nullptr);
  EXPECT_EQ(map.Find(0x2008)->name, "second");
  EXPECT_EQ(map.Find(0x3000), nullptr);  // incomplete line
  {
    std::ofstream out(path, std::ios::app);
    out << "rd\n";
  }
  ASSERT_NE(map.Find(0x3000), nullptr);
  EXPECT_EQ(map.Find(0x3000)->name, "third");
  std::remove(path.c_str());
  EXPECT_EQ(PerfMap(path).Find(0x1000), nullptr);  // no file: nothing
}

// Proves the symboliser names code in no module from this process's perf map, as it would a
// JIT's: an anonymous executable mapping listed in /tmp/perf-<pid>.map.
TEST(PerfMapTest, SymbolizerNamesJitCode) {
  void* code = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(code, MAP_FAILED);
  const auto start = reinterpret_cast<uintptr_t>(code);
  PerfMap own;
  {
    std::ofstream out(own.path());
    char line[128];
    std::snprintf(line, sizeof line, "%lx 200 julia_step_42\n", static_cast<unsigned long>(start));
    out << line;
  }
  Symbolizer symbolizer;
  const SymbolizedFrame frame = symbolizer.Symbolize(start + 0x11);
  EXPECT_EQ(frame.function, "julia_step_42");
  EXPECT_EQ(frame.function_offset, 0x11u);
  EXPECT_EQ(frame.module_path, own.path());
  const SymbolizedFrame outside = symbolizer.Symbolize(start + 0x400);
  EXPECT_TRUE(outside.function.empty());
  std::remove(own.path().c_str());
  munmap(code, 4096);
}

// Proves the blocking-call classification on names a user would expect either way.
TEST(BlockingApisTest, CopiesSyncsFreesAllocationsOnly) {
  for (const char* name :
       {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpyToSymbol",
        "cudaMemcpyPeerAsync", "cuMemcpyDtoHAsync", "cuMemcpyHtoD", "cudaMemset", "cudaMemsetAsync",
        "cuMemsetD32", "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
        "cuCtxSynchronize", "cuStreamSynchronize", "cudaFree", "cudaFreeHost", "cudaFreeAsync",
        "cuMemFree", "cudaMalloc", "cudaMallocHost", "cudaMallocManaged", "cudaHostAlloc",
        "cuMemAlloc", "cuMemAllocFromPoolAsync", "cudaHostRegister"}) {
    EXPECT_TRUE(CanBlockHost(name)) << name;
  }
  for (const char* name :
       {"cudaLaunchKernel", "cuLaunchKernel", "cudaEventRecord", "cudaStreamWaitEvent",
        "cudaStreamQuery", "cudaEventQuery", "cudaGetDevice", "cudaMemPrefetchAsync",
        "cudaStreamCreate", "cudaGraphLaunch", "cuModuleLoadData", ""}) {
    EXPECT_FALSE(CanBlockHost(name)) << name;
  }
}

// Proves the ELF reader: the library's static function is among its .symtab functions, and a
// file that is not ELF gives nothing (and no crash).
TEST(SymbolizerTest, ReadsSymtabAndRefusesNonElf) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&callsite_test::Outer), &info), 0);
  const std::vector<ElfSymbol> symbols = ReadElfFunctionSymbols(info.dli_fname);
  bool found = false;
  for (const ElfSymbol& s : symbols) found |= s.name == "_ZL9StaticHopPFvPvES_i";
  EXPECT_TRUE(found);
  const std::string text = ::testing::TempDir() + "/not-elf-" + std::to_string(getpid());
  std::ofstream(text) << "not an ELF file, long enough to hold a header .................";
  EXPECT_TRUE(ReadElfFunctionSymbols(text).empty());
  EXPECT_TRUE(ReadElfFunctionSymbols("/nonexistent/file").empty());
  std::filesystem::remove(text);
  EXPECT_EQ(Demangle("_ZN13callsite_test5OuterEPFvPvES0_"),
            "callsite_test::Outer(void (*)(void*), void*)");
  EXPECT_EQ(Demangle("cudaMemcpyAsync"), "cudaMemcpyAsync");
}

}  // namespace
}  // namespace libprof
