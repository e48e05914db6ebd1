// GPU capture tests: every samples/ program run under libprof.so, injected through
// CUDA_INJECTION64_PATH (+ NVTX_INJECTION64_PATH) and through LD_PRELOAD, must behave exactly as
// without it and leave complete traces that say what the program did.
//
// Layer: tests/gpu. This process never touches CUDA: it runs the samples as child processes and
// reads their traces with TraceReader. Every test skips where the machine has no GPU.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proto/trace_reader.h"
#include "analysis/metrics/start_up.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/trace_loader.h"
#include "analysis/rules/findings.h"

extern char** environ;

namespace libprof {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr seconds kRunTimeout{60};     // a sample runs in 1-3 s without libprof (H100)
constexpr seconds kForkTimeout{60};    // fork_children must end well within this
constexpr seconds kTorchTimeout{240};  // importing torch alone takes seconds

// ---------------------------------------------------------------------------------------------
// Running programs

enum class Mode { kInjection, kPreload };

const char* ModeName(Mode mode) { return mode == Mode::kInjection ? "Injection" : "Preload"; }
void PrintTo(Mode mode, std::ostream* os) { *os << ModeName(mode); }

struct RunResult {
  int exit_code = -1;  // exit status, 128 + signal number, or 127 when exec failed
  bool timed_out = false;
  pid_t pid = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The last `n` characters of `text`, for failure messages.
std::string Tail(const std::string& text, size_t n = 6000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// This process's environment without anything that would inject or configure libprof, plus
// `extra`: a baseline run sees no profiler, a profiled one exactly the variables given.
std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& extra) {
  static const std::set<std::string> kDropped = {"LD_PRELOAD", "CUDA_INJECTION64_PATH",
                                                 "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH"};
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (kDropped.contains(name) || name.starts_with("LIBPROF_") || extra.contains(name)) continue;
    env.push_back(text);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

// True if `program` is an executable file in one of PATH's folders.
bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

RunResult RunProgram(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& extra, const std::string& dir,
                     seconds timeout);

// Where a hung process is stuck: every thread's backtrace from gdb, or from cuda-gdb (the GPU
// machine has no gdb), if one is installed.
std::string HangReport(pid_t pid, const std::string& dir) {
  std::string debugger = OnPath("gdb") ? "gdb" : OnPath("cuda-gdb") ? "cuda-gdb" : "";
  if (debugger.empty()) return "(install gdb for the backtraces of a hung process)\n";
  const RunResult gdb =
      RunProgram({debugger, "-batch", "-nx", "-p", std::to_string(pid), "-ex", "thread apply all bt"},
                 {}, dir, seconds{60});
  return gdb.out;
}

// Runs argv[0] (looked up in PATH when it has no '/') in `dir` with ChildEnvironment(extra),
// stdout and stderr captured, stdin /dev/null. After `timeout` the threads' backtraces are
// appended to stderr (HangReport) and the process group is killed.
RunResult RunProgram(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& extra, const std::string& dir,
                     seconds timeout) {
  static int runs = 0;
  const std::string base = dir + "/run" + std::to_string(++runs);
  const std::string out_path = base + ".stdout";
  const std::string err_path = base + ".stderr";
  // Everything the child needs is built before fork: it only calls async-signal-safe functions.
  const std::vector<std::string> env = ChildEnvironment(extra);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  RunResult result;
  if (out_fd < 0 || err_fd < 0 || in_fd < 0) {
    result.err = "cannot create output files in " + dir;
    return result;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout kills its children too
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (chdir(dir.c_str()) != 0) _exit(126);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
  close(in_fd);
  if (pid < 0) {
    result.err = "fork failed";
    return result;
  }
  setpgid(pid, pid);  // also here: whichever runs first
  result.pid = pid;
  int status = 0;
  std::string hang_report;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      hang_report = HangReport(pid, dir);
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  if (result.timed_out) result.err += "\n--- hung; backtraces before the kill:\n" + hang_report;
  return result;
}

// "" when this machine can run the samples, else why not. Loads libcuda but calls nothing in it.
std::string NoGpuReason() {
  static const std::string reason = []() -> std::string {
    if (access("/dev/nvidiactl", F_OK) != 0 || access("/dev/nvidia0", F_OK) != 0) {
      return "no NVIDIA GPU (/dev/nvidiactl or /dev/nvidia0 missing)";
    }
    void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (cuda == nullptr) return std::string("libcuda.so.1 cannot be loaded: ") + dlerror();
    dlclose(cuda);
    return "";
  }();
  return reason;
}

// The python3 to run torch with: $LIBPROF_TEST_PYTHON, else python3 on PATH (a virtualenv's),
// else the one CMake found.
std::string Python() {
  if (const char* chosen = std::getenv("LIBPROF_TEST_PYTHON"); chosen && *chosen) return chosen;
  return OnPath("python3") ? "python3" : LIBPROF_PYTHON3;
}

// ---------------------------------------------------------------------------------------------
// Reading traces

struct Trace {
  std::string path;
  TraceHeader header;
  TraceRecords records;  // every chunk's records appended
  std::vector<std::string> strings;

  const std::string& Str(uint32_t id) const {
    static const std::string kEmpty;
    return id < strings.size() ? strings[id] : kEmpty;
  }
  // The names of each kernel, mangled and demangled, as one string (for substring searches).
  std::string KernelNames(const Kernel& k) const {
    return Str(k.shape.name_id) + " " + Str(k.shape.demangled_name_id);
  }
};

// Reads the whole file; an unreadable, truncated or corrupt file is an error.
std::expected<Trace, std::string> ReadTrace(const std::string& path) {
  auto reader = TraceReader::Open(path);
  if (!reader) return std::unexpected(reader.error());
  Trace trace;
  trace.path = path;
  trace.header = (*reader)->header();
  TraceRecords chunk;
  while ((*reader)->Next(&chunk)) AppendRecords(chunk, &trace.records);
  if (!(*reader)->error().empty()) return std::unexpected((*reader)->error());
  if ((*reader)->truncated()) return std::unexpected(path + ": truncated");
  trace.strings = (*reader)->strings();
  return trace;
}

// ---------------------------------------------------------------------------------------------
// Fixtures

// A run under libprof: the program's result and the traces its processes wrote.
struct Capture {
  RunResult run;
  std::vector<Trace> traces;
  std::vector<std::string> errors;  // traces that could not be read
};

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = NoGpuReason(); !reason.empty()) GTEST_SKIP() << reason;
    ASSERT_TRUE(fs::exists(LIBPROF_SO_PATH)) << LIBPROF_SO_PATH << " is not built";
    std::string pattern = (fs::temp_directory_path() / "libprof-gpu-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    dir_ = pattern;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " (traces and program output)\n";
    } else {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  RunResult RunPlain(const std::vector<std::string>& argv, seconds timeout = kRunTimeout) {
    return RunProgram(argv, {}, dir_, timeout);
  }

  // Runs argv under libprof in `mode`, each process's trace going to its own file in a fresh
  // folder, and reads every trace file found there.
  Capture Profile(const std::vector<std::string>& argv, Mode mode, seconds timeout = kRunTimeout,
                  const std::map<std::string, std::string>& settings = {}) {
    const std::string traces = dir_ + "/traces" + std::to_string(++profiles_);
    fs::create_directories(traces);
    std::map<std::string, std::string> env = settings;
    env["LIBPROF_OUTPUT"] = traces + "/trace-%p.pb";
    if (mode == Mode::kInjection) {
      env["CUDA_INJECTION64_PATH"] = LIBPROF_SO_PATH;
      env["NVTX_INJECTION64_PATH"] = LIBPROF_SO_PATH;
    } else {
      env["LD_PRELOAD"] = LIBPROF_SO_PATH;  // libprof sets both injection variables itself
    }
    Capture capture;
    capture.run = RunProgram(argv, env, dir_, timeout);
    std::vector<std::string> paths;
    for (const auto& entry : fs::directory_iterator(traces)) paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      auto trace = ReadTrace(path);
      if (trace) {
        capture.traces.push_back(std::move(*trace));
      } else {
        capture.errors.push_back(trace.error());
      }
    }
    return capture;
  }

  // Profile() plus the checks every capture must pass: clean exit within the time limit, and
  // `traces` readable files. Returns false (after failing the test) if the capture is unusable.
  bool ProfileOk(const std::vector<std::string>& argv, Mode mode, size_t traces, Capture* out,
                 seconds timeout = kRunTimeout,
                 const std::map<std::string, std::string>& settings = {}) {
    *out = Profile(argv, mode, timeout, settings);
    if (out->run.timed_out) {
      ADD_FAILURE() << argv[0] << " under libprof did not end within " << timeout.count()
                    << " s; stderr:\n"
                    << Tail(out->run.err);
      return false;
    }
    EXPECT_EQ(out->run.exit_code, 0) << "stderr:\n" << Tail(out->run.err);
    EXPECT_TRUE(out->errors.empty()) << ::testing::PrintToString(out->errors);
    EXPECT_EQ(out->traces.size(), traces) << "stderr:\n" << Tail(out->run.err);
    return !HasFailure();
  }

  std::string dir_;
  int profiles_ = 0;
};

// The header describes the process and its GPUs, CUPTI capture was active, nothing was dropped
// and the run ended cleanly.
void ExpectCompleteTrace(const Trace& trace) {
  SCOPED_TRACE(trace.path);
  const TraceHeader& h = trace.header;
  EXPECT_NE(h.pid, 0u);
  EXPECT_EQ(h.capture_status, "") << "CUPTI capture was not active";
  // Devices are known once CUDA is up, after the header was written: they may come in chunks.
  std::vector<DeviceInfo> devices = h.devices;
  devices.insert(devices.end(), trace.records.devices.begin(), trace.records.devices.end());
  ASSERT_FALSE(devices.empty()) << "no devices in the header or the chunks";
  for (const DeviceInfo& device : devices) {
    EXPECT_FALSE(device.name.empty()) << "device " << device.id;
    EXPECT_GT(device.sm_count, 0u) << "device " << device.id;
  }
  for (const DropReport& drop : trace.records.drops) {
    EXPECT_EQ(drop.count, 0u) << drop.source << " dropped records";
  }
  ASSERT_TRUE(trace.records.run_end.has_value()) << "no RunEnd: the trace was not closed";
  EXPECT_EQ(trace.records.run_end->records_dropped, 0u);
}

struct SampleCase {
  const char* name;
  std::vector<std::string> argv;
  size_t traces;  // files the run writes: one per process that uses CUDA
};

void PrintTo(const SampleCase& sample, std::ostream* os) { *os << sample.name; }

const std::vector<SampleCase>& SampleCases() {
  static const std::vector<SampleCase> cases = {
      {"normalize_nrm2", {LIBPROF_SAMPLE_normalize_nrm2, "20"}, 1},
      {"cublas_two_streams", {LIBPROF_SAMPLE_cublas_two_streams, "2048"}, 1},
      {"pageable_vs_pinned", {LIBPROF_SAMPLE_pageable_vs_pinned}, 1},
      {"stream_overlap", {LIBPROF_SAMPLE_stream_overlap, "--order", "per-chunk"}, 1},
      {"launch_bound", {LIBPROF_SAMPLE_launch_bound, "5000"}, 1},
      {"launch_bound_graph", {LIBPROF_SAMPLE_launch_bound, "5000", "--graph"}, 1},
      {"alloc_loop", {LIBPROF_SAMPLE_alloc_loop}, 1},
      {"unified_memory", {LIBPROF_SAMPLE_unified_memory, "64"}, 1},
      {"nvtx_ranges", {LIBPROF_SAMPLE_nvtx_ranges}, 1},
      {"fork_children", {LIBPROF_SAMPLE_fork_children}, 3},
  };
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Every sample, both modes: transparent to the program, complete traces.

class SampleTest : public GpuTest,
                   public ::testing::WithParamInterface<std::tuple<SampleCase, Mode>> {};

// Proves libprof is transparent (same stdout and exit code as without it) and writes exactly one
// complete trace per CUDA process, under that process's pid, with nothing dropped.
TEST_P(SampleTest, TransparentAndComplete) {
  const auto& [sample, mode] = GetParam();
  const RunResult baseline = RunPlain(sample.argv);
  ASSERT_FALSE(baseline.timed_out);
  ASSERT_EQ(baseline.exit_code, 0) << "the sample fails without libprof:\n" << Tail(baseline.err);

  const Capture capture = Profile(sample.argv, mode, kRunTimeout);
  ASSERT_FALSE(capture.run.timed_out) << "stderr:\n" << Tail(capture.run.err);
  EXPECT_EQ(capture.run.exit_code, baseline.exit_code) << "stderr:\n" << Tail(capture.run.err);
  EXPECT_EQ(capture.run.out, baseline.out);
  EXPECT_TRUE(capture.errors.empty()) << ::testing::PrintToString(capture.errors);
  ASSERT_EQ(capture.traces.size(), sample.traces) << "stderr:\n" << Tail(capture.run.err);

  std::set<uint32_t> pids;
  for (const Trace& trace : capture.traces) {
    ExpectCompleteTrace(trace);
    pids.insert(trace.header.pid);
    EXPECT_NE(trace.path.find("trace-" + std::to_string(trace.header.pid) + ".pb"),
              std::string::npos)
        << trace.path << " is not named after its pid " << trace.header.pid;
  }
  EXPECT_EQ(pids.size(), capture.traces.size()) << "two traces with the same pid";
  EXPECT_TRUE(pids.contains(static_cast<uint32_t>(capture.run.pid)))
      << "no trace of the process started, pid " << capture.run.pid;
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleTest,
                         ::testing::Combine(::testing::ValuesIn(SampleCases()),
                                            ::testing::Values(Mode::kInjection, Mode::kPreload)),
                         [](const ::testing::TestParamInfo<SampleTest::ParamType>& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  ModeName(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------------------------
// What each sample's trace must contain (both modes).

class ModeTest : public GpuTest, public ::testing::WithParamInterface<Mode> {};

#define LIBPROF_INSTANTIATE_MODES(suite)                                 \
  INSTANTIATE_TEST_SUITE_P(                                              \
      Modes, suite, ::testing::Values(Mode::kInjection, Mode::kPreload), \
      [](const ::testing::TestParamInfo<Mode>& info) { return ModeName(info.param); })

template <typename T, typename Pred>
size_t CountIf(const std::vector<T>& items, Pred pred) {
  return static_cast<size_t>(std::count_if(items.begin(), items.end(), pred));
}

// Host time of the API call with `correlation_id` (the outermost one when a driver call nested
// in it shares the id), or -1 if there is none.
int64_t ApiDurationNs(const Trace& trace, uint64_t correlation_id) {
  int64_t longest = -1;
  for (const ApiCall& api : trace.records.api_calls) {
    if (api.correlation_id == correlation_id) {
      longest = std::max(longest, static_cast<int64_t>(api.end_ns - api.start_ns));
    }
  }
  return longest;
}

using NormalizeNrm2Test = ModeTest;
LIBPROF_INSTANTIATE_MODES(NormalizeNrm2Test);

// Proves cuBLAS's kernels, the nrm2 result copies and the launch/copy API calls are captured,
// every kernel is joined to the API call that launched it, and the copies' host time shows the
// wait for the ~1 ms kernel before them (seed 000).
TEST_P(NormalizeNrm2Test, KernelsCopiesAndCorrelation) {
  constexpr size_t kIterations = 20;
  Capture c;
  ASSERT_TRUE(
      ProfileOk({LIBPROF_SAMPLE_normalize_nrm2, std::to_string(kIterations)}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];
  const auto& r = t.records;

  EXPECT_GE(
      CountIf(r.kernels,
              [&](const Kernel& k) { return t.KernelNames(k).find("nrm2") != std::string::npos; }),
      kIterations);
  EXPECT_GE(
      CountIf(r.kernels,
              [&](const Kernel& k) { return t.KernelNames(k).find("scal") != std::string::npos; }),
      kIterations);
  EXPECT_GE(CountIf(r.kernels,
                    [&](const Kernel& k) {
                      return t.KernelNames(k).find("SpinKernel") != std::string::npos;
                    }),
            kIterations);

  std::vector<const Memcpy*> results;  // the 4-byte DtoH copies of nrm2's result
  for (const Memcpy& m : r.memcpys) {
    if (m.copy_kind == CopyKind::kDtoH && m.bytes == 4) results.push_back(&m);
  }
  EXPECT_GE(results.size(), kIterations) << "one DtoH copy of the norm per iteration";

  EXPECT_GT(CountIf(r.api_calls,
                    [&](const ApiCall& a) {
                      return t.Str(a.name_id) == "cudaLaunchKernel" ||
                             t.Str(a.name_id) == "cuLaunchKernel";
                    }),
            0u);
  EXPECT_GT(CountIf(r.api_calls,
                    [&](const ApiCall& a) {
                      return t.Str(a.name_id).find("Memcpy") != std::string::npos;
                    }),
            0u);

  std::set<uint64_t> api_ids;
  for (const ApiCall& a : r.api_calls) api_ids.insert(a.correlation_id);
  size_t orphans = 0;
  std::string example;
  for (const Kernel& k : r.kernels) {
    if (!api_ids.contains(k.correlation_id)) {
      if (orphans++ == 0) example = t.KernelNames(k) + " corr " + std::to_string(k.correlation_id);
    }
  }
  EXPECT_EQ(orphans, 0u) << "of " << r.kernels.size() << " kernels have no API call, e.g. "
                         << example;

  // Each result copy waits for SpinKernel (1 ms) and nrm2: most must hold the host > 0.5 ms.
  size_t blocked = 0;
  for (const Memcpy* m : results) {
    if (ApiDurationNs(t, m->correlation_id) > 500'000) ++blocked;
  }
  EXPECT_GE(blocked, results.size() / 2)
      << "copy API calls holding the host > 0.5 ms, of " << results.size();
}

// The trace as profview's analysis library holds it.
analysis::ProcessTrace ForAnalysis(const Trace& t) {
  analysis::ProcessTrace p;
  p.path = t.path;
  p.header = t.header;
  p.records = t.records;
  p.strings = t.strings;
  return p;
}

// The outermost API call with `correlation_id` (the longest of those sharing it), or nullptr.
const ApiCall* OutermostCall(const Trace& trace, uint64_t correlation_id) {
  const ApiCall* outermost = nullptr;
  for (const ApiCall& api : trace.records.api_calls) {
    if (api.correlation_id == correlation_id &&
        (outermost == nullptr ||
         api.end_ns - api.start_ns > outermost->end_ns - outermost->start_ns)) {
      outermost = &api;
    }
  }
  return outermost;
}

// Proves the answer to seed 000's question comes from the trace itself: with the default
// LIBPROF_BACKTRACE=blocking, every nrm2 result copy that held the host carries a call stack
// whose call site is the sample's NormalizeLoop (a static function, named from .symtab), reached
// through cuBLAS's nrm2 entry point in libcublas; kernel launches carry no stack.
TEST_P(NormalizeNrm2Test, BlockingCopiesNameCublasAndTheLoop) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_normalize_nrm2, "20"}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];
  const analysis::ProcessTrace p = ForAnalysis(t);
  const analysis::CallSites sites(p);
  ASSERT_FALSE(sites.empty()) << "no call stacks in the trace; stderr:\n" << Tail(c.run.err);
  size_t blocking = 0, named = 0;
  std::string example;
  for (const Memcpy& m : t.records.memcpys) {
    if (m.copy_kind != CopyKind::kDtoH || m.bytes != 4) continue;
    const ApiCall* call = OutermostCall(t, m.correlation_id);
    if (call == nullptr || call->end_ns - call->start_ns <= 500'000) continue;
    ++blocking;
    const analysis::CallSite& site = sites.Of(call->stack_id);
    if (site.through.starts_with("cublasSnrm2") && site.through_module.starts_with("libcublas") &&
        site.caller == "NormalizeLoop (app)") {
      ++named;
    } else if (example.empty()) {
      example = site.known ? site.Chain(t.Str(call->name_id)) : "no stack";
      for (const analysis::FrameView& f : sites.Frames(call->stack_id)) {
        example += "\n  " + f.Label() + (f.cuda ? " [cuda]" : "");
      }
    }
  }
  EXPECT_GT(blocking, 0u);
  EXPECT_EQ(named, blocking) << "first other call site: " << example;
  EXPECT_EQ(CountIf(t.records.api_calls,
                    [&](const ApiCall& a) {
                      return a.stack_id != 0 && t.Str(a.name_id) == "cudaLaunchKernel";
                    }),
            0u);
}

// Proves LIBPROF_BACKTRACE=none records no stack, and =all records one for launches too (whose
// call site lies in the program), with the copies still attributed to cuBLAS.
TEST_P(NormalizeNrm2Test, BacktraceNoneAndAll) {
  Capture none;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_normalize_nrm2, "5"}, GetParam(), 1, &none, kRunTimeout,
                        {{"LIBPROF_BACKTRACE", "none"}}));
  EXPECT_TRUE(none.traces[0].records.call_stacks.empty());
  EXPECT_EQ(CountIf(none.traces[0].records.api_calls, [](const ApiCall& a) { return a.stack_id; }),
            0u);

  Capture all;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_normalize_nrm2, "5"}, GetParam(), 1, &all, kRunTimeout,
                        {{"LIBPROF_BACKTRACE", "all"}}));
  const Trace& t = all.traces[0];
  const analysis::ProcessTrace p = ForAnalysis(t);
  const analysis::CallSites sites(p);
  size_t launches = 0, from_app = 0;
  for (const ApiCall& a : t.records.api_calls) {
    if (t.Str(a.name_id) != "cudaLaunchKernel" || a.nested) continue;
    ++launches;
    if (sites.Of(a.stack_id).caller_module == "app" ||
        sites.Of(a.stack_id).through_module.starts_with("libcublas")) {
      ++from_app;
    }
  }
  EXPECT_GT(launches, 0u);
  EXPECT_EQ(from_app, launches);
}

using PageableVsPinnedTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(PageableVsPinnedTest);

// Proves pageable and pinned host memory are told apart in both directions, with the bytes the
// program copied, and that the small pageable DtoH async copy is seen blocking while the pinned
// one is not (seeds 002, 003).
TEST_P(PageableVsPinnedTest, MemoryKindsAndBytes) {
  constexpr uint64_t kBytes = 64ull << 20;
  constexpr size_t kCopiesPerCase = 3 * 2;  // 3 reps, cudaMemcpy and cudaMemcpyAsync
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_pageable_vs_pinned, "64", "3"}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];

  // One entry per copy API call (a staged pageable copy may come as several records).
  struct Copy {
    CopyKind kind;
    MemoryKind src, dst;
    uint64_t bytes = 0;
  };
  std::map<uint64_t, Copy> copies;
  for (const Memcpy& m : t.records.memcpys) {
    auto it = copies.try_emplace(m.correlation_id, Copy{m.copy_kind, m.src_kind, m.dst_kind}).first;
    it->second.bytes += m.bytes;
  }
  auto count = [&](CopyKind kind, MemoryKind host, uint64_t bytes) {
    size_t n = 0;
    for (const auto& [correlation, copy] : copies) {
      const MemoryKind side = kind == CopyKind::kHtoD ? copy.src : copy.dst;
      if (copy.kind == kind && side == host && copy.bytes == bytes) ++n;
    }
    return n;
  };
  EXPECT_EQ(count(CopyKind::kHtoD, MemoryKind::kPageable, kBytes), kCopiesPerCase);
  EXPECT_EQ(count(CopyKind::kHtoD, MemoryKind::kPinned, kBytes), kCopiesPerCase);
  EXPECT_EQ(count(CopyKind::kDtoH, MemoryKind::kPageable, kBytes), kCopiesPerCase);
  EXPECT_EQ(count(CopyKind::kDtoH, MemoryKind::kPinned, kBytes), kCopiesPerCase);
  EXPECT_EQ(count(CopyKind::kDtoH, MemoryKind::kPageable, 4), 1u);
  EXPECT_EQ(count(CopyKind::kDtoH, MemoryKind::kPinned, 4), 1u);

  // Both 4-byte copies follow a 2 ms kernel: to pageable memory the call waits for it.
  for (const auto& [correlation, copy] : copies) {
    if (copy.kind != CopyKind::kDtoH || copy.bytes != 4) continue;
    const int64_t host_ns = ApiDurationNs(t, correlation);
    if (copy.dst == MemoryKind::kPageable) {
      EXPECT_GT(host_ns, 1'000'000) << "the pageable 4-byte copy did not block";
    } else {
      EXPECT_GE(host_ns, 0) << "no API call for the pinned 4-byte copy";
      EXPECT_LT(host_ns, 1'000'000) << "the pinned 4-byte copy blocked";
    }
  }
}

using NvtxRangesTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(NvtxRangesTest);

// Proves NVTX push/pop nesting, domains with registered strings and colours, start/end ranges
// ended on another thread, marks and a range opened before CUDA initialised are all recorded,
// and that the four kinds of synchronisation records are present.
TEST_P(NvtxRangesTest, RangesAndSynchronizations) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_nvtx_ranges}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];
  const auto& events = t.records.nvtx_events;
  auto find = [&](const std::string& message, NvtxKind kind) -> const NvtxEvent* {
    for (const NvtxEvent& e : events) {
      if (e.kind == kind && t.Str(e.message_id) == message) return &e;
    }
    return nullptr;
  };

  const NvtxEvent* outer = find("outer", NvtxKind::kPushPop);
  const NvtxEvent* inner = find("inner", NvtxKind::kPushPop);
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(outer->depth, 0u);
  EXPECT_EQ(inner->depth, 1u);
  EXPECT_EQ(outer->domain_id, 0u);
  EXPECT_EQ(inner->thread_id, outer->thread_id);
  EXPECT_EQ(outer->thread_id, t.header.pid) << "NVTX thread ids must be OS thread ids";
  EXPECT_LE(outer->start_ns, inner->start_ns);
  EXPECT_LE(inner->end_ns, outer->end_ns);
  EXPECT_LT(inner->start_ns, inner->end_ns);
  EXPECT_FALSE(outer->open);

  uint32_t domain_id = 0;
  for (const NvtxDomain& d : t.records.nvtx_domains) {
    if (t.Str(d.name_id) == "libprof-sample") domain_id = d.id;
  }
  ASSERT_NE(domain_id, 0u) << "domain libprof-sample not recorded";
  const NvtxEvent* registered = find("registered-range", NvtxKind::kPushPop);
  ASSERT_NE(registered, nullptr) << "the registered string must be resolved to its text";
  EXPECT_EQ(registered->domain_id, domain_id);
  EXPECT_TRUE(registered->has_color);
  EXPECT_EQ(registered->color_argb, 0xFF00FF00u);
  EXPECT_EQ(registered->depth, 0u) << "depth counts within the domain";

  const NvtxEvent* cross = find("cross-thread", NvtxKind::kStartEnd);
  ASSERT_NE(cross, nullptr);
  EXPECT_EQ(cross->thread_id, t.header.pid);
  EXPECT_NE(cross->end_thread_id, 0u);
  EXPECT_NE(cross->end_thread_id, cross->thread_id);
  EXPECT_FALSE(cross->open);
  EXPECT_LT(cross->start_ns, cross->end_ns);

  const NvtxEvent* mark = find("checkpoint", NvtxKind::kMark);
  ASSERT_NE(mark, nullptr);
  EXPECT_EQ(mark->start_ns, mark->end_ns);

  const NvtxEvent* early = find("before-cuda-init", NvtxKind::kPushPop);
  ASSERT_NE(early, nullptr) << "the range pushed before cuInit is lost";
  EXPECT_FALSE(early->open);
  uint64_t first_api = UINT64_MAX;
  for (const ApiCall& a : t.records.api_calls) first_api = std::min(first_api, a.start_ns);
  EXPECT_LT(early->start_ns, first_api) << "it was pushed before any CUDA call";
  EXPECT_LT(early->end_ns, outer->start_ns);

  for (SyncType type : {SyncType::kStreamSynchronize, SyncType::kEventSynchronize,
                        SyncType::kStreamWaitEvent, SyncType::kContextSynchronize}) {
    EXPECT_GT(CountIf(t.records.synchronizations,
                      [&](const Synchronization& s) { return s.type == type; }),
              0u)
        << "no " << ToString(type) << " record";
  }
}

using LaunchBoundTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(LaunchBoundTest);

// Proves no kernel is lost or duplicated in a burst of 5000 tiny launches.
TEST_P(LaunchBoundTest, EveryLaunchIsOneKernel) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_launch_bound, "5000"}, GetParam(), 1, &c));
  const auto& r = c.traces[0].records;
  EXPECT_EQ(r.kernels.size(), 5000u);
  EXPECT_EQ(CountIf(r.kernels, [](const Kernel& k) { return k.graph_id != 0; }), 0u);
  std::set<uint64_t> correlations;
  for (const Kernel& k : r.kernels) correlations.insert(k.correlation_id);
  EXPECT_EQ(correlations.size(), r.kernels.size()) << "kernels sharing a correlation id";
}

// Proves kernels run by CUDA graph launches are recorded one per node, tagged with their graph,
// and that the graph launch API calls (50 of them, not 5000 launches) are recorded.
TEST_P(LaunchBoundTest, GraphKernelsCarryGraphIds) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_launch_bound, "5000", "--graph"}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];
  EXPECT_EQ(t.records.kernels.size(), 5000u);
  EXPECT_EQ(CountIf(t.records.kernels, [](const Kernel& k) { return k.graph_id == 0; }), 0u)
      << "kernels without a graph id";
  EXPECT_EQ(CountIf(t.records.api_calls,
                    [&](const ApiCall& a) { return t.Str(a.name_id) == "cudaGraphLaunch"; }),
            50u);
}

using GraphReplayTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(GraphReplayTest);

// Proves a graph replay loop reads back in its stream's order: each replay's 8 kernels carry the
// graph id, and every copy ends before the next work of its stream starts, including the copy
// before the first launch, whose end CUPTI 13.0 gives tens of milliseconds late; where the
// reader ended a copy early (proto/stream_order_repair.h), CUPTI's end is kept and later.
TEST_P(GraphReplayTest, CopiesEndBeforeTheNextWorkOfTheirStream) {
  constexpr size_t kReplays = 200;
  Capture c;
  ASSERT_TRUE(
      ProfileOk({LIBPROF_SAMPLE_graph_replay, std::to_string(kReplays)}, GetParam(), 1, &c));
  EXPECT_NE(c.run.out.find("200 replays, x[0] = 1.992188"), std::string::npos) << c.run.out;
  const auto& r = c.traces[0].records;
  EXPECT_EQ(r.kernels.size(), 8 * kReplays);
  EXPECT_EQ(CountIf(r.kernels, [](const Kernel& k) { return k.graph_id == 0; }), 0u);
  const auto copies = CountIf(r.memcpys, [](const Memcpy& m) {
    return m.copy_kind == CopyKind::kDtoD && m.bytes == (size_t{1} << 19);
  });
  EXPECT_EQ(copies, kReplays);
  size_t repaired = 0;
  for (const Memcpy& m : r.memcpys) {
    uint64_t next_start = UINT64_MAX;
    for (const Kernel& k : r.kernels) {
      if (k.stream_id == m.stream_id && k.start_ns > m.start_ns) {
        next_start = std::min(next_start, k.start_ns);
      }
    }
    if (next_start != UINT64_MAX) {
      EXPECT_LE(m.end_ns, next_start + 1000)
          << "a copy (correlation " << m.correlation_id << ") ends "
          << (m.end_ns - next_start) << " ns after its stream's next kernel starts";
    }
    if (m.cupti_end_ns != 0) {
      ++repaired;
      EXPECT_GT(m.cupti_end_ns, m.end_ns);
      std::cout << "copy " << m.correlation_id << ": CUPTI's end " << (m.cupti_end_ns - m.start_ns)
                << " ns after its start, ended at the next kernel's start, "
                << (m.end_ns - m.start_ns) << " ns\n";
    }
  }
  std::cout << repaired << " of " << r.memcpys.size() << " copies ended early by the reader\n";
}

using AllocLoopTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(AllocLoopTest);

// Proves allocations and releases are recorded with their memory kinds: one per cudaMalloc and
// cudaFree, stream-ordered ones flagged async, managed memory as managed; and memsets.
TEST_P(AllocLoopTest, AllocationsReleasesAndMemsets) {
  constexpr size_t kIterations = 200;
  constexpr uint64_t kBytes = 16ull << 20;
  Capture c;
  ASSERT_TRUE(
      ProfileOk({LIBPROF_SAMPLE_alloc_loop, std::to_string(kIterations), "16"}, GetParam(), 1, &c));
  const auto& r = c.traces[0].records;
  auto count = [&](MemoryOperation op, MemoryKind kind, bool async, uint64_t bytes) {
    return CountIf(r.memory_ops, [&](const MemoryOp& m) {
      return m.operation == op && m.memory_kind == kind && m.async == async &&
             (bytes == 0 || m.bytes == bytes);
    });
  };
  // Phase 1 (plus the 16 MiB memset target of phase 4).
  EXPECT_GE(count(MemoryOperation::kAllocation, MemoryKind::kDevice, false, kBytes), kIterations);
  EXPECT_GE(count(MemoryOperation::kRelease, MemoryKind::kDevice, false, 0), kIterations);
  // Phase 2: the pool may serve several cudaMallocAsync from one reservation; at least one each.
  EXPECT_GE(count(MemoryOperation::kAllocation, MemoryKind::kDevice, true, 0), 1u);
  EXPECT_GE(count(MemoryOperation::kRelease, MemoryKind::kDevice, true, 0), 1u);
  // Their pool: CUDA's default local pool of the device, with its default release threshold (0:
  // the sample keeps it) and, at each allocation, a size and a use of at least that allocation;
  // the direct allocations of phase 1 come from no pool.
  for (const MemoryOp& m : r.memory_ops) {
    if (m.memory_kind != MemoryKind::kDevice) continue;
    if (!m.async) {
      EXPECT_EQ(m.pool_type, 0u);
      continue;
    }
    EXPECT_EQ(m.pool_type, 1u);  // CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL
    EXPECT_NE(m.pool_address, 0u);
    EXPECT_EQ(m.pool_release_threshold, 0u);
    if (m.operation == MemoryOperation::kAllocation) {
      EXPECT_GE(m.pool_bytes, m.bytes);
      EXPECT_GE(m.pool_used_bytes, m.bytes);
    }
  }
  // Phase 3.
  EXPECT_GE(count(MemoryOperation::kAllocation, MemoryKind::kManaged, false, 1u << 20), 1u);
  // Phase 4: cudaMemset of 16 MiB and cudaMemsetAsync of 8 MiB.
  EXPECT_GE(CountIf(r.memsets, [&](const Memset& m) { return m.bytes == kBytes; }), 1u);
  EXPECT_GE(CountIf(r.memsets, [&](const Memset& m) { return m.bytes == kBytes / 2; }), 1u);
}

using UnifiedMemoryTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(UnifiedMemoryTest);

struct UvmTotals {
  uint64_t htod_bytes = 0, dtoh_bytes = 0;
  uint64_t gpu_fault_records = 0, gpu_fault_groups = 0, cpu_faults = 0;
};

// The totals of the records that start in [from_ns, to_ns).
UvmTotals TotalsOf(const Trace& t, uint64_t from_ns = 0, uint64_t to_ns = UINT64_MAX) {
  UvmTotals u;
  for (const UnifiedMemoryCounter& c : t.records.unified_memory_counters) {
    if (c.start_ns < from_ns || c.start_ns >= to_ns) continue;
    switch (c.counter_kind) {
      case UvmCounterKind::kBytesHtoD:
        u.htod_bytes += c.value;
        break;
      case UvmCounterKind::kBytesDtoH:
        u.dtoh_bytes += c.value;
        break;
      case UvmCounterKind::kGpuPageFault:
        ++u.gpu_fault_records;
        u.gpu_fault_groups += c.value;
        break;
      case UvmCounterKind::kCpuPageFault:
        ++u.cpu_faults;
        break;
      default:
        break;
    }
  }
  return u;
}

std::string Describe(const UvmTotals& u) {
  return "HtoD " + std::to_string(u.htod_bytes) + " B, DtoH " + std::to_string(u.dtoh_bytes) +
         " B, GPU fault records " + std::to_string(u.gpu_fault_records) + " (groups " +
         std::to_string(u.gpu_fault_groups) + "), CPU faults " + std::to_string(u.cpu_faults);
}

// Proves the unified-memory counters follow what the program did, in one run of
// unified_memory (256 MiB, both phases, split at the second cudaMallocManaged), with the default
// kinds (`uvm` is one): the faulting phase (host touch, kernel, host read-back) migrates the
// 256 MiB back to the host, in CPU faults, and at least 3/4 of it to the device in GPU fault
// groups during the kernel; the prefetched phase, the program's last, migrates the 256 MiB each
// way (its events are taken before the program ends) with fewer faults of both kinds.
// 3/4: the driver drops the unified-memory events CUPTI does not take in time, counting none,
// and a CUPTI flush takes 12-21 ms while the counters are on: on an H100 the faulting kernel's
// host→device events came 84-100% complete in 9 runs (docs/capture-notes.md); flushed once a
// second, as before libprof flushed often for them, 48-61%.
TEST_P(UnifiedMemoryTest, MigrationsAndFaultsFollowTheProgram) {
  constexpr uint64_t kMiB = 256;
  constexpr uint64_t kBytes = kMiB << 20;
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_unified_memory, std::to_string(kMiB), "both"}, GetParam(),
                        1, &c));
  ASSERT_EQ(c.run.err.find("MiB free: using"), std::string::npos)
      << "the GPU had too little free memory for the test's size: " << c.run.err;
  const Trace& t = c.traces[0];
  ExpectCompleteTrace(t);
  std::vector<uint64_t> managed;  // the two phases' allocations
  for (const MemoryOp& m : t.records.memory_ops) {
    if (m.operation == MemoryOperation::kAllocation && m.memory_kind == MemoryKind::kManaged) {
      managed.push_back(m.time_ns);
    }
  }
  ASSERT_EQ(managed.size(), 2u);
  std::sort(managed.begin(), managed.end());
  const UvmTotals f = TotalsOf(t, managed[0], managed[1]);
  const UvmTotals p = TotalsOf(t, managed[1]);
  std::cout << "faulting: " << Describe(f) << "\nprefetched: " << Describe(p) << "\n";
  EXPECT_GE(f.htod_bytes, kBytes / 4 * 3) << Describe(f);
  EXPECT_GE(f.dtoh_bytes, kBytes) << Describe(f);
  EXPECT_GE(f.gpu_fault_records, 1u) << Describe(f);
  EXPECT_GE(f.cpu_faults, 1u) << Describe(f);
  EXPECT_GE(p.htod_bytes, kBytes) << Describe(p);
  EXPECT_GE(p.dtoh_bytes, kBytes) << Describe(p);
  EXPECT_LT(p.gpu_fault_groups, f.gpu_fault_groups) << Describe(p) << " vs " << Describe(f);
  EXPECT_LT(p.cpu_faults, f.cpu_faults) << Describe(p) << " vs " << Describe(f);
  // The analysis attributes the faulting phase's fault groups to the kernel that raised them,
  // in the allocation they hit.
  const analysis::ProcessTrace pt = ForAnalysis(t);
  const analysis::UnifiedMemoryReport report = analysis::AnalyzeUnifiedMemory(pt);
  ASSERT_FALSE(report.gpu_faults.empty());
  EXPECT_NE(report.gpu_faults[0].kernel.find("IncrementKernel"), std::string::npos)
      << report.gpu_faults[0].kernel;
  EXPECT_EQ(report.gpu_faults[0].allocation.api, "cudaMallocManaged");
  EXPECT_EQ(report.gpu_faults[0].allocation.bytes, kBytes);
}

// Proves a program that uses no managed memory records no unified-memory record, with the kind
// on (by default), whether it copies (unified_memory none) or only launches (launch_bound).
TEST_P(UnifiedMemoryTest, NoManagedMemoryNoRecord) {
  Capture copies, launches;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_unified_memory, "64", "none"}, GetParam(), 1, &copies));
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_launch_bound, "2000"}, GetParam(), 1, &launches));
  for (const Capture* c : {&copies, &launches}) {
    const Trace& t = c->traces[0];
    EXPECT_NE(t.header.settings.at("LIBPROF_TRACE").find("uvm"), std::string::npos);
    EXPECT_EQ(t.records.unified_memory_counters.size(), 0u) << t.path;
    EXPECT_GT(t.records.kernels.size(), 0u) << t.path;
    EXPECT_EQ(c->run.err.find("unified memory"), std::string::npos)
        << "a warning about unified memory: " << c->run.err;
  }
}

using StreamOverlapTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(StreamOverlapTest);

// Proves kernels and copies carry the stream they ran on, and stream records give each stream's
// type as created (2 default, 2 non-blocking), in both issue orders.
TEST_P(StreamOverlapTest, StreamsAndTypes) {
  for (const char* order : {"per-chunk", "by-stage"}) {
    SCOPED_TRACE(order);
    Capture c;
    ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_stream_overlap, "--order", order}, GetParam(), 1, &c));
    const auto& r = c.traces[0].records;
    EXPECT_EQ(r.kernels.size(), 8u);
    std::set<uint32_t> kernel_streams;
    for (const Kernel& k : r.kernels) kernel_streams.insert(k.stream_id);
    EXPECT_EQ(kernel_streams.size(), 4u);
    std::map<uint32_t, StreamType> type_of;  // a stream may be reported more than once
    for (const StreamInfo& s : r.streams) type_of[s.stream_id] = s.type;
    std::map<StreamType, int> types;
    for (uint32_t id : kernel_streams) {
      EXPECT_TRUE(type_of.contains(id)) << "no stream record for stream " << id;
      if (type_of.contains(id)) ++types[type_of[id]];
    }
    EXPECT_EQ(types[StreamType::kDefault], 2) << "streams created with cudaStreamDefault";
    EXPECT_EQ(types[StreamType::kNonBlocking], 2) << "streams created with cudaStreamNonBlocking";
    EXPECT_EQ(CountIf(r.memcpys,
                      [](const Memcpy& m) {
                        return m.copy_kind == CopyKind::kHtoD && m.src_kind == MemoryKind::kPinned;
                      }),
              8u);
    EXPECT_EQ(CountIf(r.memcpys,
                      [](const Memcpy& m) {
                        return m.copy_kind == CopyKind::kDtoH && m.dst_kind == MemoryKind::kPinned;
                      }),
              8u);
    std::set<uint32_t> copy_streams;
    for (const Memcpy& m : r.memcpys) copy_streams.insert(m.stream_id);
    EXPECT_EQ(copy_streams, kernel_streams);
  }
}

// Proves work on the legacy default stream is recorded on the context's NULL stream.
TEST_P(StreamOverlapTest, SerialUsesTheNullStream) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_stream_overlap, "--order", "serial"}, GetParam(), 1, &c));
  const auto& r = c.traces[0].records;
  ASSERT_EQ(r.kernels.size(), 8u);
  std::set<uint32_t> kernel_streams;
  for (const Kernel& k : r.kernels) kernel_streams.insert(k.stream_id);
  ASSERT_EQ(kernel_streams.size(), 1u);
  ASSERT_FALSE(r.contexts.empty()) << "no context record";
  EXPECT_EQ(*kernel_streams.begin(), r.contexts.front().null_stream_id);
}

// Proves each context's creation is timed on the thread and inside the call that created it:
// the sample's first runtime call (cudaMallocHost, which CUPTI names cudaHostAlloc) creates the
// primary context, and start-up counts that call's time up to the creation as context creation,
// not as an allocation (H200, 2026-11-29: created 148 ms into a call of 186-197 ms).
TEST_P(StreamOverlapTest, ContextCreationIsTimedInsideTheCallThatCausedIt) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_stream_overlap}, GetParam(), 1, &c));
  const Trace& t = c.traces[0];
  const auto& r = t.records;
  ASSERT_EQ(r.contexts.size(), 1u);
  const ContextInfo& context = r.contexts.front();
  ASSERT_NE(context.created_ns, 0u) << "no creation time";
  EXPECT_GE(context.created_ns, t.header.start_time_ns);
  ASSERT_FALSE(r.kernels.empty());
  for (const Kernel& k : r.kernels) EXPECT_LT(context.created_ns, k.start_ns);
  const ApiCall* first_runtime = nullptr;
  for (const ApiCall& a : r.api_calls) {
    if (a.thread_id == context.created_thread_id && a.domain == ApiDomain::kRuntime &&
        (first_runtime == nullptr || a.start_ns < first_runtime->start_ns)) {
      first_runtime = &a;
    }
  }
  ASSERT_NE(first_runtime, nullptr) << "no runtime call on thread " << context.created_thread_id;
  const std::string name = t.Str(first_runtime->name_id);
  EXPECT_TRUE(name == "cudaHostAlloc" || name == "cudaMallocHost") << name;
  EXPECT_LE(first_runtime->start_ns, context.created_ns);
  EXPECT_LE(context.created_ns, first_runtime->end_ns);
  analysis::ProcessTrace p = ForAnalysis(t);
  analysis::SetDefaultWindow(&p);
  const analysis::StartUp s = analysis::FindStartUp(analysis::TraceIndex(p));
  EXPECT_EQ(s.context.top_api, name + " creating the context");
  EXPECT_EQ(s.context.top_api_ns, context.created_ns - first_runtime->start_ns);
  std::printf("context created %.3f ms into %s, which took %.3f ms\n",
              static_cast<double>(context.created_ns - first_runtime->start_ns) / 1e6,
              name.c_str(),
              static_cast<double>(first_runtime->end_ns - first_runtime->start_ns) / 1e6);
}

using ForkChildrenTest = ModeTest;
LIBPROF_INSTANTIATE_MODES(ForkChildrenTest);

// Proves children forked before CUDA initialised each record their own trace (3 in all, with
// the parent), a child forked after it writes none and exits promptly (no hang in an inherited
// CUPTI flush).
TEST_P(ForkChildrenTest, OneTracePerCudaProcess) {
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_fork_children}, GetParam(), 3, &c, kForkTimeout));
  const uint32_t parent = static_cast<uint32_t>(c.run.pid);
  size_t parents = 0;
  for (const Trace& t : c.traces) {
    SCOPED_TRACE(t.path);
    ExpectCompleteTrace(t);
    if (t.header.pid == parent) {
      ++parents;
    } else {
      EXPECT_EQ(t.header.parent_pid, parent) << "a child's parent pid";
    }
    EXPECT_EQ(CountIf(t.records.kernels,
                      [&](const Kernel& k) {
                        return t.KernelNames(k).find("SquareKernel") != std::string::npos;
                      }),
              1u);
    EXPECT_EQ(
        CountIf(t.records.memcpys, [](const Memcpy& m) { return m.copy_kind == CopyKind::kDtoH; }),
        1u);
  }
  EXPECT_EQ(parents, 1u);
}

// ---------------------------------------------------------------------------------------------
// Capture ranges

// Kernels of capture_ranges by phase: how many of each kernel name the trace holds.
std::map<std::string, size_t> KernelsByPhase(const Trace& t) {
  std::map<std::string, size_t> counts;
  for (const Kernel& k : t.records.kernels) {
    for (const char* phase : {"OutsideKernel", "ProfiledKernel", "NvtxKernel", "LateKernel"}) {
      if (t.KernelNames(k).find(phase) != std::string::npos) ++counts[phase];
    }
  }
  return counts;
}

class CaptureRangeTest : public GpuTest, public ::testing::WithParamInterface<Mode> {
 protected:
  std::map<std::string, size_t> Run(const std::map<std::string, std::string>& settings) {
    Capture c;
    if (!ProfileOk({LIBPROF_SAMPLE_capture_ranges}, GetParam(), 1, &c, kRunTimeout, settings)) {
      return {};
    }
    ExpectCompleteTrace(c.traces[0]);
    return KernelsByPhase(c.traces[0]);
  }
};

using Phases = std::map<std::string, size_t>;

// Proves LIBPROF_CAPTURE_RANGE=cudaProfilerApi records only the work between cudaProfilerStart
// and cudaProfilerStop.
TEST_P(CaptureRangeTest, CudaProfilerApi) {
  EXPECT_EQ(Run({{"LIBPROF_CAPTURE_RANGE", "cudaProfilerApi"}}), (Phases{{"ProfiledKernel", 50}}));
}

// Proves LIBPROF_CAPTURE_RANGE=nvtx:NAME records only the work inside that NVTX range.
TEST_P(CaptureRangeTest, NvtxRange) {
  EXPECT_EQ(Run({{"LIBPROF_CAPTURE_RANGE", "nvtx:capture-me"}}), (Phases{{"NvtxKernel", 30}}));
}

// Proves LIBPROF_DELAY_MS leaves out what ran before the delay and keeps what ran after.
TEST_P(CaptureRangeTest, Delay) {
  EXPECT_EQ(Run({{"LIBPROF_DELAY_MS", "1000"}}),
            (Phases{{"ProfiledKernel", 50}, {"NvtxKernel", 30}, {"LateKernel", 100}}));
}

// Proves LIBPROF_DURATION_MS stops recording CUDA activity once it has passed.
TEST_P(CaptureRangeTest, Duration) {
  EXPECT_EQ(Run({{"LIBPROF_DURATION_MS", "1000"}}), (Phases{{"OutsideKernel", 100}}));
}

INSTANTIATE_TEST_SUITE_P(Modes, CaptureRangeTest, ::testing::Values(Mode::kInjection, Mode::kPreload),
                         [](const auto& info) { return ModeName(info.param); });

// ---------------------------------------------------------------------------------------------
// PyTorch

// The one process of a trace file, loaded by the analysis (which accepts a trace cut short).
std::optional<analysis::ProcessTrace> LoadOne(const std::string& path) {
  std::vector<std::string> warnings;
  auto traces = analysis::LoadTraceFile(path, &warnings);
  if (!traces || traces->size() != 1) {
    ADD_FAILURE() << path << ": " << (traces ? "not one process" : traces.error());
    return std::nullopt;
  }
  return std::move(traces->front());
}

// ---------------------------------------------------------------------------------------------
// Two GPUs

using PeerCopyTest = GpuTest;

// Proves a copy between two GPUs without peer access is a staged-peer-copy finding naming both
// GPUs, at the call's host time, and a copy with peer access is none (two H200s, 2026-11-29:
// 256 MiB staged held the host 7.85 ms, direct 0.68 ms).
TEST_F(PeerCopyTest, StagedCopiesAreFoundAndDirectOnesAreNot) {
  constexpr int kCopies = 5;
  if (const RunResult probe = RunPlain({LIBPROF_SAMPLE_peer_copy, "1", "1"});
      probe.out.find("needs 2 GPUs") != std::string::npos) {
    GTEST_SKIP() << probe.out;
  }
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_peer_copy, "256", std::to_string(kCopies)},
                        Mode::kPreload, 1, &c));
  const bool peer = c.run.out.find("peer_access=yes") != std::string::npos;
  const auto trace = LoadOne(c.traces[0].path);
  ASSERT_TRUE(trace);
  size_t staged_pieces = 0, direct = 0;
  for (const Memcpy& m : trace->records.memcpys) {
    staged_pieces += analysis::IsStagedPeerPiece(m);
    direct += m.copy_kind == CopyKind::kPtoP;
  }
  const auto findings = analysis::FindFindings(*trace, analysis::FindingsOptions{});
  size_t staged = 0;
  for (const analysis::Finding& f : findings) {
    if (f.rule != analysis::RuleId::kStagedPeerCopy) continue;
    ++staged;
    EXPECT_NE(f.explanation.find("(256.00 MiB GPU 0 → GPU 1) went through host memory"),
              std::string::npos)
        << f.explanation;
    if (staged == 1) std::printf("%s\n", f.explanation.c_str());
  }
  std::printf("staged pieces %zu, staged-peer-copy findings %zu, direct copies %zu (peer %s)\n",
              staged_pieces, staged, direct, peer ? "yes" : "no");
  EXPECT_EQ(staged_pieces, 2u * kCopies) << "a DtoH on GPU 0 and an HtoD on GPU 1 per copy";
  EXPECT_EQ(staged, static_cast<size_t>(kCopies));
  EXPECT_EQ(direct, peer ? static_cast<size_t>(kCopies) : 0u);
}

using GpuPipelineTest = GpuTest;

// Proves GPU 0's idle time behind events recorded on GPU 1 (a pipeline across GPUs, all work
// issued at once) is the other GPU's, not launch overhead.
TEST_F(GpuPipelineTest, IdleWaitingForTheOtherGpuIsItsOwnCause) {
  if (const RunResult probe = RunPlain({LIBPROF_SAMPLE_gpu_pipeline, "1", "1"});
      probe.out.find("needs 2 GPUs") != std::string::npos) {
    GTEST_SKIP() << probe.out;
  }
  Capture c;
  ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_gpu_pipeline, "40", "4000"}, Mode::kPreload, 1, &c));
  const auto trace = LoadOne(c.traces[0].path);
  ASSERT_TRUE(trace);
  bool found = false;
  for (const analysis::Finding& f : analysis::FindFindings(*trace, analysis::FindingsOptions{})) {
    if (f.rule != analysis::RuleId::kGpuIdleBreakdown || f.device_id != 0u) continue;
    found = true;
    std::printf("%s\n", f.explanation.c_str());
    const auto& idle = std::get<analysis::IdleBreakdownDetails>(f.details).idle;
    EXPECT_GE(idle.other_device_ns, idle.total() * 8 / 10) << f.explanation;
    EXPECT_NE(f.explanation.find("Most idle time had work waiting for another GPU"),
              std::string::npos)
        << f.explanation;
  }
  EXPECT_TRUE(found) << "no gpu-idle-breakdown on GPU 0: it should idle while GPU 1 works";
}

using HostFunctionTest = GpuTest;

// Proves the stream of each host-function call (and memory wait) is recorded, and the GPU's idle
// time behind the host functions (on the kernels' stream, on another through an event, on the
// legacy stream), inside graphs with a host node, or behind waits on a memory value the host
// writes is theirs, not launch overhead: the program issues all its work at once.
TEST_F(HostFunctionTest, IdleBehindHostFunctionsIsTheirs) {
  constexpr int kSteps = 40;
  for (const std::string mode : {"stream", "event", "legacy", "graph", "memory_wait"}) {
    SCOPED_TRACE(mode);
    Capture c;
    ASSERT_TRUE(ProfileOk({LIBPROF_SAMPLE_host_function, std::to_string(kSteps), "2000", mode},
                          Mode::kPreload, 1, &c));
    EXPECT_NE(c.run.out.find("host_functions=" + std::to_string(kSteps)), std::string::npos)
        << c.run.out;
    const auto trace = LoadOne(c.traces[0].path);
    ASSERT_TRUE(trace);
    std::set<uint32_t> kernel_streams;
    for (const Kernel& k : trace->records.kernels) kernel_streams.insert(k.stream_id);
    ASSERT_EQ(kernel_streams.size(), 1u);
    size_t functions = 0;
    for (const ApiCall& call : trace->records.api_calls) {
      const std::string name(trace->Str(call.name_id));
      if (name != "cudaLaunchHostFunc" && name != "cudaStreamAddCallback" &&
          !name.starts_with("cuStreamWaitValue32")) {
        continue;
      }
      ++functions;
      ASSERT_NE(call.stream_id, kNoStream) << name;
      // On the kernels' stream but in event and legacy modes (and graph mode's capture: the
      // same stream).
      EXPECT_EQ(call.stream_id == *kernel_streams.begin(), mode != "event" && mode != "legacy")
          << name;
    }
    EXPECT_EQ(functions, mode == "graph" ? 1u : static_cast<size_t>(kSteps));
    const auto findings = analysis::FindFindings(*trace, analysis::FindingsOptions{});
    bool found = false;
    for (const analysis::Finding& f : findings) {
      if (f.rule != analysis::RuleId::kGpuIdleBreakdown) continue;
      found = true;
      const auto& idle = std::get<analysis::IdleBreakdownDetails>(f.details).idle;
      std::printf("%s: %s\n", mode.c_str(), f.explanation.c_str());
      const uint64_t held = mode == "graph"         ? idle.in_graph_ns
                            : mode == "memory_wait" ? idle.memory_wait_ns
                                                    : idle.host_function_ns;
      EXPECT_GE(held, idle.total() * 8 / 10) << f.explanation;
      const char* verdict = mode == "graph" ? "Most idle time was inside CUDA graphs"
                            : mode == "memory_wait"
                                ? "Most idle time had work waiting in its stream for a memory "
                                  "value (most behind cuStreamWaitValue32"
                                : "Most idle time had work waiting in its stream for host "
                                  "functions";
      EXPECT_NE(f.explanation.find(verdict), std::string::npos) << f.explanation;
    }
    EXPECT_TRUE(found) << "no gpu-idle-breakdown: the GPU should idle most of the time";
  }
}

class TorchTest : public GpuTest {
 protected:
  void SetUp() override {
    SetUpWith("import torch; assert torch.cuda.is_available()", "CUDA-enabled torch");
  }
  // GpuTest's set-up, then a skip unless python_ runs `probe` (what it needs, in words: `needs`).
  void SetUpWith(const char* probe, const char* needs) {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    python_ = Python();
    const RunResult result = RunPlain({python_, "-c", probe}, kTorchTimeout);
    if (result.exit_code != 0) {
      GTEST_SKIP() << python_ << " has no " << needs << ":\n" << Tail(result.err, 500);
    }
  }
  // The trace of a Python program run under libprof in `mode` as one process; nullopt, the test
  // having failed, when the run or its trace was unusable.
  std::optional<analysis::ProcessTrace> TraceOfRun(
      const std::vector<std::string>& argv, Mode mode = Mode::kPreload,
      const std::map<std::string, std::string>& settings = {}) {
    Capture c;
    if (!ProfileOk(argv, mode, 1, &c, kTorchTimeout, settings)) return std::nullopt;
    return LoadOne(c.traces[0].path);
  }
  // Its whole-trace findings (default options).
  std::optional<std::vector<analysis::Finding>> FindingsOfRun(
      const std::vector<std::string>& argv, Mode mode = Mode::kPreload,
      const std::map<std::string, std::string>& settings = {}) {
    const auto trace = TraceOfRun(argv, mode, settings);
    if (!trace) return std::nullopt;
    return analysis::FindFindings(*trace, analysis::FindingsOptions{});
  }
  std::string python_;
};

// Proves libprof preloaded into a PyTorch process leaves its output unchanged and records its
// kernels and the NVTX range pushed through torch.cuda.nvtx (torch's own NVTX instance).
TEST_F(TorchTest, PreloadedIntoPyTorch) {
  const std::vector<std::string> argv = {python_, LIBPROF_TORCH_LOOP_PY};
  const RunResult baseline = RunPlain(argv, kTorchTimeout);
  ASSERT_EQ(baseline.exit_code, 0) << Tail(baseline.err);

  Capture c;
  ASSERT_TRUE(ProfileOk(argv, Mode::kPreload, 1, &c, kTorchTimeout));
  EXPECT_EQ(c.run.out, baseline.out);
  const Trace& t = c.traces[0];
  ExpectCompleteTrace(t);
  EXPECT_GE(t.records.kernels.size(), 1000u) << "1000 add_ kernels and a matmul";
  EXPECT_GT(CountIf(t.records.nvtx_events,
                    [&](const NvtxEvent& e) {
                      return e.kind == NvtxKind::kPushPop && t.Str(e.message_id) == "torch_loop";
                    }),
            0u)
      << "torch.cuda.nvtx range missing";
}

// Proves the case of an application that runs its own CUPTI profiler (torch.profiler) under
// libprof: CUPTI serves one client (CUDA 13.0) and libprof got it first, so libprof says so on
// stderr, its trace stays complete, and the application runs to the end with its profiler giving
// CPU activity only (Kineto's own warning says CUDA activities are missing).
TEST_F(TorchTest, TorchProfilerInTheSameProcess) {
  const std::vector<std::string> argv = {python_, LIBPROF_TORCH_PROFILER_PY, "2"};
  const RunResult baseline = RunPlain(argv, kTorchTimeout);
  ASSERT_EQ(baseline.exit_code, 0) << Tail(baseline.err);
  EXPECT_NE(baseline.out.find("profiler_kernel_events_positive=True"), std::string::npos);

  Capture c;
  ASSERT_TRUE(ProfileOk(argv, Mode::kPreload, 1, &c, kTorchTimeout));
  EXPECT_NE(c.run.out.find("sum_positive=True"), std::string::npos) << c.run.out;
  EXPECT_NE(c.run.out.find("profiler_kernel_events_positive="), std::string::npos)
      << "torch.profiler must still run to the end";
  EXPECT_NE(c.run.err.find("torch.profiler in this process will record CPU activity only"),
            std::string::npos)
      << "stderr:\n" << Tail(c.run.err);
  ExpectCompleteTrace(c.traces[0]);
  EXPECT_GT(c.traces[0].records.kernels.size(), 100u);
}

// Proves the buffer-takeover warning does not fire for a program that merely launches slowly.
TEST_F(TorchTest, SlowProgramIsNotMistakenForTakeover) {
  Capture c;
  ASSERT_TRUE(ProfileOk({python_, LIBPROF_TORCH_PROFILER_PY, "4", "--no-profiler"}, Mode::kPreload,
                        1, &c, kTorchTimeout));
  EXPECT_EQ(c.run.err.find("has taken over"), std::string::npos) << Tail(c.run.err);
  ExpectCompleteTrace(c.traces[0]);
  EXPECT_GT(c.traces[0].records.kernels.size(), 1000u);
}

// Proves PyTorch's context creation is found under the default API filter: PyTorch creates its
// context inside a call the filter leaves out (cudaDeviceGetStreamPriorityRange with PyTorch
// 2.11), and that one call is recorded with the context's creation inside it, so start-up counts
// it as context creation; the filtered calls after it are not recorded (the watch ended).
TEST_F(TorchTest, ContextCreationInsideAFilteredCallIsRecorded) {
  Capture c;
  ASSERT_TRUE(ProfileOk({python_, LIBPROF_TORCH_LOOP_PY}, Mode::kPreload, 1, &c, kTorchTimeout));
  const Trace& t = c.traces[0];
  const auto& r = t.records;
  ASSERT_EQ(r.contexts.size(), 1u);
  const ContextInfo& context = r.contexts.front();
  ASSERT_NE(context.created_ns, 0u) << "no creation time";
  const ApiCall* creating = nullptr;
  for (const ApiCall& a : r.api_calls) {
    if (a.thread_id == context.created_thread_id && a.start_ns <= context.created_ns &&
        context.created_ns <= a.end_ns && (creating == nullptr || a.start_ns < creating->start_ns)) {
      creating = &a;
    }
  }
  ASSERT_NE(creating, nullptr) << "no recorded call around the context's creation";
  const std::string name = t.Str(creating->name_id);
  EXPECT_NE(creating->correlation_id, 0u);
  // Filtered queries PyTorch makes before and after every operation: none recorded.
  for (const char* filtered : {"cudaGetDevice", "cudaStreamIsCapturing", "cuCtxGetCurrent"}) {
    EXPECT_EQ(CountIf(r.api_calls, [&](const ApiCall& a) { return t.Str(a.name_id) == filtered; }),
              name == filtered ? 1u : 0u)
        << filtered;
  }
  analysis::ProcessTrace p = ForAnalysis(t);
  analysis::SetDefaultWindow(&p);
  const analysis::StartUp s = analysis::FindStartUp(analysis::TraceIndex(p));
  EXPECT_EQ(s.context.top_api, name + " creating the context");
  EXPECT_EQ(s.context.top_api_ns, context.created_ns - creating->start_ns);
  EXPECT_GT(s.context.top_api_ns, 1'000'000u) << "creating a context takes milliseconds";
  std::printf("context created %.3f ms into %s, which took %.3f ms\n",
              static_cast<double>(context.created_ns - creating->start_ns) / 1e6, name.c_str(),
              static_cast<double>(creating->end_ns - creating->start_ns) / 1e6);
}

// ---------------------------------------------------------------------------------------------
// Python frames (issue 19): the call site of a Python program is its script's line.

// The 1-based line of `path` that ends with "# " + marker.
uint32_t LineOf(const std::string& path, const std::string& marker) {
  std::ifstream file(path);
  std::string text;
  for (uint32_t line = 1; std::getline(file, text); ++line) {
    if (text.size() >= marker.size() + 2 && text.ends_with("# " + marker)) return line;
  }
  ADD_FAILURE() << path << " has no line marked " << marker;
  return 0;
}

class PythonFramesTest : public TorchTest {
 protected:
  void SetUp() override {
    SetUpWith("import torch, torchvision; assert torch.cuda.is_available()",
              "CUDA-enabled torch+torchvision");
  }
  // The trace file of a capture with one process.
  std::string OnlyTrace(const Capture& c) {
    EXPECT_EQ(c.traces.size() + c.errors.size(), 1u);
    return c.traces.empty() ? "" : c.traces[0].path;
  }
};

// Proves the .item() loop's wait is named by the script's line: the host-wait finding with the
// most time lost has the call site "torch_item_loop.py:LINE in step", with the Python frames
// above the native ones in its stack.
// PyTorch releases the GIL around .item() (THPVariable_item's gil_scoped_release): the frames
// are read without it (python_frames.h).
TEST_F(PythonFramesTest, ItemLoopFindingNamesTheScriptLine) {
  const auto findings = FindingsOfRun({python_, LIBPROF_TORCH_ITEM_LOOP_PY, "100"});
  ASSERT_TRUE(findings.has_value());
  const std::string site =
      "torch_item_loop.py:" + std::to_string(LineOf(LIBPROF_TORCH_ITEM_LOOP_PY, "the wait")) +
      " in step";
  const analysis::Finding* top = nullptr;
  for (const analysis::Finding& f : *findings) {
    if (analysis::Rule(f.rule).family != analysis::RuleFamily::kHostWait) continue;
    if (top == nullptr || f.blocked_ns > top->blocked_ns) top = &f;
  }
  ASSERT_NE(top, nullptr) << "no host-wait finding";
  EXPECT_NE(top->call_site.find(site), std::string::npos) << top->call_site;
  ASSERT_FALSE(top->stack.empty());
  EXPECT_FALSE(top->stack.front().python_file.empty()) << "Python frames come first";
}

// Proves each way torch_waits.py waits is a host wait found at its own line, with PyTorch's
// words for what that line did (analysis/rules/framework_hints.h), in the whole findings.
TEST_F(PythonFramesTest, EveryWaitIsNamedInPyTorchsWordsAtItsLine) {
  const auto findings = FindingsOfRun({python_, LIBPROF_TORCH_WAITS_PY, "3"});
  ASSERT_TRUE(findings.has_value());
  const std::pair<const char*, const char*> expected[] = {
      {"item", "reads a number from a CUDA tensor"},
      {"cpu", "copies a CUDA tensor to the CPU"},
      {"tolist", "copies a CUDA tensor to the CPU"},
      {"synchronize", "this call is torch.cuda.synchronize()"},
      {"print", "formats a CUDA tensor as text"},
      {"float", "reads a number from a CUDA tensor"},
      {"bool", "reads a number from a CUDA tensor"}};
  for (const auto& [marker, words] : expected) {
    const std::string site =
        "torch_waits.py:" + std::to_string(LineOf(LIBPROF_TORCH_WAITS_PY, marker)) + " in main";
    size_t at_line = 0, with_words = 0;
    for (const analysis::Finding& f : *findings) {
      if (analysis::Rule(f.rule).family != analysis::RuleFamily::kHostWait) continue;
      if (f.call_site.find(site) == std::string::npos || f.blocked_ns < 1'000'000) continue;
      ++at_line;
      with_words += f.explanation.find(words) != std::string::npos;
    }
    EXPECT_GE(at_line, 2u) << marker << ": waits of a millisecond or more at " << site;
    EXPECT_EQ(with_words, at_line) << marker << ": " << words;
  }
}

// Proves a blocking call is named by its Python caller whether the thread holds the GIL or
// released it (and the program runs on): the same cudaDeviceSynchronize, called through ctypes
// with the GIL held (PyDLL) and released (CDLL), from the main thread and a second thread, has
// its caller's function and line as the innermost Python frame.
TEST_F(PythonFramesTest, CallerIsReadWithOrWithoutTheGil) {
  const std::vector<std::string> argv = {python_, LIBPROF_TORCH_GIL_FREE_SYNC_PY, "50"};
  Capture c;
  ASSERT_TRUE(ProfileOk(argv, Mode::kPreload, 1, &c, kTorchTimeout));
  EXPECT_NE(c.run.out.find("calls=200 all_ok=True"), std::string::npos) << c.run.out;
  const auto trace = LoadOne(c.traces[0].path);
  ASSERT_TRUE(trace.has_value());
  const analysis::CallSites sites(*trace);
  const uint32_t with_line = LineOf(LIBPROF_TORCH_GIL_FREE_SYNC_PY, "sync with the GIL");
  const uint32_t without_line = LineOf(LIBPROF_TORCH_GIL_FREE_SYNC_PY, "sync without the GIL");
  std::map<std::string, size_t> innermost;  // "function:line" -> calls
  for (const ApiCall& call : trace->records.api_calls) {
    if (trace->Str(call.name_id) != "cudaDeviceSynchronize") continue;
    const std::vector<analysis::FrameView>& frames = sites.Frames(call.stack_id);
    ASSERT_FALSE(frames.empty()) << "a blocking call without a stack";
    std::string first = "(no Python frame)";
    for (const analysis::FrameView& f : frames) {
      if (f.python) {
        first = f.function + ":" + std::to_string(f.line);
        break;
      }
    }
    ++innermost[first];
  }
  // The generator expression inside each function is the innermost frame (its name differs by
  // version: "<genexpr>" or "with_gil.<locals>.<genexpr>"), so the line is what is compared.
  size_t with_gil = 0, without_gil = 0;
  for (const auto& [site, calls] : innermost) {
    with_gil += site.ends_with(":" + std::to_string(with_line)) ? calls : 0;
    without_gil += site.ends_with(":" + std::to_string(without_line)) ? calls : 0;
  }
  EXPECT_EQ(with_gil, 100u) << testing::PrintToString(innermost);
  EXPECT_EQ(without_gil, 100u) << testing::PrintToString(innermost);
}

// Proves LIBPROF_BACKTRACE=all survives a PyTorch training loop (ResNet-18 forward, backward on
// autograd's own threads, SGD): same output, complete trace, launches with stacks, and the
// forward pass's launches (made without the GIL) named by the script's Python frames.
TEST_F(PythonFramesTest, BacktraceAllOnResNetTraining) {
  const std::vector<std::string> argv = {python_, LIBPROF_TORCH_RESNET_STEP_PY, "10"};
  const RunResult baseline = RunPlain(argv, kTorchTimeout);
  ASSERT_EQ(baseline.exit_code, 0) << Tail(baseline.err);
  Capture c;
  ASSERT_TRUE(ProfileOk(argv, Mode::kPreload, 1, &c, kTorchTimeout,
                        {{"LIBPROF_BACKTRACE", "all"}}));
  EXPECT_EQ(c.run.out, baseline.out);
  ExpectCompleteTrace(c.traces[0]);
  const auto trace = LoadOne(c.traces[0].path);
  ASSERT_TRUE(trace.has_value());
  const analysis::CallSites sites(*trace);
  size_t launches = 0, launches_with_stack = 0, launches_in_script = 0;
  for (const ApiCall& call : trace->records.api_calls) {
    if (trace->Str(call.name_id) != "cudaLaunchKernel") continue;
    ++launches;
    launches_with_stack += call.stack_id != 0;
    for (const analysis::FrameView& f : sites.Frames(call.stack_id)) {
      if (f.python && f.file.ends_with("torch_resnet_step.py")) {
        ++launches_in_script;
        break;
      }
    }
  }
  EXPECT_GT(launches, 500u);
  EXPECT_EQ(launches_with_stack, launches);
  EXPECT_GE(launches_in_script, 10u * 20) << "10 steps, at least 20 forward launches each";
}

// Proves stacks survive a crash: a Python program that calls os.abort() mid-run leaves a trace
// whose calls' stacks are all defined (before, they were written only by a clean finish).
TEST_F(PythonFramesTest, AbortKeepsStacks) {
  const Capture c = Profile({python_, LIBPROF_TORCH_ITEM_LOOP_PY, "100000",
                             "--abort-after-steps", "60"},
                            Mode::kPreload, kTorchTimeout, {{"LIBPROF_FLUSH_INTERVAL_MS", "100"}});
  ASSERT_FALSE(c.run.timed_out);
  EXPECT_EQ(c.run.exit_code, 128 + SIGABRT) << Tail(c.run.err);
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(dir_ + "/traces" + std::to_string(profiles_))) {
    paths.push_back(entry.path());
  }
  ASSERT_EQ(paths.size(), 1u);
  const auto trace = LoadOne(paths[0]);
  ASSERT_TRUE(trace.has_value());
  EXPECT_FALSE(trace->records.run_end.has_value()) << "the run did not end cleanly";
  const analysis::CallSites sites(*trace);
  size_t with_stack = 0, known = 0;
  for (const ApiCall& call : trace->records.api_calls) {
    if (call.stack_id == 0) continue;
    ++with_stack;
    known += sites.Of(call.stack_id).known;
  }
  EXPECT_GT(with_stack, 50u) << "60 steps, each .item() a copy and a sync with a stack";
  EXPECT_EQ(known, with_stack) << "calls whose stack is missing";
}

// ---------------------------------------------------------------------------------------------
// Autotuners and compilers: one-time work told from the stacks (analysis/model/one_time_work.h)

bool IsHostTime(const analysis::Finding& f) {
  return analysis::TimeKindOf(analysis::Rule(f.rule).family) == analysis::TimeKind::kHost;
}

// A run's host findings by the one-time work they lie in, and those called from `site` (and
// through `api`, when given): how many, and how many of those were marked as one-time work.
struct OneTimeTally {
  std::map<analysis::OneTimeWork, size_t> by_kind;
  size_t at_site = 0, at_site_marked = 0;
};
OneTimeTally TallyOneTime(const std::vector<analysis::Finding>& findings,
                          const std::string& site, const std::string& api = "") {
  OneTimeTally t;
  for (const analysis::Finding& f : findings) {
    if (!IsHostTime(f)) continue;
    ++t.by_kind[f.one_time];
    if ((api.empty() || f.api == api) && f.call_site.find(site) != std::string::npos) {
      ++t.at_site;
      t.at_site_marked += f.one_time != analysis::OneTimeWork::kNone;
    }
  }
  return t;
}

class AutotuneTest : public TorchTest {
 protected:
  void SetUp() override {
    SetUpWith("import torch, triton; assert torch.cuda.is_available()",
              "CUDA-enabled torch with Triton");
  }
};

// Proves the waits of cuDNN's benchmark search and of @triton.autotune in a real PyTorch process
// are one-time work of the right tuner, from the frames this PyTorch and Triton record, and that
// the loop's own .item() waits at their line are not.
TEST_F(AutotuneTest, TunersWaitsAreOneTimeWorkAndTheLoopsAreNot) {
  const auto findings = FindingsOfRun({python_, LIBPROF_TORCH_AUTOTUNE_PY, "12"});
  ASSERT_TRUE(findings.has_value());
  const std::string site = "torch_autotune.py:" +
                           std::to_string(LineOf(LIBPROF_TORCH_AUTOTUNE_PY, "the wait")) +
                           " in main";
  // .item() reads back through cudaStreamSynchronize; the searches use event and device
  // synchronisation.
  OneTimeTally t = TallyOneTime(*findings, site, "cudaStreamSynchronize");
  const size_t cudnn = t.by_kind[analysis::OneTimeWork::kCudnnSearch];
  const size_t triton = t.by_kind[analysis::OneTimeWork::kTritonAutotuning];
  std::printf("cuDNN search waits %zu, Triton autotuning waits %zu, loop waits %zu\n", cudnn,
              triton, t.at_site);
  EXPECT_GE(cudnn, 3u) << "a search per input shape, each timing several candidates";
  EXPECT_GE(triton, 4u) << "do_bench synchronises for each of the 8 configs";
  EXPECT_GE(t.at_site, 1u) << "the steady loop's .item() waits at " << site;
  EXPECT_EQ(t.at_site_marked, 0u);
}

class TunableOpTest : public TorchTest {
 protected:
  void SetUp() override {
    SetUpWith("import torch; assert torch.cuda.is_available(); torch.cuda.tunable.enable",
              "CUDA-enabled torch with TunableOp");
  }
};

// Proves the waits of PyTorch's TunableOp timing GEMM solutions in a real PyTorch process are
// one-time work, from the frames this PyTorch records, and the loop's .item() waits are not.
TEST_F(TunableOpTest, TuningWaitsAreOneTimeWorkAndTheLoopsAreNot) {
  const auto findings = FindingsOfRun({python_, LIBPROF_TORCH_TUNABLEOP_PY, "20"});
  ASSERT_TRUE(findings.has_value());
  const std::string site = "torch_tunableop.py:" +
                           std::to_string(LineOf(LIBPROF_TORCH_TUNABLEOP_PY, "the wait")) +
                           " in main";
  OneTimeTally t = TallyOneTime(*findings, site);
  const size_t tuning = t.by_kind[analysis::OneTimeWork::kTunableOp];
  std::printf("TunableOp tuning waits %zu, loop waits %zu\n", tuning, t.at_site);
  EXPECT_GE(tuning, 3u) << "TunableOp times candidates for each of the 3 shapes";
  EXPECT_GE(t.at_site, 1u) << "the steady loop's .item() waits at " << site;
  EXPECT_EQ(t.at_site_marked, 0u);
}

class JaxTest : public TorchTest {
 protected:
  void SetUp() override {
    SetUpWith("import jax; assert jax.devices('gpu')", "JAX with a GPU");
  }
};

// Proves XLA's autotuning in a real JAX program (its candidate syncs and redzone checks on XLA's
// own threads) is one-time work, and the program's own uploads at its line are not.
TEST_F(JaxTest, XlasAutotuningIsOneTimeWork) {
  const auto trace = TraceOfRun({python_, LIBPROF_JAX_LOOP_PY}, Mode::kInjection,
                                {{"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}});
  ASSERT_TRUE(trace.has_value());
  // The stretches of it the GPU rules leave out of the steady state: XLA's, on its threads,
  // and the cuBLAS/cuDNN handles XLA creates (a CUDA library's set-up).
  const analysis::StartUp start_up = analysis::FindStartUp(analysis::TraceIndex(*trace));
  const uint32_t xla = analysis::OneTimeWorkBit(analysis::OneTimeWork::kXlaAutotuning);
  const uint32_t set_up = analysis::OneTimeWorkBit(analysis::OneTimeWork::kLibrarySetUp);
  uint64_t one_time_ns = 0;
  size_t xla_stretches = 0;
  for (const analysis::StartUp::OneTimeSpan& s : start_up.one_time) {
    one_time_ns += s.span.length();
    EXPECT_EQ(s.kinds & ~(xla | set_up), 0u) << s.kinds;
    xla_stretches += (s.kinds & xla) != 0;
  }
  std::printf("XLA autotuning and library set-up: %zu stretches (%zu with XLA's), %.2f ms\n",
              start_up.one_time.size(), xla_stretches, static_cast<double>(one_time_ns) / 1e6);
  EXPECT_GE(xla_stretches, 1u);
  const auto findings = analysis::FindFindings(*trace, analysis::FindingsOptions{});
  OneTimeTally t = TallyOneTime(findings, "jax_loop.py:");
  const size_t tuned = t.by_kind[analysis::OneTimeWork::kXlaAutotuning];
  std::printf("XLA autotuning findings %zu, the program's own %zu\n", tuned, t.at_site);
  EXPECT_GE(tuned, 10u) << "XLA times candidate GEMM fusions while compiling the step";
  EXPECT_GE(t.at_site, 1u) << "jax_loop.py's pageable uploads";
  EXPECT_EQ(t.at_site_marked, 0u);
}

}  // namespace
}  // namespace libprof
