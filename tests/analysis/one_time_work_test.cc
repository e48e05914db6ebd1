// Proves that waits inside an autotuner or torch.compile's compilation are told from their
// stacks (the frames PyTorch 2.11, JAX and Triton recorded on an H200), and that the findings
// mark them, group each kind's calls in one row per rule and API whatever they waited for and
// wherever the tuner called from, list them after the steady state's, say what they are, count
// them apart in the headline and keep the mark through partial findings.
#include "analysis/model/one_time_work.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/reports/findings_report.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/findings_diff.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/rules/findings_partial.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

FrameView Native(std::string function, std::string module = "libfoo.so") {
  FrameView f;
  f.function = std::move(function);
  f.module = std::move(module);
  return f;
}

FrameView Python(std::string file, std::string function) {
  FrameView f;
  f.python = true;
  f.file = std::move(file);
  f.function = std::move(function);
  return f;
}

// An installed package's file, as CPython records it: "torch/cuda/__init__.py" under
// site-packages.
std::string Installed(const std::string& path) {
  return "/venv/lib/python3.12/site-packages/" + path;
}

TEST(OneTimeWorkTest, EachTunerIsToldFromTheFramesItsLibraryRecorded) {
  // JAX: the candidate syncs run on XLA's thread pool below xla::Autotuner::GetTunedConfig.
  EXPECT_EQ(OneTimeWorkOf({Native("cuEventSynchronize", "libcuda.so.1"),
                           Native("stream_executor::gpu::CudaTimer::GetElapsedDuration()"),
                           Native("xla::Autotuner::GetTunedConfig(xla::HloInstruction const*, "
                                  "int) const::$_0::operator()(...)")}),
            OneTimeWork::kXlaAutotuning);
  EXPECT_EQ(OneTimeWorkOf({Native("xla::gpu::GpuConvAlgorithmPicker::PickBestAlgorithm()")}),
            OneTimeWork::kXlaAutotuning);
  // PyTorch's cudnn.benchmark: cuDNN's frontend timing plans, under the user's conv call.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/nn/modules/conv.py"), "Conv2d._conv_forward"),
                           Native("cudaEventSynchronize", "libcudart.so.13"),
                           Native("std::vector<cudnn_frontend::ExecutionPlan_v8> cudnn_frontend::"
                                  "time_sorted_plan<(cudnn_frontend::CudnnFindSamplingTechnique)0>"
                                  "(cudnnContext*, ...)",
                                  "libtorch_cuda.so")}),
            OneTimeWork::kCudnnSearch);
  EXPECT_EQ(OneTimeWorkOf({Native("cudnnFindConvolutionForwardAlgorithmEx", "libcudnn.so.9")}),
            OneTimeWork::kCudnnSearch);
  // max-autotune: Inductor benchmarks through torch.cuda.synchronize and Triton's do_bench;
  // Inductor's own frames name it, not Triton's nor compilation's further out.
  EXPECT_EQ(
      OneTimeWorkOf({Python(Installed("torch/cuda/__init__.py"), "synchronize"),
                     Python(Installed("triton/testing.py"), "do_bench"),
                     Python(Installed("torch/_inductor/runtime/benchmarking.py"),
                            "InductorBenchmarker.benchmark_gpu"),
                     Python(Installed("torch/_inductor/scheduler.py"), "Scheduler.fuse_nodes")}),
      OneTimeWork::kInductorAutotuning);
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/_inductor/runtime/triton_heuristics.py"),
                                  "CachingAutotuner.benchmark_all_configs")}),
            OneTimeWork::kInductorAutotuning);
  // @triton.autotune in the user's own kernel.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/cuda/__init__.py"), "synchronize"),
                           Python(Installed("triton/testing.py"), "do_bench"),
                           Python(Installed("triton/runtime/autotuner.py"), "Autotuner._bench"),
                           Python("/home/me/add.py", "add")}),
            OneTimeWork::kTritonAutotuning);
  // PyTorch's TunableOp timing GEMM solutions on a new shape, below the user's matmul.
  EXPECT_EQ(OneTimeWorkOf({Python("/home/me/tunableop.py", "<module>"),
                           Native("cudaEventSynchronize", "libcudart.so.13"),
                           Native("at::cuda::tunable::StreamTimerNoSync::Duration()",
                                  "libtorch_cuda.so"),
                           Native("at::cuda::tunable::TunableOp<at::cuda::tunable::GemmParams<"
                                  "c10::Half> >::FindFastest(...)",
                                  "libtorch_cuda.so"),
                           Native("at::native::addmm_out_cuda_impl(...)", "libtorch_cuda.so")}),
            OneTimeWork::kTunableOp);
  // torch.fft's first call on a shape: cuFFT builds a plan and uploads its tables (an H200).
  EXPECT_EQ(OneTimeWorkOf({Native("cuMemcpyHtoD_v2", "libcuda.so.1"),
                           Native("cufftXtMakePlanMany", "libcufft.so.12"),
                           Native("at::native::CuFFTConfig::CuFFTConfig(...)", "libtorch_cuda.so"),
                           Python("/home/me/fft_sparse.py", "<module>")}),
            OneTimeWork::kLibrarySetUp);
  EXPECT_EQ(OneTimeWorkOf({Native("cudaMalloc", "libcudart.so.13"),
                           Native("cublasCreate_v2", "libcublas.so.13")}),
            OneTimeWork::kLibrarySetUp);
  // NCCL setting a communicator up on its own thread (PyTorch's nn.DataParallel, an H200):
  // its ranks, and the connections of an algorithm at its first collective.
  EXPECT_EQ(OneTimeWorkOf({Native("cudaMemcpyAsync", "libnccl.so.2"),
                           Native("initChannel(ncclComm*, int) [clone .part.4]", "libnccl.so.2"),
                           Native("ncclCommInitRankFunc(ncclAsyncJob*)", "libnccl.so.2"),
                           Native("ncclAsyncJobMain(void*)", "libnccl.so.2")}),
            OneTimeWork::kLibrarySetUp);
  EXPECT_EQ(OneTimeWorkOf({Native("cudaMemcpyAsync", "libnccl.so.2"),
                           Native("ncclCollPreconnectFunc(ncclAsyncJob*)", "libnccl.so.2")}),
            OneTimeWork::kLibrarySetUp);
  // A collective itself is no set-up.
  EXPECT_EQ(OneTimeWorkOf({Native("cudaLaunchKernelExC", "libnccl.so.2"),
                           Native("ncclLaunchKernel(ncclComm*, ncclKernelPlan*)", "libnccl.so.2"),
                           Native("ncclGroupEnd()", "libnccl.so.2")}),
            OneTimeWork::kNone);
  // torch.compile's lowering, with no tuner in sight.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/_inductor/fx_passes/fuse_attention.py"),
                                  "_get_sfdp_patterns"),
                           Python(Installed("torch/_inductor/compile_fx.py"), "partition_fn")}),
            OneTimeWork::kTorchCompile);
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/_dynamo/convert_frame.py"), "_compile")}),
            OneTimeWork::kTorchCompile);
  // mode="reduce-overhead" recording a CUDA graph (once per shape), its synchronize.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/cuda/__init__.py"), "synchronize"),
                           Python(Installed("torch/_inductor/cudagraph_trees.py"),
                                  "CUDAGraphTreeManager.record_function"),
                           Python(Installed("torch/_inductor/cudagraph_trees.py"),
                                  "CUDAGraphTreeManager._run")}),
            OneTimeWork::kTorchCompile);
}

TEST(OneTimeWorkTest, TheSteadyStatesOwnFramesAreNotOneTimeWork) {
  EXPECT_EQ(OneTimeWorkOf({}), OneTimeWork::kNone);
  // Every kernel torch.compile made launches through CachingAutotuner.run, tuned or not.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/_inductor/runtime/triton_heuristics.py"),
                                  "CachingAutotuner.run")}),
            OneTimeWork::kNone);
  // A benchmark script timing its own kernel with Triton's do_bench: the measurement it asked for.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/cuda/__init__.py"), "synchronize"),
                           Python(Installed("triton/testing.py"), "do_bench"),
                           Python("/home/me/bench_add.py", "main")}),
            OneTimeWork::kNone);
  // Replaying a recorded CUDA graph is the steady state's.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("torch/_inductor/cudagraph_trees.py"),
                                  "CUDAGraphTreeManager.execute_node"),
                           Python(Installed("torch/_inductor/cudagraph_trees.py"),
                                  "CUDAGraphTreeManager._run")}),
            OneTimeWork::kNone);
  // Triton's autotuner launching its chosen config, and an ordinary synchronize.
  EXPECT_EQ(OneTimeWorkOf({Python(Installed("triton/runtime/autotuner.py"), "Autotuner.run"),
                           Python(Installed("torch/cuda/__init__.py"), "synchronize")}),
            OneTimeWork::kNone);
  // A GEMM TunableOp tuned earlier, running its chosen solution.
  EXPECT_EQ(OneTimeWorkOf({Native("at::cuda::tunable::TunableOp<at::cuda::tunable::GemmParams<"
                                  "c10::Half> >::operator()(...)",
                                  "libtorch_cuda.so")}),
            OneTimeWork::kNone);
  // A program's own file that merely ends like PyTorch's, and a conv that runs, not searches.
  EXPECT_EQ(OneTimeWorkOf({Python("/home/me/mytorch/_inductor/graph.py", "lower")}),
            OneTimeWork::kNone);
  EXPECT_EQ(OneTimeWorkOf({Native("cudnnConvolutionForward", "libcudnn.so.9"),
                           Native("xla::gpu::ConvolutionThunk::ExecuteOnStream()")}),
            OneTimeWork::kNone);
  // A plan executing, a handle's GEMM, and a matrix descriptor (cheap, made per call).
  EXPECT_EQ(OneTimeWorkOf({Native("cufftXtExec", "libcufft.so.12"),
                           Native("cublasSgemm_v2", "libcublas.so.13"),
                           Native("cusparseCreateCsr", "libcusparse.so.12")}),
            OneTimeWork::kNone);
  // Python frames are looked at as Python frames only: a Python function named like XLA's.
  EXPECT_EQ(OneTimeWorkOf({Python("/home/me/x.py", "xla::Autotuner")}), OneTimeWork::kNone);
}

TEST(OneTimeWorkTest, IdsRoundTripAndNameEveryKind) {
  for (size_t k = 0; k < kOneTimeWorkKinds; ++k) {
    const auto work = static_cast<OneTimeWork>(k);
    EXPECT_EQ(OneTimeWorkFromId(OneTimeWorkId(work)), work);
    EXPECT_EQ(OneTimeWorkName(work).empty(), work == OneTimeWork::kNone);
    EXPECT_EQ(OneTimeWorkNote(work).starts_with("; inside "), work != OneTimeWork::kNone);
  }
  EXPECT_EQ(OneTimeWorkFromId("nope"), OneTimeWork::kNone);
}

// Proves `profview diff` keys one-time work as `findings` groups it: two runs whose tuners timed
// other candidates from other lines compare as one row, while the steady state's waits keep
// what they waited for and where from.
TEST(OneTimeWorkTest, DiffKeysOneTimeWorkByKindNotByCandidate) {
  Finding a;
  a.rule = RuleId::kSyncApi;
  a.api = "cuEventSynchronize";
  a.call_site = "cuEventSynchronize ← xla::gpu::GetElapsedDuration (xla_cuda_plugin.so)";
  a.blamed.push_back({.kind = "kernel", .name = "gemm_fusion_dot_1"});
  Finding b = a;
  b.call_site = "cuEventSynchronize ← xla::gpu::SynchronizeStream (xla_cuda_plugin.so)";
  b.blamed.front().name = "gemm_fusion_dot_7";
  EXPECT_NE(KeyOf(a), KeyOf(b));
  a.one_time = b.one_time = OneTimeWork::kXlaAutotuning;
  EXPECT_EQ(KeyOf(a), KeyOf(b));
  EXPECT_EQ(KeyOf(a).one_time, OneTimeWork::kXlaAutotuning);
  b.one_time = OneTimeWork::kCudnnSearch;
  EXPECT_NE(KeyOf(a), KeyOf(b));
}

// Adds a stack of native frames (innermost first) to `b` and returns its id.
uint32_t AddNativeStack(TraceBuilder& b, const std::vector<std::string>& functions) {
  TraceRecords& r = b.records();
  CallStack stack;
  stack.id = static_cast<uint32_t>(r.call_stacks.size() + 1);
  for (const std::string& function : functions) {
    StackFrame frame;
    frame.id = static_cast<uint32_t>(r.stack_frames.size() + 1);
    frame.address = 0x1000 * frame.id;
    frame.function_id = b.Intern(function);
    r.stack_frames.push_back(frame);
    stack.frame_ids.push_back(frame.id);
  }
  r.call_stacks.push_back(stack);
  return stack.id;
}

// A JAX-like process: a steady loop whose host waits twice on its own kernel `step`, then an
// autotuning burst that times three candidate kernels, each followed by a cuEventSynchronize
// from one of two timer functions; the first candidates' waits are the longest.
TraceBuilder AutotuningScenario() {
  TraceBuilder b;
  const uint32_t own = AddNativeStack(b, {"main"});
  const uint32_t timer =
      AddNativeStack(b, {"stream_executor::gpu::CudaTimer::GetElapsedDuration()",
                         "xla::Autotuner::GetTunedConfig(xla::HloInstruction const*, int) const"});
  const uint32_t sync =
      AddNativeStack(b, {"stream_executor::gpu::SynchronizeStream()",
                         "xla::Autotuner::GetTunedConfig(xla::HloInstruction const*, int) const"});
  double t = 100;
  for (int i = 0; i < 2; ++i, t += 1000) {
    b.Launch("step", t, t + 5, t + 10, t + 600, 7);
    b.Api("cuStreamSynchronize", t + 6, t + 601);
    b.records().api_calls.back().stack_id = own;
  }
  for (int i = 0; i < 3; ++i, t += 1000) {
    b.Launch("candidate_" + std::to_string(i), t, t + 5, t + 10, t + 900 - 100 * i, 7);
    b.Api("cuEventSynchronize", t + 6, t + 901 - 100 * i);
    b.records().api_calls.back().stack_id = i == 1 ? sync : timer;
  }
  b.SetEnd(t);
  return b;
}

class OneTimeFindingsTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(OneTimeFindingsTest, AutotunersWaitsAreMarkedGroupedAndListedAfterTheSteadyState) {
  const ProcessTrace trace = AutotuningScenario().RoundTrip(dir_.Path("t.pb"));
  const std::vector<Finding> all = FindFindings(trace, {});
  size_t tuned = 0, steady = 0;
  for (const Finding& f : all) {
    if (f.rule != RuleId::kSyncApi) continue;
    if (f.api == "cuEventSynchronize") {
      ++tuned;
      EXPECT_EQ(f.one_time, OneTimeWork::kXlaAutotuning);
      EXPECT_NE(f.explanation.find("; inside XLA's autotuning"), std::string::npos)
          << f.explanation;
      EXPECT_EQ(f.explanation.find("start-up"), std::string::npos) << f.explanation;
    } else {
      ++steady;
      EXPECT_EQ(f.one_time, OneTimeWork::kNone);
      EXPECT_EQ(f.explanation.find("inside"), std::string::npos) << f.explanation;
    }
  }
  ASSERT_EQ(tuned, 3u);
  ASSERT_EQ(steady, 2u);

  FindingsDigest digest;
  digest.Add(all);
  const std::vector<FindingGroup> groups = digest.Groups();
  std::vector<const FindingGroup*> syncs;
  for (const FindingGroup& g : groups) {
    if (g.worst.rule == RuleId::kSyncApi) syncs.push_back(&g);
  }
  // The steady state's wait first, though the tuner lost more; then one row for the three
  // candidates, whatever each waited for and from which of the tuner's lines it was called.
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_EQ(syncs[0]->worst.api, "cuStreamSynchronize");
  EXPECT_EQ(syncs[0]->count, 2u);
  EXPECT_EQ(syncs[1]->worst.api, "cuEventSynchronize");
  EXPECT_EQ(syncs[1]->count, 3u);
  EXPECT_EQ(syncs[1]->worst.blamed.front().name, "candidate_0");
  EXPECT_GT(syncs[1]->total_blocked_ns, syncs[0]->total_blocked_ns);

  const FindingsTotals totals = digest.Totals();
  EXPECT_EQ(totals.host_in_one_time, syncs[1]->total_blocked_ns);
  EXPECT_EQ(totals.host_in_start_up, 0u);
  EXPECT_EQ(totals.one_time_kinds, OneTimeWorkBit(OneTimeWork::kXlaAutotuning));

  FindingsReportContext context;
  const std::string table = FindingsTable(digest, context);
  EXPECT_NE(table.find(" in XLA's autotuning, paid once, listed last."), std::string::npos)
      << table;
  EXPECT_NE(table.find("sync-api (autotuning)"), std::string::npos) << table;
  const std::string json = FindingsJson(digest, context);
  EXPECT_NE(json.find("\"one_time\": \"xla-autotuning\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"host_in_one_time_ns\": " + std::to_string(totals.host_in_one_time)),
            std::string::npos)
      << json;
}

TEST_F(OneTimeFindingsTest, PartialFindingsKeepTheMarkAndItsTotals) {
  // (FindFindingsPartial reads the file in windows, as `profview findings` does.)
  const std::string path = dir_.Path("t.pb");
  AutotuningScenario().Write(path);
  auto partial = FindFindingsPartial({path}, {}, {});
  ASSERT_TRUE(partial.has_value()) << partial.error();
  auto parsed = ParseFindingsPartial(FindingsPartialJson(*partial), "part.json");
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  EXPECT_GT(partial->digest.sums.host_in_one_time, 0u);
  EXPECT_EQ(parsed->digest.sums.host_in_one_time, partial->digest.sums.host_in_one_time);
  EXPECT_EQ(parsed->digest.sums.one_time_kinds, OneTimeWorkBit(OneTimeWork::kXlaAutotuning));
  // One group of the three candidates' waits, the two counted without their text (the digest
  // wants a group's worst whole only) marked as the worst is.
  size_t marked = 0, waits = 0;
  for (const FindingsDigest::State::Group& g : parsed->digest.groups) {
    if (g.group.worst.api != "cuEventSynchronize") continue;
    ++waits;
    marked += g.group.worst.one_time == OneTimeWork::kXlaAutotuning;
    EXPECT_EQ(g.group.count, 3u);
  }
  EXPECT_EQ(waits, 1u);
  EXPECT_EQ(marked, 1u);
  // A partial naming a kind this profview does not know is refused, naming the kind.
  std::string json = FindingsPartialJson(*partial);
  const size_t at = json.find("\"xla-autotuning\"");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 16, "\"warp-autotuning\"");
  auto bad = ParseFindingsPartial(json, "part.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("warp-autotuning"), std::string::npos) << bad.error();
}

// A loop, XLA recompiling (three candidates 3 ms apart, each waited for from the autotuner's
// stack), the loop again. With `own_steps`, the program runs a few steps of its own between the
// second and third candidates, their syncs from its own stack.
TraceBuilder RecompilingLoop(bool own_steps) {
  TraceBuilder b;
  const uint32_t tuner = AddNativeStack(b, {"xla::gpu::GemmFusionAutotunerImpl::Profile()"});
  const uint32_t own = AddNativeStack(b, {"main"});
  auto loop = [&](double from) {
    for (int i = 0; i < 10; ++i) {
      const double t = from + 100 * i;
      b.Launch("step", t, t + 5, t + 10, t + 20, 7);
    }
  };
  loop(100);  // ops 110-120 ... 1010-1020
  for (int c = 0; c < 3; ++c) {
    const double t = 1100 + 3000 * c;  // candidates 1110-1210, 4110-4210, 7110-7210
    b.Launch("candidate_" + std::to_string(c), t, t + 5, t + 10, t + 110, 7, 200);
    b.Api("cuStreamSynchronize", t + 6, t + 111, 200);
    b.records().api_calls.back().stack_id = tuner;
  }
  if (own_steps) {
    for (int j = 0; j < 5; ++j) {  // ops 5010-5020 ... 5810-5820
      const double t = 5000 + 200 * j;
      b.Launch("own", t, t + 5, t + 10, t + 20, 7);
      b.Api("cuStreamSynchronize", t + 6, t + 21);
      b.records().api_calls.back().stack_id = own;
    }
  }
  loop(10000);  // ops 10010-10020 ... 10910-10920
  b.SetEnd(11000);
  return b;
}

const Finding* FindRule(const std::vector<Finding>& all, RuleId rule) {
  for (const Finding& f : all) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

// Proves the GPU rules leave out of the steady state the idle gaps that overlap one-time work
// (from the first to the last of the tuner's consecutive stacked calls), the compilation between
// its calls included, say so, and keep the gaps between the program's own calls that come
// between two of its runs.
TEST_F(OneTimeFindingsTest, IdleGapsDuringOneTimeWorkAreLeftOutOfTheSteadyState) {
  FindingsOptions options;
  options.gap_threshold_ns = 1'000'000;
  const ProcessTrace trace = RecompilingLoop(false).RoundTrip(dir_.Path("t.pb"));
  const std::vector<Finding> all = FindFindings(trace, options);
  const Finding* breakdown = FindRule(all, RuleId::kGpuIdleBreakdown);
  ASSERT_NE(breakdown, nullptr);
  const auto& details = std::get<IdleBreakdownDetails>(breakdown->details);
  // The gaps around and between the candidates: 1020-1110, 1210-4110, 4210-7110, 7210-10010.
  EXPECT_EQ(details.one_time_idle_ns, 8'690'000u);
  // The loops' own: 2 x 9 gaps of 90 us.
  EXPECT_EQ(details.idle.total(), 1'620'000u);
  EXPECT_EQ(breakdown->blocked_ns, 1'620'000u);
  EXPECT_NE(breakdown->explanation.find(", leaving out 8.69 ms idle during XLA's autotuning, "
                                        "paid once)"),
            std::string::npos)
      << breakdown->explanation;
  // The 2.9 ms gaps between candidates are no gpu-idle-gaps finding.
  EXPECT_EQ(FindRule(all, RuleId::kGpuIdleGaps), nullptr);
  const Finding* start_up = FindRule(all, RuleId::kStartUp);
  ASSERT_NE(start_up, nullptr);
  EXPECT_NE(start_up->explanation.find("XLA's autotuning after it, paid once too, held the GPU "
                                       "idle 8.69 ms, also left out"),
            std::string::npos)
      << start_up->explanation;
  EXPECT_EQ(std::get<StartUpDetails>(start_up->details).one_time_gpu_idle_ns, 8'690'000u);
  // The GPU headline says what it left out, and so do the JSON totals.
  FindingsDigest digest;
  digest.Add(all);
  EXPECT_EQ(digest.Totals().gpu_idle_in_one_time, 8'690'000u);
  EXPECT_NE(FindingsTable(digest, {}).find("; 8.69 ms more, while autotuners or compilers ran, "
                                           "is left out as paid once."),
            std::string::npos);
  EXPECT_NE(FindingsJson(digest, {}).find("\"gpu_idle_in_one_time_ns\": 8690000"),
            std::string::npos);

  // Without stacks the same gaps are the steady state's.
  TraceBuilder bare = RecompilingLoop(false);
  for (ApiCall& c : bare.records().api_calls) c.stack_id = 0;
  const std::vector<Finding> bare_all = FindFindings(bare.RoundTrip(dir_.Path("b.pb")), options);
  const Finding* bare_breakdown = FindRule(bare_all, RuleId::kGpuIdleBreakdown);
  ASSERT_NE(bare_breakdown, nullptr);
  EXPECT_EQ(bare_breakdown->blocked_ns, 1'620'000u + 8'690'000u);
  EXPECT_FALSE(std::get<IdleBreakdownDetails>(bare_breakdown->details).one_time_idle_ns);
  EXPECT_NE(FindRule(bare_all, RuleId::kGpuIdleGaps), nullptr);

  // The program's own stacked calls between two candidates end the tuner's run: the gaps
  // between its steps (4 x 190 us) are the steady state's, those touching a run still not.
  const std::vector<Finding> split =
      FindFindings(RecompilingLoop(true).RoundTrip(dir_.Path("s.pb")), options);
  const Finding* split_breakdown = FindRule(split, RuleId::kGpuIdleBreakdown);
  ASSERT_NE(split_breakdown, nullptr);
  const auto& split_details = std::get<IdleBreakdownDetails>(split_breakdown->details);
  EXPECT_EQ(split_details.idle.total(), 1'620'000u + 760'000u);
  // 1020-1110, 1210-4110, 4210-5010, 5820-7110, 7210-10010.
  EXPECT_EQ(split_details.one_time_idle_ns, 7'880'000u);
}

// A cuFFT plan made and destroyed around every transform, `plans` times (as .carry/s16/
// cufft_plan_loop.cu ran on the H200): each plan's set-up allocates (cuMemAlloc) and uploads its
// tables (a synchronous cuMemcpyHtoD that waits 50 µs for the previous transform), 400 µs of
// host work with the GPU idle, then the transform runs 20 µs.
TraceBuilder PlanPerTransformLoop(int plans) {
  TraceBuilder b;
  const uint32_t own = AddNativeStack(b, {"main"});
  const uint32_t plan = AddNativeStack(b, {"cufftPlan1d", "main"});
  double t = 100;
  b.Launch("warm", t, t + 5, t + 10, t + 20, 7);
  t += 100;
  // The plan's 8 MiB work area: `api`'s record of `op` at `at`.
  const auto work_area = [&](const char* api, MemoryOperation op, double at, double end) {
    const uint64_t corr = b.Api(api, at, end, 1, 0, ApiDomain::kDriver);
    b.records().memory_ops.push_back({.operation = op,
                                      .memory_kind = MemoryKind::kDevice,
                                      .address = 0x7000,
                                      .bytes = 8 << 20,
                                      .time_ns = Us(at + 1),
                                      .correlation_id = corr});
  };
  for (int i = 0; i < plans; ++i, t += 500) {
    work_area("cuMemAlloc", MemoryOperation::kAllocation, t, t + 30);
    b.records().api_calls.back().stack_id = plan;
    work_area("cuMemFree", MemoryOperation::kRelease, t + 445, t + 450);
    const uint64_t corr = b.Api("cuMemcpyHtoD", t + 300, t + 400);
    b.records().api_calls.back().stack_id = plan;
    b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 1 << 20, t + 350,
                t + 399, corr, 7, false);
    b.Launch("fft", t + 410, t + 415, t + 420, t + 440, 7);
    b.records().api_calls.back().stack_id = own;
  }
  b.Api("cudaDeviceSynchronize", t, t + 5);
  b.SetEnd(t + 10);
  return b;
}

// Made once per step, a library's set-up is no one-time work: its idle gaps and waits count,
// and the findings say to make the plan once. Made a few times, it still is.
TEST_F(OneTimeFindingsTest, ALibrarySetUpMadeAgainAndAgainIsNotPaidOnce) {
  const std::vector<Finding> all =
      FindFindings(PlanPerTransformLoop(40).RoundTrip(dir_.Path("t.pb")), {});
  const Finding* start_up = FindRule(all, RuleId::kStartUp);
  ASSERT_NE(start_up, nullptr);
  EXPECT_EQ(std::get<StartUpDetails>(start_up->details).recurring_library_set_ups, 40u);
  EXPECT_NE(start_up->explanation.find("a CUDA library's set-up recurred 40 times through the "
                                       "run"),
            std::string::npos)
      << start_up->explanation;
  const Finding* breakdown = FindRule(all, RuleId::kGpuIdleBreakdown);
  ASSERT_NE(breakdown, nullptr);
  EXPECT_FALSE(std::get<IdleBreakdownDetails>(breakdown->details).one_time_idle_ns);
  EXPECT_NE(breakdown->explanation.find("was in gaps in which the program made a CUDA library's "
                                        "plan or handle again"),
            std::string::npos)
      << breakdown->explanation;
  size_t copies = 0;
  for (const Finding& f : all) {
    if (f.api != "cuMemcpyHtoD") continue;
    ++copies;
    EXPECT_EQ(f.one_time, OneTimeWork::kNone) << f.explanation;
  }
  EXPECT_GT(copies, 0u);
  // The plans' workspaces, allocated and freed per plan: the plan's to fix, not an allocator's.
  const Finding* churn = FindRule(all, RuleId::kAllocChurn);
  ASSERT_NE(churn, nullptr);
  EXPECT_NE(churn->explanation.find("These allocations are a CUDA library's set-up"),
            std::string::npos)
      << churn->explanation;

  const std::vector<Finding> few =
      FindFindings(PlanPerTransformLoop(3).RoundTrip(dir_.Path("f.pb")), {});
  const Finding* few_start_up = FindRule(few, RuleId::kStartUp);
  ASSERT_NE(few_start_up, nullptr);
  EXPECT_EQ(std::get<StartUpDetails>(few_start_up->details).recurring_library_set_ups, 0u);
  size_t few_copies = 0;
  for (const Finding& f : few) {
    if (f.api != "cuMemcpyHtoD") continue;
    ++few_copies;
    EXPECT_EQ(f.one_time, OneTimeWork::kLibrarySetUp);
  }
  EXPECT_GT(few_copies, 0u);
}

// A jitted function given a new input shape every step (as .carry/s18/jax_recompile.py ran on
// the H200: 40 compilations over 40 steps): `steps` steps, each XLA's autotuner timing a
// candidate for 2 ms (its sync from the tuner's stack, the GPU idle around it) and then the
// step's kernel, its result read back from the program's own stack.
TraceBuilder RecompileEveryStep(int steps) {
  TraceBuilder b;
  const uint32_t tuner = AddNativeStack(b, {"xla::gpu::GemmFusionAutotunerImpl::Profile()"});
  const uint32_t own = AddNativeStack(b, {"main"});
  b.Launch("first", 100, 105, 110, 120, 7);
  for (int i = 0; i < steps; ++i) {
    const double t = 200 + 3000.0 * i;
    b.Launch("candidate", t, t + 5, t + 10, t + 30, 7, 200);
    b.Api("cuStreamSynchronize", t + 6, t + 31, 200);
    b.records().api_calls.back().stack_id = tuner;
    b.Api("cuStreamSynchronize", t + 2000, t + 2031, 200);  // the tuner's last look, 2 ms on
    b.records().api_calls.back().stack_id = tuner;
    b.Launch("step", t + 2500, t + 2505, t + 2510, t + 2600, 7);
    b.Api("cuStreamSynchronize", t + 2506, t + 2601);
    b.records().api_calls.back().stack_id = own;
  }
  b.SetEnd(200 + 3000.0 * steps);
  return b;
}

// Compiled again at every step, an autotuner's or compiler's work is no one-time work: its waits
// and idle gaps count, and the verdict names the recompilation. Compiled a few times, it still
// is paid once.
TEST_F(OneTimeFindingsTest, CompilationAtEveryStepIsNotPaidOnce) {
  const std::vector<Finding> all =
      FindFindings(RecompileEveryStep(40).RoundTrip(dir_.Path("r.pb")), {});
  const Finding* start_up = FindRule(all, RuleId::kStartUp);
  ASSERT_NE(start_up, nullptr);
  EXPECT_EQ(std::get<StartUpDetails>(start_up->details).recurring_compilations, 40u);
  EXPECT_NE(start_up->explanation.find("XLA's autotuning ran 40 times after it, all through the "
                                       "run, so it is not left out as paid once"),
            std::string::npos)
      << start_up->explanation;
  const Finding* breakdown = FindRule(all, RuleId::kGpuIdleBreakdown);
  ASSERT_NE(breakdown, nullptr);
  EXPECT_FALSE(std::get<IdleBreakdownDetails>(breakdown->details).one_time_idle_ns);
  EXPECT_NE(breakdown->explanation.find("in gaps in which XLA's autotuning ran again (40 runs all "
                                        "through the run): a function compiled anew"),
            std::string::npos)
      << breakdown->explanation;
  size_t tuner_waits = 0;
  for (const Finding& f : all) {
    if (f.thread_id != 200) continue;
    ++tuner_waits;
    EXPECT_EQ(f.one_time, OneTimeWork::kNone) << f.explanation;
  }
  EXPECT_GT(tuner_waits, 0u);

  const std::vector<Finding> few =
      FindFindings(RecompileEveryStep(4).RoundTrip(dir_.Path("f.pb")), {});
  const Finding* few_start_up = FindRule(few, RuleId::kStartUp);
  ASSERT_NE(few_start_up, nullptr);
  EXPECT_EQ(std::get<StartUpDetails>(few_start_up->details).recurring_compilations, 0u);
  size_t few_waits = 0;
  for (const Finding& f : few) {
    if (f.thread_id != 200) continue;
    ++few_waits;
    EXPECT_EQ(f.one_time, OneTimeWork::kXlaAutotuning) << f.explanation;
  }
  EXPECT_GT(few_waits, 0u);
}

}  // namespace
}  // namespace libprof::analysis::testing
