// NvtxRecorder: the process-wide state behind libprof's NVTX handlers. It keeps per-thread push/pop
// stacks, start/end ranges, domains and registered strings, and buffers completed ranges and marks
// per thread until libprof's writer thread drains them (as the recorder's NvtxSource). It owns
// no part of the trace: Drain is handed the trace's string table, SetClock its timebase.
//
// Layer: libprof/nvtx/ (CUDA-free and NVTX-header-free: nvtx_handlers.cc decodes NVTX's C types
// into the calls below). Depends on proto/ (NvtxEvent, StringInterner), libprof/clock.h and
// libprof/capture_sources.h only.
//
// Threads: every handler call touches only the calling thread's buffer, under that buffer's own
// lock (uncontended except while Drain swaps it out). Shared locks are taken only by RangeStart/
// RangeEnd (the id map), domain creation and string-interning cache misses. Handler threads never
// take the trace's StringInterner lock: see nvtx_string_table.h.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libprof/capture_sources.h"
#include "libprof/clock.h"
#include "libprof/nvtx/nvtx_install.h"  // entry.cc reaches InstallNvtxHandlers through this header
#include "libprof/nvtx/nvtx_string_table.h"
#include "libprof/nvtx/nvtx_thread_state.h"
#include "libprof/nvtx/spin_lock.h"
#include "proto/nvtx_payload.h"
#include "proto/trace_model.h"
#include "proto/trace_writer.h"

namespace libprof {

class NvtxRecorder final : public NvtxSource {
 public:
  // Completed events buffered (all threads together) past which new ones are dropped and counted.
  // 4 Mi events is about 256 MiB (64 B per NvtxEvent): never reached when the writer drains every
  // second, but it bounds a process that uses NVTX and never starts CUDA (so never drains).
  static constexpr uint64_t kDefaultMaxBufferedEvents = uint64_t{4} << 20;

  // The process's recorder: created on first use, never destroyed (NVTX calls may come from
  // static destructors and atexit handlers that run after ours).
  static NvtxRecorder& Get();

  // Tests build their own. A thread's buffer belongs to the recorder it last used, so a thread
  // must not alternate between two live recorders.
  NvtxRecorder();
  ~NvtxRecorder();
  NvtxRecorder(const NvtxRecorder&) = delete;
  NvtxRecorder& operator=(const NvtxRecorder&) = delete;

  // The clock that stamps events from now on: the capture context's, once recording starts
  // (CLOCK_MONOTONIC until then, which is also what CUPTI is asked to use).
  void SetClock(TraceClock clock);

  // Off (LIBPROF_TRACE without nvtx): nothing is recorded, and what was buffered is discarded,
  // but push/pop still return the right levels and range ids stay unique. On by default, so
  // calls made before libprof has read its settings are kept.
  void SetEnabled(bool enabled);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void SetMaxBufferedEvents(uint64_t max_events);

  // ---- Called by the NVTX handlers, on any thread. Domain 0 is NVTX's default domain.

  // Interns a message by content (stack buffers are reused, so pointers mean nothing) into the
  // recorder's own table; returns a local id. A per-thread cache answers repeated messages
  // without the shared lock.
  uint32_t InternMessage(std::string_view text);
  // The id of domain `name`, created at the first call (ids from 1; same name, same id).
  uint32_t CreateDomain(std::string_view name);
  // `id` as given back by the application: a domain this recorder created, else 0.
  uint32_t CheckedDomain(uint64_t id) const;
  // nvtxDomainRegisterString: the string's local id, which the handle encodes.
  uint32_t RegisterString(std::string_view text);
  // A local string id decoded from an application's handle: itself if valid, else 0.
  uint32_t CheckedStringId(uint64_t id) const;

  // Returns the 0-based nesting level of the new range within (thread, domain).
  int Push(uint32_t domain, const NvtxAttributes& attributes);
  // Returns the level of the range ended, or -1 if the thread has none open in `domain`.
  // `end_payloads` (nvtxRangePopPayload) are added to the range's own.
  int Pop(uint32_t domain, std::vector<NvtxPayload> end_payloads = {});
  // Returns a process-unique id (never 0); EndRange may come from any thread. Unknown ids and
  // ids already ended are ignored.
  uint64_t StartRange(uint32_t domain, const NvtxAttributes& attributes);
  void EndRange(uint64_t range_id, std::vector<NvtxPayload> end_payloads = {});
  void Mark(uint32_t domain, const NvtxAttributes& attributes);
  // nvtxPayloadSchemaRegister / nvtxPayloadEnumRegister: keeps `schema` (names as local string
  // ids) for the trace, its layout resolved with `type_info` (proto/nvtx_payload.h). Returns its
  // id: the application's, or one assigned from NVTX's dynamic range when it gave 0.
  uint64_t RegisterSchema(NvtxPayloadSchema schema,
                          std::span<const nvtx_payload::TypeInfo> type_info);
  // The payload size a static schema or enum of `domain` declares; 0 when unknown.
  uint64_t SchemaStaticSize(uint32_t domain, uint64_t schema_id) const;
  // An event lost to an internal error (allocation failure) in a handler.
  void CountDropped(uint64_t count = 1);

  // ---- Called by libprof.

  // LIBPROF_CAPTURE_RANGE=nvtx:MESSAGE[@DOMAIN]: `on_change(true)` when the first range with
  // this message in this domain ("" = default domain) opens, `on_change(false)` when the last
  // one closes (nested or concurrent ones count as one window). Called on the application thread
  // that opens or closes the range, outside the recorder's locks. Set once, before CUDA work.
  void SetCaptureTrigger(std::string_view message, std::string_view domain,
                         std::function<void(bool)> on_change);

  // Appends every event completed so far, from all threads (exited ones too, whose buffers are
  // then freed; their still-open push ranges come out with open = true, ending at thread exit),
  // and the domains created since the last call, with string ids of `strings`, into which it
  // copies the strings they use. `final` (once, at the end of recording) also emits every range
  // still open, with open = true, end_ns = now_ns. One caller at a time (libprof's writer
  // thread), and one table: a different table starts over, announcing every domain again.
  void Drain(StringInterner& strings, std::vector<NvtxEvent>* events,
             std::vector<NvtxDomain>* new_domains, std::vector<NvtxPayloadSchema>* new_schemas,
             bool final, uint64_t now_ns) override;
  // Events dropped since the last call (cap reached or internal error), and since the start.
  uint64_t TakeDropped() override {
    return dropped_pending_.exchange(0, std::memory_order_relaxed);
  }
  uint64_t dropped() const { return dropped_total_.load(std::memory_order_relaxed); }

  // pthread_atfork handlers. Prepare/Parent (optional) take and release every lock, so the child
  // inherits consistent state. ResetAfterFork (child) keeps the forking thread's open ranges,
  // domains and strings (the application still holds their handles), drops everything that
  // belongs to the parent's recording (completed events, other threads' buffers, drop counts),
  // and announces all domains again to the child's next Drain.
  void PrepareFork();
  void ParentAfterFork();
  void ResetAfterFork();

 private:
  // A started, not yet ended nvtxRangeStart range.
  struct OpenRange {
    uint64_t start_ns = 0;
    uint32_t thread_id = 0;
    uint32_t domain = 0;
    NvtxAttributes attributes;
  };

  bool IsTrigger(uint32_t domain, uint32_t message_id) const;
  void TriggerOpened();
  void TriggerClosed();

  NvtxThreadState& CurrentThread();
  NvtxThreadState& RegisterThread();
  // Appends to the thread's buffer unless the cap is reached. Caller holds the thread's lock.
  void EmitLocked(NvtxThreadState& thread, const NvtxEvent& event);
  uint32_t InternShared(std::string_view text) { return local_strings_.Intern(text); }
  // Copies strings interned since the last Drain into `strings`, and rewrites the local ids of
  // events[first...] and of `domains` to ids of `strings`. Caller holds drain_lock_.
  void ExportStrings(StringInterner& strings, std::vector<NvtxEvent>* events, size_t first,
                     std::vector<NvtxDomain>* domains, std::vector<NvtxPayloadSchema>* schemas);
  // Caller holds domains_lock_.
  const NvtxPayloadSchema* FindSchemaLocked(uint32_t domain, uint64_t schema_id) const;
  uint64_t NowNs() const { return ReadClockNs(clock_.load(std::memory_order_relaxed)); }

  const uint64_t generation_;  // tells a thread's cached buffer of this recorder from others'
  std::atomic<bool> enabled_{true};
  std::atomic<clockid_t> clock_{CLOCK_MONOTONIC};
  std::atomic<uint64_t> max_buffered_{kDefaultMaxBufferedEvents};
  std::atomic<uint64_t> buffered_{0};  // events in all buffers, less each thread's unpublished
  std::atomic<uint64_t> dropped_pending_{0};
  std::atomic<uint64_t> dropped_total_{0};
  std::atomic<uint64_t> next_range_id_{1};

  // Capture trigger: message id 0 means none.
  std::atomic<uint32_t> trigger_message_{0};
  uint32_t trigger_domain_ = 0;
  std::atomic<int> trigger_open_{0};
  std::function<void(bool)> trigger_on_change_;

  // Lock order: drain_lock_ > threads_lock_ > a thread's lock > ranges_lock_ > domains_lock_ >
  // local_strings_'s lock.
  SpinLock drain_lock_;
  const StringInterner* exported_to_ = nullptr;  // the table of the last Drain (drain_lock_)
  std::vector<uint32_t> exported_ids_;  // local string id -> id in exported_to_ (drain_lock_)

  SpinLock threads_lock_;
  std::vector<std::shared_ptr<NvtxThreadState>> threads_;

  SpinLock ranges_lock_;
  std::unordered_map<uint64_t, OpenRange> open_ranges_;

  mutable SpinLock domains_lock_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> domain_ids_;
  std::vector<NvtxDomain> domains_;  // domains_[id - 1]
  size_t domains_drained_ = 0;
  std::vector<NvtxPayloadSchema> schemas_;  // registration order (domains_lock_)
  size_t schemas_drained_ = 0;
  uint64_t next_dynamic_schema_id_ = nvtx_payload::kSchemaIdDynamicStart;
  std::atomic<uint32_t> domain_count_{0};

  NvtxStringTable local_strings_;  // what handler threads intern into; Drain exports them
};

}  // namespace libprof
