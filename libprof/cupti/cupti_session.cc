// CaptureSession on CUPTI's Activity API: the subscription, the timestamp callback, the activity
// buffers (requested from the pool, queued when complete, decoded on the writer thread) and the
// record kinds. When to record (capture gates) and whether another client took CUPTI over
// (takeover watch) are decided outside, in CUDA-free code; this file only carries them out.
//
// Layer: libprof/cupti/ (the only place that includes CUPTI). Start() runs inside cuInit and
// makes no CUDA call (cupti-facts.md 1.1). CUPTI's buffer callbacks are plain functions, so they
// reach the session through one global pointer, set before the callbacks are registered.
#include <cupti.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "libprof/backtrace/blocking_apis.h"
#include "libprof/backtrace/call_site_recorder.h"
#include "libprof/backtrace/stack_walker.h"
#include "libprof/capture_session.h"
#include "libprof/context_creating_calls.h"
#include "libprof/cupti/activity_decoder.h"
#include "libprof/cupti/activity_kinds.h"
#include "libprof/cupti/api_filter.h"
#include "libprof/cupti/api_names.h"
#include "libprof/cupti/callback_ids.h"
#include "libprof/cupti/cupti_api.h"
#include "libprof/cupti/managed_memory_gate.h"
#include "libprof/cupti/stream_blocking_calls.h"
#include "libprof/log.h"

namespace libprof {
namespace {

class CuptiSession;
std::atomic<CuptiSession*> g_session{nullptr};

// libprof's clock for CUPTI's records (clock.h): the same one TraceClock reads for NVTX.
uint64_t CUPTIAPI MonotonicTimestamp() { return ReadClockNs(CLOCK_MONOTONIC); }

// While CUPTI's unified-memory counters are on, how long the writer thread waits between
// flushes: CUPTI takes those events from the UVM driver's queue when flushed, and the driver drops
// what does not fit in it. Measured on an H100 (unified_memory 256 fault, docs/capture-notes.md):
// host→device events of a 256 MiB fault burst arrived 48-61% complete flushed every 1000 ms,
// 58-72% every 20 ms, 84-100% with these intervals. A flush itself took 12-21 ms there (waiting:
// 61-67 µs of CPU each), so the writer flushes nearly back to back while the counters are on.
constexpr uint32_t kUvmBusyFlushMs = 1;  // the last flush brought unified-memory records
constexpr uint32_t kUvmIdleFlushMs = 5;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runtime API calls (with a stack wanted) the calling thread is inside of: a driver call made
// within one is not walked again, since the runtime call already has the stack and the analysis
// looks at the outermost call.
thread_local uint32_t t_runtime_calls_open = 0;

class CuptiSession : public CaptureSession {
 public:
  bool Start(const Settings& settings, StringInterner* strings, BufferPool* pool,
             CaptureGates* gates, std::string* status) override;
  void Stop() override;
  void Stop(bool final);
  TraceClock clock() const override { return clock_; }
  CallSiteRecorder* call_sites() override { return call_sites_.get(); }
  uint32_t cupti_version() const override { return version_; }
  std::string cupti_path() const override { return api_ ? api_->path : ""; }

  // ActivitySource (writer thread).
  void Connect(FlushRequester* writer) override { writer_ = writer; }
  void Flush() override { Flush(/*forced=*/false); }
  void FlushFinal() override;
  bool TakeBuffer(TraceRecords* out) override;
  uint64_t TakeDropped() override;
  uint64_t TakeUndecoded() override;
  ActivityCounters Counters() override;
  void CountLaunches(bool on) override;
  uint32_t UrgentFlushIntervalMs() override;

  // CaptureGates::Switch (any thread, under the gates' lock).
  void SetRecording(bool on) override;

  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);

 private:
  // Logs a failed CUPTI call once, with CUPTI's own words. Returns whether it succeeded.
  bool Check(CUptiResult result, const char* what);
  std::string ResultString(CUptiResult result) const;
  void EnableKinds(const Settings& settings);
  void EnablePrepared(const ActivityKindToEnable& kind);  // under kinds_mutex_
  // A context exists (its CONTEXT_CREATED callback, on the thread whose call created it): notes
  // when, for its CONTEXT record (TakeBuffer), then sets up the kinds that waited for a driver.
  void OnContextCreated(const CUpti_ResourceData* data);
  // The program's first use of managed memory (managed_memory_gate.h): enables the kinds that
  // waited for it.
  void OnManagedMemory();
  void WatchManagedMemory(bool on);  // under kinds_mutex_
  static void WarnIfTorchProfilerPresent();
  // cuptiActivityFlushAll: completed buffers only, or everything (end of recording).
  void Flush(bool forced);
  void RequestWriterFlush() {
    if (FlushRequester* writer = writer_.load()) writer->RequestFlush();
  }
  void Enable(CUpti_ActivityKind kind, const char* name);
  void StartCallSites(const Settings& settings);
  bool WantsStack(bool runtime, CUpti_CallbackId cbid) const {
    const std::vector<uint8_t>& want = want_stack_[runtime ? 0 : 1];
    return cbid < want.size() && want[cbid] != 0;
  }
  void NoteCallSite(bool runtime, const CUpti_CallbackData* data);
  // Host functions and memory waits (stream_blocking_calls.h): their callbacks on, and the
  // stream each call names.
  void WatchStreamBlockingCalls(const Settings& settings);
  bool IsStreamBlockingCall(bool runtime, CUpti_CallbackId cbid) const {
    const std::vector<uint8_t>& watched = stream_blocking_cbids_[runtime ? 0 : 1];
    return cbid < watched.size() && watched[cbid] != 0;
  }
  void NoteStreamBlockingCall(bool runtime, CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  // LIBPROF_API_FILTER=significant: the filtered calls' callbacks, on until the first context
  // exists, so that the call creating it is recorded even when filtered (ContextCreatingCalls).
  void WatchFilteredCalls(const Settings& settings);
  void StopWatchingFilteredCalls();
  bool IsFiltered(bool runtime, CUpti_CallbackId cbid) const {
    const std::vector<uint8_t>& filtered = filtered_[runtime ? 0 : 1];
    return cbid < filtered.size() && filtered[cbid] != 0;
  }
  void NoteFilteredCall(bool runtime, CUpti_CallbackId cbid, const CUpti_CallbackData* data);

  const CuptiApi* api_ = nullptr;
  uint32_t version_ = 0;
  BufferPool* pool_ = nullptr;
  CaptureGates* gates_ = nullptr;
  std::atomic<FlushRequester*> writer_{nullptr};
  TraceClock clock_;
  std::unique_ptr<ActivityDecoder> decoder_;
  uint64_t undecoded_reported_ = 0;  // TakeUndecoded's total so far (the writer thread's)
  CUpti_SubscriberHandle subscriber_ = nullptr;
  Settings settings_;
  // Buffers CUPTI completed, oldest first, until the writer thread decodes them.
  struct Completed {
    uint8_t* buffer;
    size_t size;
  };
  std::mutex completed_mutex_;
  std::deque<Completed> completed_;
  // Kinds enabled, metadata kinds first; the rest are the data kinds SetRecording switches.
  std::mutex kinds_mutex_;
  std::vector<CUpti_ActivityKind> enabled_;
  size_t metadata_kinds_ = 0;
  std::set<CUpti_ActivityKind> warned_kinds_;  // whose `prepare` warning was logged
  // Kinds whose set-up needs an initialised driver, until the first context is created.
  std::vector<ActivityKindToEnable> waiting_for_context_;
  bool watching_contexts_ = false;  // the CONTEXT_CREATED callback is on
  // Context id -> when it was created and on which thread (OnContextCreated, on the creating
  // thread), until TakeBuffer copies them into its CONTEXT record (on the writer thread).
  struct Creation {
    uint64_t at_ns;
    uint32_t thread_id;
  };
  std::mutex created_mutex_;
  std::unordered_map<uint32_t, Creation> created_;
  // The filtered calls watched until the first context exists, per domain (runtime, driver) by
  // callback id, and the call that created it when it is one of them.
  std::vector<uint8_t> filtered_[2];
  std::atomic<bool> watching_filtered_{false};
  ContextCreatingCalls creating_calls_;
  // Kinds waiting for the program's first use of managed memory, and whether it happened.
  std::vector<ActivityKindToEnable> waiting_for_managed_;
  std::atomic<bool> watching_managed_{false};  // the gate's driver callbacks are on
  bool managed_seen_ = false;
  // The unified-memory counters are on (UrgentFlushIntervalMs), and how many of their records
  // were decoded, so far and at the last UrgentFlushIntervalMs.
  std::atomic<bool> uvm_enabled_{false};
  uint64_t uvm_records_ = 0;
  uint64_t uvm_records_before_ = 0;
  bool capturing_ = false;
  std::atomic<bool> capturing_now_{false};  // capturing_, for the API callbacks
  // LIBPROF_BACKTRACE: the stack recorder, and per domain (runtime, driver) which callback ids
  // want a stack (their callbacks are enabled for that alone).
  std::unique_ptr<CallSiteRecorder> call_sites_;
  std::vector<uint8_t> stream_blocking_cbids_[2];  // runtime, driver: 1 where watched
  StreamBlockingCalls stream_blocking_calls_;
  std::vector<uint8_t> want_stack_[2];
  bool stopped_ = false;
  bool started_ = false;  // Start succeeded: CUPTI is ours to flush and query
  std::atomic<bool> active_{false};
  std::atomic<bool> fatal_{false};  // CUPTI finalised itself: flush and disable are off limits
  // For the takeover watch (Counters): launches counted by our callback, switched on only while
  // the watch asks, vs buffers delivered to us.
  std::atomic<uint64_t> launches_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  bool counting_launches_ = false;
  // CUPTI before 12.9 could crash when a buffer request was refused (Kineto's note,
  // cupti-facts.md 3.1): there we allocate past the pool's maximum instead.
  bool may_refuse_buffers_ = true;
};

std::string CuptiSession::ResultString(CUptiResult result) const {
  const char* text = nullptr;
  if (api_ && api_->cuptiGetResultString) api_->cuptiGetResultString(result, &text);
  return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

bool CuptiSession::Check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  Log().warn("{} failed: {}", what, ResultString(result));
  return false;
}

bool CuptiSession::Start(const Settings& settings, StringInterner* strings, BufferPool* pool,
                         CaptureGates* gates, std::string* status) {
  std::string error;
  api_ = LoadCuptiApi(settings.cupti_path, &error);
  if (api_ == nullptr) {
    *status = "CUPTI could not be loaded (" + error + ")";
    return false;
  }
  api_->cuptiGetVersion(&version_);
  // Index 27 was CUDA 12.9; from 13.0 on the version reads major*10000+minor*100+patch.
  may_refuse_buffers_ = version_ >= 27;
  pool_ = pool;
  gates_ = gates;

  // Subscribe first: it is how CUPTI tells us another tool (nsys, ncu, torch.profiler...) owns
  // it, and then we must not touch the process-wide activity state at all.
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {};
  CUptiResult result;
  if (api_->cuptiSubscribe_v2) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "libprof";
    params.oldSubscriberName = other;
    params.oldSubscriberSize = sizeof other;
    result = api_->cuptiSubscribe_v2(&subscriber_, &OnCallback, this, &params);
  } else {
    result = api_->cuptiSubscribe(&subscriber_, &OnCallback, this);
  }
  if (result != CUPTI_SUCCESS) {
    *status = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                  ? std::string("CUPTI is already in use by ") +
                        (other[0] ? other : "another tool") +
                        " (only one CUPTI client per process); CUDA activity is not recorded"
                  : "CUPTI subscription failed: " + ResultString(result);
    return false;
  }

  decoder_ = std::make_unique<ActivityDecoder>(*api_, *strings);
  Check(api_->cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
  // Our clock for every record; must be registered before any kind is enabled.
  if (api_->cuptiActivityRegisterTimestampCallback == nullptr ||
      api_->cuptiActivityRegisterTimestampCallback(&MonotonicTimestamp) != CUPTI_SUCCESS) {
    clock_ = TraceClock(CLOCK_REALTIME);
    Log().info("CUPTI refused the monotonic clock; timestamps use CLOCK_REALTIME");
  }
  uint8_t zeroed = 1;
  size_t one = sizeof zeroed;
  Check(api_->cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one,
                                        &zeroed),
        "setting CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER");
  if (settings.device_buffer_size_kb != 0) {
    size_t bytes = size_t{settings.device_buffer_size_kb} * 1024;
    size_t size = sizeof bytes;
    Check(api_->cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes),
          "setting CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE");
  }
  g_session = this;
  if (!Check(api_->cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted),
             "cuptiActivityRegisterCallbacks")) {
    *status = "CUPTI would not take libprof's activity buffers";
    api_->cuptiUnsubscribe(subscriber_);
    g_session = nullptr;
    return false;
  }
  settings_ = settings;
  // Devices, contexts and streams are few and the analysis needs them to interpret the rest,
  // also when CUDA activity is recorded only in windows.
  Enable(CUPTI_ACTIVITY_KIND_DEVICE, "devices");
  Enable(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts");
  Enable(CUPTI_ACTIVITY_KIND_STREAM, "streams");
  metadata_kinds_ = enabled_.size();
  // When each context is created, inside which call: start-up's context creation is often
  // hidden in the program's first runtime call (a 198 ms cudaMalloc on an H200). One callback
  // per context.
  watching_contexts_ = api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                                 CUPTI_CBID_RESOURCE_CONTEXT_CREATED) ==
                       CUPTI_SUCCESS;
  if (watching_contexts_) WatchFilteredCalls(settings);
  // The data kinds wait for the gates: CaptureGates::Connect calls SetRecording.
  if (gates->range().kind == CaptureRange::Kind::kCudaProfilerApi) {
    api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                              CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                              CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
  api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
  api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_ERROR);
  api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_WARNING);
  WarnIfTorchProfilerPresent();
  if (settings.backtrace != BacktraceMode::kNone) StartCallSites(settings);
  WatchStreamBlockingCalls(settings);
  started_ = true;
  active_ = true;
  return true;
}

// Enables the API callbacks of the calls that need a stack, and nothing else: in `blocking` mode
// the copies, memsets, synchronisations, frees and allocations (CanBlockHost), in `all` mode
// every call the activity records keep (the api_filter's trivial queries are left out, as they
// are not recorded). Decided per callback id by name, once.
void CuptiSession::StartCallSites(const Settings& settings) {
  SkipRanges skip;
  // Frames above the API entry point: ours, CUPTI's and the driver's callback machinery.
  for (const AddressRange& r : OwnCodeRanges()) skip.Add(r);
  for (const AddressRange& r : ModuleCodeRanges("libcupti.so")) skip.Add(r);
  for (const AddressRange& r : ModuleCodeRanges("libcuda.so")) skip.Add(r);
  call_sites_ = std::make_unique<CallSiteRecorder>(
      settings.backtrace_depth, skip,
      settings.python_frames ? PythonFrameReader::Find() : nullptr);
  const bool all = settings.backtrace == BacktraceMode::kAll;
  const bool filtered = settings.api_filter == ApiFilter::kSignificant;
  size_t enabled = 0;
  for (const bool runtime : {true, false}) {
    if (!(runtime ? settings.kinds.runtime_api : settings.kinds.driver_api)) continue;
    const CUpti_CallbackDomain domain =
        runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    const uint32_t size = runtime ? uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}
                                  : uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE};
    const std::vector<uint32_t> skipped = !filtered ? std::vector<uint32_t>{}
                                          : runtime ? InsignificantRuntimeCbids()
                                                    : InsignificantDriverCbids();
    std::vector<uint8_t>& want = want_stack_[runtime ? 0 : 1];
    want.assign(size, 0);
    for (uint32_t cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (api_->cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
        continue;
      }
      const bool wanted = all ? !std::binary_search(skipped.begin(), skipped.end(), cbid)
                              : CanBlockHost(CleanApiName(name));
      if (wanted && api_->cuptiEnableCallback(1, subscriber_, domain, cbid) == CUPTI_SUCCESS) {
        want[cbid] = 1;
        ++enabled;
      }
    }
  }
  Log().debug("call stacks for {} API callback ids, depth {}{}", enabled, call_sites_->depth(),
              call_sites_->reads_python() ? ", with Python frames" : "");
}

// A handful of callback ids, called about as often as the program enqueues host functions or
// memory waits.
void CuptiSession::WatchStreamBlockingCalls(const Settings& settings) {
  if (api_->cuptiGetStreamIdEx == nullptr) return;
  for (const bool runtime : {true, false}) {
    if (!(runtime ? settings.kinds.runtime_api : settings.kinds.driver_api)) continue;
    const CUpti_CallbackDomain domain =
        runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    std::vector<uint8_t>& watched = stream_blocking_cbids_[runtime ? 0 : 1];
    for (const CUpti_CallbackId cbid : StreamBlockingCbids(runtime)) {
      if (api_->cuptiEnableCallback(1, subscriber_, domain, cbid) != CUPTI_SUCCESS) continue;
      if (watched.size() <= cbid) watched.resize(cbid + 1, 0);
      watched[cbid] = 1;
    }
  }
}

void CuptiSession::NoteStreamBlockingCall(bool runtime, CUpti_CallbackId cbid,
                                          const CUpti_CallbackData* data) {
  if (!capturing_now_.load(std::memory_order_relaxed)) return;
  const std::optional<StreamArgument> arg =
      StreamBlockingCallStream(runtime, cbid, data->functionParams);
  if (!arg) return;
  uint32_t stream_id = 0;
  if (api_->cuptiGetStreamIdEx(data->context, arg->stream, arg->per_thread ? 1 : 0, &stream_id) !=
      CUPTI_SUCCESS) {
    return;  // (an invalid handle: the call fails too, and the trace says so)
  }
  stream_blocking_calls_.Note(data->correlationId, stream_id);
}

// The filtered calls are queries made often (PyTorch makes several per launch), so their
// callbacks stay on only until the first context exists: the program's start, a few hundred
// calls. A later context (another device's) is created inside a filtered call only if no recorded
// call on its device came first, which cudaSetDevice (recorded) prevents in CUDA 12 and later.
void CuptiSession::WatchFilteredCalls(const Settings& settings) {
  if (settings.api_filter != ApiFilter::kSignificant) return;  // every call is recorded
  for (const bool runtime : {true, false}) {
    if (!(runtime ? settings.kinds.runtime_api : settings.kinds.driver_api)) continue;
    const CUpti_CallbackDomain domain =
        runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    std::vector<uint8_t>& filtered = filtered_[runtime ? 0 : 1];
    for (uint32_t cbid : runtime ? InsignificantRuntimeCbids() : InsignificantDriverCbids()) {
      if (api_->cuptiEnableCallback(1, subscriber_, domain, cbid) != CUPTI_SUCCESS) continue;
      if (filtered.size() <= cbid) filtered.resize(cbid + 1, 0);
      filtered[cbid] = 1;
    }
  }
  watching_filtered_ = !filtered_[0].empty() || !filtered_[1].empty();
}

// On the thread that made the first context: at its creating call's exit, or in the
// CONTEXT_CREATED callback when no filtered call is open there (turning the callbacks off inside
// a filtered call would lose that call's exit).
void CuptiSession::StopWatchingFilteredCalls() {
  if (!watching_filtered_.exchange(false)) return;
  for (const bool runtime : {true, false}) {
    const CUpti_CallbackDomain domain =
        runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    const std::vector<uint8_t>& filtered = filtered_[runtime ? 0 : 1];
    for (uint32_t cbid = 0; cbid < filtered.size(); ++cbid) {
      if (filtered[cbid] != 0 && !WantsStack(runtime, cbid)) {
        api_->cuptiEnableCallback(0, subscriber_, domain, cbid);
      }
    }
  }
}

void CuptiSession::NoteFilteredCall(bool runtime, CUpti_CallbackId cbid,
                                    const CUpti_CallbackData* data) {
  const ApiDomain domain = runtime ? ApiDomain::kRuntime : ApiDomain::kDriver;
  if (data->callbackSite == CUPTI_API_ENTER) {
    creating_calls_.Enter(domain, cbid, data->correlationId,
                          static_cast<uint32_t>(syscall(SYS_gettid)), clock_.NowNs());
    return;
  }
  // cudaError_t and CUresult are both enums of int size.
  const int32_t result =
      data->functionReturnValue ? *static_cast<const int32_t*>(data->functionReturnValue) : 0;
  // Kept only while recording: the activity records of its time exist only then.
  if (creating_calls_.Exit(clock_.NowNs(), result, capturing_now_.load())) {
    StopWatchingFilteredCalls();
    RequestWriterFlush();
  }
}

void CuptiSession::NoteCallSite(bool runtime, const CUpti_CallbackData* data) {
  const bool enter = data->callbackSite == CUPTI_API_ENTER;
  if (runtime) {
    if (!enter) {
      if (t_runtime_calls_open > 0) --t_runtime_calls_open;
      return;
    }
    if (t_runtime_calls_open++ > 0) return;
  } else if (!enter || t_runtime_calls_open > 0) {
    return;
  }
  if (capturing_now_.load(std::memory_order_relaxed)) call_sites_->OnApiEnter(data->correlationId);
}

// PyTorch carries its own CUPTI client (Kineto, behind torch.profiler). Measured with PyTorch
// 2.11 on CUDA 13.0: once libprof holds CUPTI, Kineto's cuptiSubscribe fails with
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and torch.profiler records no CUDA activity
// (Kineto says "CUDA profiler activities will be missing"), while libprof's trace stays
// complete. CUPTI gives us no signal when that happens, so say it up front, once.
void CuptiSession::WarnIfTorchProfilerPresent() {
  void* torch = dlopen("libtorch_cpu.so", RTLD_NOLOAD | RTLD_LAZY);
  if (torch == nullptr) return;
  dlclose(torch);
  Log().warn(
      "this is a PyTorch process and libprof now holds CUPTI, which serves one client per process "
      "(CUDA 13.0): torch.profiler in this process will record CPU activity only");
}

void CuptiSession::Enable(CUpti_ActivityKind kind, const char* name) {
  CUptiResult result = api_->cuptiActivityEnable(kind);
  if (result == CUPTI_SUCCESS) {
    enabled_.push_back(kind);
  } else {
    Log().warn("this CUPTI cannot record {} ({})", name, ResultString(result));
  }
}

void CuptiSession::EnableKinds(const Settings& settings) {
  for (const ActivityKindToEnable& kind : DataActivityKinds(settings.kinds)) EnablePrepared(kind);
}

// Runs the kind's set-up, if any, then enables it. A kind with a set-up step may need an
// initialised driver, for the set-up or for cuptiActivityEnable itself (both answered
// CUPTI_ERROR_NOT_READY inside cuInit for UNIFIED_MEMORY_COUNTER on an H100, CUDA 13.0): it then
// waits for the first context (OnCallback, CUPTI_CBID_RESOURCE_CONTEXT_CREATED).
void CuptiSession::EnablePrepared(const ActivityKindToEnable& kind) {
  if (kind.after_managed_memory && !managed_seen_) {
    waiting_for_managed_.push_back(kind);
    WatchManagedMemory(true);
    return;
  }
  if (kind.prepare == nullptr) {
    Enable(kind.kind, kind.what);
    return;
  }
  std::string warning;
  const PrepareResult prepared = kind.prepare(*api_, &warning);
  // Once per recording: capture ranges enable the kinds again each time they open.
  if (!warning.empty() && warned_kinds_.insert(kind.kind).second) Log().warn("{}", warning);
  if (prepared == PrepareResult::kRefused) return;
  if (prepared == PrepareResult::kReady) {
    const CUptiResult result = api_->cuptiActivityEnable(kind.kind);
    if (result == CUPTI_SUCCESS) {
      enabled_.push_back(kind.kind);
      if (kind.kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
        uvm_enabled_ = true;
        RequestWriterFlush();  // so that it starts flushing often (UrgentFlushIntervalMs)
      }
      return;
    }
    if (result != CUPTI_ERROR_NOT_READY) {
      Log().warn("this CUPTI cannot record {} ({})", kind.what, ResultString(result));
      return;
    }
  }
  waiting_for_context_.push_back(kind);
  if (!watching_contexts_) {
    watching_contexts_ = api_->cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                                   CUPTI_CBID_RESOURCE_CONTEXT_CREATED) ==
                         CUPTI_SUCCESS;
    if (!watching_contexts_) Log().warn("this CUPTI cannot record {}", kind.what);
  }
}

// A context exists, so the driver is initialised: the kinds that waited for it are set up now
// (while recording; a later SetRecording(true) sets them up itself).
void CuptiSession::OnContextCreated(const CUpti_ResourceData* data) {
  uint32_t id = 0;
  if (data != nullptr && data->context != nullptr && api_->cuptiGetContextId != nullptr &&
      api_->cuptiGetContextId(data->context, &id) == CUPTI_SUCCESS) {
    const Creation creation{clock_.NowNs(), static_cast<uint32_t>(syscall(SYS_gettid))};
    std::lock_guard<std::mutex> lock(created_mutex_);
    created_.try_emplace(id, creation);
  }
  // Created inside a recorded call (or none): no filtered call needs watching any more. Inside a
  // filtered one: that call's exit keeps it and ends the watch.
  if (watching_filtered_.load() && !creating_calls_.ContextCreated()) StopWatchingFilteredCalls();
  std::lock_guard<std::mutex> lock(kinds_mutex_);
  std::vector<ActivityKindToEnable> waiting;
  waiting.swap(waiting_for_context_);
  if (stopped_ || fatal_.load() || !capturing_) return;
  for (const ActivityKindToEnable& kind : waiting) EnablePrepared(kind);
}

void CuptiSession::WatchManagedMemory(bool on) {
  if (watching_managed_.load() == on) return;
  watching_managed_ = on;
  for (CUpti_CallbackId cbid : ManagedMemoryDriverCbids()) {
    // A call whose stack is wanted keeps its callback.
    if (!on && WantsStack(false, cbid)) continue;
    api_->cuptiEnableCallback(on ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
}

void CuptiSession::OnManagedMemory() {
  std::lock_guard<std::mutex> lock(kinds_mutex_);
  if (managed_seen_) return;
  const auto t0 = std::chrono::steady_clock::now();
  managed_seen_ = true;
  WatchManagedMemory(false);
  std::vector<ActivityKindToEnable> waiting;
  waiting.swap(waiting_for_managed_);
  if (stopped_ || fatal_.load() || !capturing_) return;
  for (const ActivityKindToEnable& kind : waiting) EnablePrepared(kind);
  Log().debug("managed memory in use: kinds waiting for it enabled in {:.3f} ms", MsSince(t0));
}

void CuptiSession::SetRecording(bool on) {
  std::lock_guard<std::mutex> lock(kinds_mutex_);
  // Once stopped, or once CUPTI has finalised itself, no kind may be switched again.
  if (stopped_ || fatal_.load() || on == capturing_) return;
  capturing_ = on;
  capturing_now_ = on;
  if (on) {
    EnableKinds(settings_);
    if (settings_.api_filter == ApiFilter::kSignificant) {
      // After enabling the API kinds: enabling a kind resets the per-call choices.
      for (uint32_t cbid : InsignificantRuntimeCbids()) {
        api_->cuptiActivityEnableRuntimeApi(cbid, 0);
      }
      for (uint32_t cbid : InsignificantDriverCbids()) api_->cuptiActivityEnableDriverApi(cbid, 0);
    }
    Log().debug("recording CUDA activity");
  } else {
    // Disabling the unified-memory counters discards the events CUPTI has not yet taken from the
    // driver: take them first.
    if (uvm_enabled_.exchange(false)) api_->cuptiActivityFlushAll(0);
    // The data kinds only: devices, contexts and streams stay on.
    for (size_t i = metadata_kinds_; i < enabled_.size(); ++i) {
      api_->cuptiActivityDisable(enabled_[i]);
    }
    enabled_.resize(metadata_kinds_);
    waiting_for_context_.clear();
    waiting_for_managed_.clear();
    Log().debug("not recording CUDA activity");
  }
}

void CuptiSession::Flush(bool forced) {
  if (!api_ || fatal_.load() || (!active_.load() && !forced)) return;
  api_->cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

uint32_t CuptiSession::UrgentFlushIntervalMs() {
  if (!uvm_enabled_.load()) return 0;
  const bool busy = uvm_records_ != uvm_records_before_;
  uvm_records_before_ = uvm_records_;
  return busy ? kUvmBusyFlushMs : kUvmIdleFlushMs;
}

void CuptiSession::FlushFinal() {
  if (!started_) return;
  const auto t0 = std::chrono::steady_clock::now();
  Stop(/*final=*/true);
  const double stop_ms = MsSince(t0);
  Flush(/*forced=*/true);
  Log().debug("final flush: kinds disabled in {:.3f} ms, buffers flushed in {:.3f} ms", stop_ms,
              MsSince(t0) - stop_ms);
}

void CuptiSession::Stop() { Stop(/*final=*/false); }

void CuptiSession::Stop(bool final) {
  if (!api_ || !active_.exchange(false) || fatal_.load()) return;
  std::lock_guard<std::mutex> lock(kinds_mutex_);
  stopped_ = true;
  WatchManagedMemory(false);
  for (CUpti_ActivityKind kind : enabled_) {
    // At the end of recording the unified-memory counters stay on: disabling them discards the
    // events CUPTI has not yet taken from the driver, and took 2 s when none had come (H100, CUDA
    // 13.0, docs/capture-notes.md). The process is ending; the final flush takes what came.
    if (final && kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) continue;
    api_->cuptiActivityDisable(kind);
  }
  enabled_.clear();
  uvm_enabled_ = false;
  metadata_kinds_ = 0;
  capturing_ = false;
  capturing_now_ = false;
}

ActivityCounters CuptiSession::Counters() {
  return {.buffers = buffers_completed_.load(),
          .launches = launches_.load(),
          .recording = capturing_now_.load() && !fatal_.load()};
}

// Kernel launches, only counted, and only while the takeover watch asks: they tell a quiet
// program from lost buffers.
void CuptiSession::CountLaunches(bool on) {
  if (!started_ || fatal_.load() || on == counting_launches_) return;
  counting_launches_ = on;
  // A launch whose stack is wanted (LIBPROF_BACKTRACE=all) keeps its callback, and is counted
  // all along.
  for (CUpti_CallbackId cbid : kRuntimeLaunchCbids) {
    if (!WantsStack(true, cbid)) {
      api_->cuptiEnableCallback(on, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
    }
  }
  for (CUpti_CallbackId cbid : kDriverLaunchCbids) {
    if (!WantsStack(false, cbid)) {
      api_->cuptiEnableCallback(on, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    }
  }
}

uint64_t CuptiSession::TakeDropped() {
  size_t dropped = 0;
  if (started_ && !fatal_.load() &&
      api_->cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    return dropped;
  }
  return 0;
}

uint64_t CuptiSession::TakeUndecoded() {
  if (decoder_ == nullptr) return 0;
  const DecodeStats& stats = decoder_->stats();
  const uint64_t lost = stats.unknown_kinds + stats.failed;
  const uint64_t since = lost - undecoded_reported_;
  if (since > 0 && undecoded_reported_ == 0) {
    // Once: a CUPTI newer than this build may hand over kinds it does not know.
    Log().warn("{} activity record(s) could not be decoded{}; they are counted as dropped "
               "(source cupti-undecoded)",
               since,
               stats.unknown_kinds > 0
                   ? " (of kinds it does not decode, the last CUPTI kind " +
                         std::to_string(stats.last_unknown_kind) + ")"
                   : std::string());
  }
  undecoded_reported_ = lost;
  return since;
}

bool CuptiSession::TakeBuffer(TraceRecords* out) {
  const std::vector<ApiCall> creating = creating_calls_.Take();
  for (const ApiCall& call : creating) decoder_->AddApiCall(call, out);
  Completed next;
  {
    std::lock_guard<std::mutex> lock(completed_mutex_);
    if (completed_.empty()) return !creating.empty();
    next = completed_.front();
    completed_.pop_front();
  }
  CUpti_Activity* record = nullptr;
  const size_t uvm_before = out->unified_memory_counters.size();
  const size_t contexts_before = out->contexts.size();
  const size_t calls_before = out->api_calls.size();
  while (next.size > 0 &&
         api_->cuptiActivityGetNextRecord(next.buffer, next.size, &record) == CUPTI_SUCCESS) {
    decoder_->Decode(record, out);
  }
  if (out->contexts.size() > contexts_before) {
    std::lock_guard<std::mutex> lock(created_mutex_);
    for (size_t i = contexts_before; i < out->contexts.size(); ++i) {
      ContextInfo& context = out->contexts[i];
      if (auto it = created_.find(context.context_id); it != created_.end()) {
        context.created_ns = it->second.at_ns;
        context.created_thread_id = it->second.thread_id;
      }
    }
  }
  stream_blocking_calls_.Attach(std::span(out->api_calls).subspan(calls_before));
  uvm_records_ += out->unified_memory_counters.size() - uvm_before;
  pool_->Release(next.buffer, next.size);
  return true;
}

void CUPTIAPI CuptiSession::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // fill the buffer
  CuptiSession* self = g_session.load();
  if (self == nullptr) return;
  uint8_t* granted = self->pool_->Acquire();
  if (granted == nullptr && !self->may_refuse_buffers_) {
    granted = static_cast<uint8_t*>(std::aligned_alloc(4096, self->pool_->buffer_bytes()));
    if (granted) std::memset(granted, 0, self->pool_->buffer_bytes());
  }
  // nullptr: CUPTI drops the records and counts them (cuptiActivityGetNumDroppedRecords).
  *buffer = granted;
  *size = granted ? self->pool_->buffer_bytes() : 0;
}

void CUPTIAPI CuptiSession::BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t,
                                            size_t valid_size) {
  CuptiSession* self = g_session.load();
  if (self == nullptr || buffer == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(self->completed_mutex_);
    self->completed_.push_back({buffer, valid_size});
  }
  self->buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  self->RequestWriterFlush();
}

void CUPTIAPI CuptiSession::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void* data) {
  auto* self = static_cast<CuptiSession*>(userdata);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (runtime || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    const auto site = call->callbackSite;
    if (self->call_sites_ && self->WantsStack(runtime, cbid)) {
      try {
        self->NoteCallSite(runtime, call);
      } catch (...) {
      }
    }
    if (!runtime && site == CUPTI_API_ENTER && self->watching_managed_.load() &&
        StartsManagedMemory(cbid, call->functionParams)) {
      try {
        self->OnManagedMemory();
      } catch (...) {
      }
    }
    if (site == CUPTI_API_ENTER && self->IsStreamBlockingCall(runtime, cbid)) {
      try {
        self->NoteStreamBlockingCall(runtime, cbid, call);
      } catch (...) {
      }
    }
    if (self->watching_filtered_.load(std::memory_order_acquire) &&
        self->IsFiltered(runtime, cbid)) {
      try {
        self->NoteFilteredCall(runtime, cbid, call);
      } catch (...) {
      }
      return;  // (a filtered call has no other use here)
    }
    if (IsLaunch(runtime, cbid)) {
      // The hot path: count and return.
      if (site == CUPTI_API_ENTER) self->launches_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    try {
      // cudaProfilerStart/Stop (LIBPROF_CAPTURE_RANGE=cudaProfilerApi): the work after Start
      // returns and before Stop is called. The runtime call wraps the driver one: both come.
      if (IsProfilerStart(runtime, cbid)) {
        if (site == CUPTI_API_EXIT) self->gates_->OnProfilerApi(true);
      } else if (IsProfilerStop(runtime, cbid)) {
        if (site == CUPTI_API_ENTER) self->gates_->OnProfilerApi(false);
      } else if (runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
                 site == CUPTI_API_ENTER) {
        // Take the records while the context still exists (as NVIDIA's cupti_trace_injection
        // does). Never flush from resource callbacks such as context destruction: CUPTI may hold
        // locks there that its flush needs.
        if (self->active_.load()) self->api_->cuptiActivityFlushAll(0);
        self->RequestWriterFlush();
      }
    } catch (...) {
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED) return;
    try {
      self->OnContextCreated(static_cast<const CUpti_ResourceData*>(data));
    } catch (...) {
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_STATE) return;
  try {
    if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
      // CUPTI has finalised itself: no CUPTI call may follow.
      self->active_ = false;
      self->fatal_ = true;
      Log().warn("CUPTI reported a fatal error and stopped; the trace ends here");
      return;
    }
    const auto* state = static_cast<const CUpti_StateData*>(data);
    const char* message = state->notification.message;
    Log().warn("CUPTI says: {} ({})", message ? message : "no details",
               self->ResultString(state->notification.result));
  } catch (...) {
  }
}

}  // namespace

std::unique_ptr<CaptureSession> CreateCuptiSession() { return std::make_unique<CuptiSession>(); }

}  // namespace libprof
