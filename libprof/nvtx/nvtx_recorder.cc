#include "libprof/nvtx/nvtx_recorder.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>

namespace libprof {
namespace {

// Distinct messages remembered per thread before the cache starts over. Bounds the memory of a
// thread whose messages never repeat ("step 81734"); 4096 covers any fixed set of range names.
constexpr size_t kInternCacheEntries = 4096;

// A drained buffer up to this capacity (64 B per event: 4 MiB) is kept for the thread's next
// period, so that steady recording neither reallocates nor page-faults (measured: fresh pages
// were ~30% of a push+pop pair while the buffer grew).
constexpr size_t kMaxSpareEvents = 64 * 1024;

// A thread adds its new events to the shared count in batches of this many, so that threads do
// not bounce one cache line per event; the cap may be overshot by this much per other thread.
constexpr uint32_t kPublishEvery = 64;

std::atomic<uint64_t> g_next_generation{1};

}  // namespace

NvtxRecorder& NvtxRecorder::Get() {
  static NvtxRecorder* recorder = new NvtxRecorder();
  return *recorder;
}

NvtxRecorder::NvtxRecorder() : generation_(g_next_generation.fetch_add(1)) {}

NvtxRecorder::~NvtxRecorder() = default;

void NvtxRecorder::SetEnabled(bool enabled) {
  enabled_.store(enabled, std::memory_order_relaxed);
  if (enabled) return;
  // What was recorded before libprof read its settings is not wanted.
  {
    std::lock_guard<SpinLock> list(threads_lock_);
    for (const auto& thread : threads_) {
      std::vector<NvtxEvent> discarded, discarded_spare;
      std::lock_guard<SpinLock> lock(thread->lock);
      discarded.swap(thread->events);
      discarded_spare.swap(thread->spare);
      buffered_.fetch_sub(discarded.size() - thread->unpublished, std::memory_order_relaxed);
      thread->unpublished = 0;
    }
  }
  std::lock_guard<SpinLock> lock(ranges_lock_);
  open_ranges_.clear();
}

void NvtxRecorder::SetClock(TraceClock clock) {
  clock_.store(clock.id(), std::memory_order_relaxed);
  // Thread exits are stamped by the thread's state alone (nvtx_thread_state.cc).
  std::lock_guard<SpinLock> list(threads_lock_);
  for (const auto& thread : threads_) {
    std::lock_guard<SpinLock> lock(thread->lock);
    thread->clock = clock.id();
  }
}

void NvtxRecorder::SetMaxBufferedEvents(uint64_t max_events) {
  max_buffered_.store(max_events, std::memory_order_relaxed);
}

NvtxThreadState& NvtxRecorder::CurrentThread() {
  if (NvtxThreadState* state = BoundThreadState(generation_)) [[likely]] {
    return *state;
  }
  return RegisterThread();
}

NvtxThreadState& NvtxRecorder::RegisterThread() {
  auto state = std::make_shared<NvtxThreadState>();
  state->tid = static_cast<uint32_t>(gettid());
  {
    std::lock_guard<SpinLock> list(threads_lock_);
    // Under the list's lock: a SetClock that comes later updates it with the others.
    state->clock = clock_.load(std::memory_order_relaxed);
    threads_.push_back(state);
  }
  NvtxThreadState& thread = *state;
  BindThreadState(std::move(state), generation_);
  return thread;
}

uint32_t NvtxRecorder::InternMessage(std::string_view text) {
  if (text.empty()) return 0;  // the local id of ""
  auto& cache = CurrentThread().intern_cache;
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  const uint32_t id = InternShared(text);
  if (cache.size() >= kInternCacheEntries) cache.clear();
  cache.emplace(text, id);
  return id;
}

uint32_t NvtxRecorder::CreateDomain(std::string_view name) {
  std::lock_guard<SpinLock> lock(domains_lock_);
  if (auto it = domain_ids_.find(name); it != domain_ids_.end()) return it->second;
  const uint32_t name_id = InternShared(name);
  const auto id = static_cast<uint32_t>(domains_.size() + 1);
  domains_.reserve(domains_.size() + 1);  // so that the two containers stay in step on bad_alloc
  domain_ids_.emplace(std::string(name), id);
  domains_.push_back(NvtxDomain{.id = id, .name_id = name_id});
  domain_count_.store(id, std::memory_order_release);
  return id;
}

uint32_t NvtxRecorder::CheckedDomain(uint64_t id) const {
  return id <= domain_count_.load(std::memory_order_acquire) ? static_cast<uint32_t>(id) : 0;
}

uint32_t NvtxRecorder::RegisterString(std::string_view text) { return InternShared(text); }

uint32_t NvtxRecorder::CheckedStringId(uint64_t id) const {
  return id < local_strings_.size() ? static_cast<uint32_t>(id) : 0;
}

void NvtxRecorder::CountDropped(uint64_t count) {
  dropped_pending_.fetch_add(count, std::memory_order_relaxed);
  dropped_total_.fetch_add(count, std::memory_order_relaxed);
}

void NvtxRecorder::EmitLocked(NvtxThreadState& thread, const NvtxEvent& event) {
  const uint64_t buffered = buffered_.load(std::memory_order_relaxed) + thread.unpublished;
  if (buffered >= max_buffered_.load(std::memory_order_relaxed)) {
    CountDropped();
    return;
  }
  thread.events.push_back(event);
  if (++thread.unpublished == kPublishEvery) {
    buffered_.fetch_add(kPublishEvery, std::memory_order_relaxed);
    thread.unpublished = 0;
  }
}

int NvtxRecorder::Push(uint32_t domain, const NvtxAttributes& attributes) {
  const bool record = enabled();
  const uint64_t now = record ? NowNs() : 0;
  NvtxThreadState& thread = CurrentThread();
  int level;
  {
    std::lock_guard<SpinLock> lock(thread.lock);
    if (thread.stacks.size() <= domain) thread.stacks.resize(domain + 1);
    auto& stack = thread.stacks[domain];
    stack.push_back(NvtxThreadState::Frame{now, attributes, record});
    level = static_cast<int>(stack.size() - 1);
  }
  // Outside the lock: the trigger calls into CUPTI.
  if (IsTrigger(domain, attributes.message_id)) TriggerOpened();
  return level;
}
int NvtxRecorder::Pop(uint32_t domain, std::vector<NvtxPayload> end_payloads) {
  const bool record = enabled();
  const uint64_t now = record ? NowNs() : 0;
  NvtxThreadState& thread = CurrentThread();
  NvtxThreadState::Frame frame;
  uint32_t level;
  {
    std::lock_guard<SpinLock> lock(thread.lock);
    if (domain >= thread.stacks.size() || thread.stacks[domain].empty()) return -1;
    auto& stack = thread.stacks[domain];
    frame = stack.back();
    stack.pop_back();
    level = static_cast<uint32_t>(stack.size());
    if (record && frame.recorded) {
      NvtxEvent event = MakeNvtxEvent(NvtxKind::kPushPop, frame.start_ns, now, thread.tid, domain,
                                      frame.attributes);
      event.depth = level;
      for (NvtxPayload& payload : end_payloads) event.payloads.push_back(std::move(payload));
      EmitLocked(thread, event);
    }
  }
  if (IsTrigger(domain, frame.attributes.message_id)) TriggerClosed();
  return static_cast<int>(level);
}

uint64_t NvtxRecorder::StartRange(uint32_t domain, const NvtxAttributes& attributes) {
  const uint64_t id = next_range_id_.fetch_add(1, std::memory_order_relaxed);
  if (!enabled()) return id;
  const uint64_t now = NowNs();
  const uint32_t tid = CurrentThread().tid;
  {
    std::lock_guard<SpinLock> lock(ranges_lock_);
    // The map holds ranges the application may never end: it obeys the same cap as the buffers.
    if (open_ranges_.size() >= max_buffered_.load(std::memory_order_relaxed)) {
      CountDropped();
      return id;
    }
    open_ranges_.emplace(id, OpenRange{now, tid, domain, attributes});
  }
  // Outside the lock: the trigger calls into CUPTI.
  if (IsTrigger(domain, attributes.message_id)) TriggerOpened();
  return id;
}

void NvtxRecorder::SetCaptureTrigger(std::string_view message, std::string_view domain,
                                     std::function<void(bool)> on_change) {
  trigger_on_change_ = std::move(on_change);
  trigger_domain_ = domain.empty() ? 0 : CreateDomain(domain);
  trigger_message_.store(InternShared(message), std::memory_order_release);
}

bool NvtxRecorder::IsTrigger(uint32_t domain, uint32_t message_id) const {
  const uint32_t trigger = trigger_message_.load(std::memory_order_acquire);
  return trigger != 0 && message_id == trigger && domain == trigger_domain_;
}

void NvtxRecorder::TriggerOpened() {
  if (trigger_open_.fetch_add(1) == 0 && trigger_on_change_) trigger_on_change_(true);
}

void NvtxRecorder::TriggerClosed() {
  if (trigger_open_.fetch_sub(1) == 1 && trigger_on_change_) trigger_on_change_(false);
}

void NvtxRecorder::EndRange(uint64_t range_id, std::vector<NvtxPayload> end_payloads) {
  const uint64_t now = NowNs();
  OpenRange range;
  {
    std::lock_guard<SpinLock> lock(ranges_lock_);
    auto it = open_ranges_.find(range_id);
    if (it == open_ranges_.end()) return;
    range = it->second;
    open_ranges_.erase(it);
  }
  if (IsTrigger(range.domain, range.attributes.message_id)) TriggerClosed();
  if (!enabled()) return;
  NvtxThreadState& thread = CurrentThread();
  NvtxEvent event = MakeNvtxEvent(NvtxKind::kStartEnd, range.start_ns, now, range.thread_id,
                                  range.domain, range.attributes);
  event.end_thread_id = thread.tid;
  event.range_id = range_id;
  for (NvtxPayload& payload : end_payloads) event.payloads.push_back(std::move(payload));
  std::lock_guard<SpinLock> lock(thread.lock);
  EmitLocked(thread, event);
}

void NvtxRecorder::Mark(uint32_t domain, const NvtxAttributes& attributes) {
  if (!enabled()) return;
  const uint64_t now = NowNs();
  NvtxThreadState& thread = CurrentThread();
  const NvtxEvent event = MakeNvtxEvent(NvtxKind::kMark, now, now, thread.tid, domain, attributes);
  std::lock_guard<SpinLock> lock(thread.lock);
  EmitLocked(thread, event);
}

void NvtxRecorder::Drain(StringInterner& strings, std::vector<NvtxEvent>* events,
                         std::vector<NvtxDomain>* new_domains,
                         std::vector<NvtxPayloadSchema>* new_schemas, bool final, uint64_t now_ns) {
  std::lock_guard<SpinLock> drain(drain_lock_);
  if (exported_to_ != &strings) {
    // A new trace table: its ids share nothing with the last one's, and its trace has seen no
    // domain yet.
    exported_to_ = &strings;
    exported_ids_.clear();
    std::lock_guard<SpinLock> lock(domains_lock_);
    domains_drained_ = 0;
    schemas_drained_ = 0;
  }
  const size_t first = events->size();
  const size_t first_domain = new_domains->size();
  const bool emit_open = enabled();
  std::vector<std::shared_ptr<NvtxThreadState>> exited;  // freed after the list lock is released
  {
    std::lock_guard<SpinLock> list(threads_lock_);
    for (size_t i = 0; i < threads_.size();) {
      NvtxThreadState& thread = *threads_[i];
      std::vector<NvtxEvent> taken;
      bool gone;
      {
        // Only swaps under the owner's lock: the owner waits a few nanoseconds at most.
        std::lock_guard<SpinLock> lock(thread.lock);
        taken.swap(thread.events);
        thread.events.swap(thread.spare);
        buffered_.fetch_sub(taken.size() - thread.unpublished, std::memory_order_relaxed);
        thread.unpublished = 0;
        gone = thread.exited;
        if (emit_open && (gone || final)) {
          thread.AppendOpenFrames(gone ? thread.exit_ns : now_ns, &taken);
        }
      }
      // Copied rather than moved out, so that the buffer's memory goes back to the thread.
      events->insert(events->end(), taken.begin(), taken.end());
      taken.clear();
      if (!gone && taken.capacity() <= kMaxSpareEvents) {
        std::lock_guard<SpinLock> lock(thread.lock);
        if (thread.spare.capacity() < taken.capacity()) thread.spare.swap(taken);
      }
      if (gone) {
        exited.push_back(std::move(threads_[i]));
        threads_[i] = std::move(threads_.back());
        threads_.pop_back();
      } else {
        ++i;
      }
    }
  }
  if (final && emit_open) {
    std::lock_guard<SpinLock> lock(ranges_lock_);
    for (const auto& [id, range] : open_ranges_) {
      NvtxEvent event = MakeNvtxEvent(NvtxKind::kStartEnd, range.start_ns, now_ns, range.thread_id,
                                      range.domain, range.attributes);
      event.range_id = id;
      event.open = true;
      events->push_back(event);
    }
  }
  // After the events: any domain an event above refers to was created before it, so it is here.
  {
    std::lock_guard<SpinLock> lock(domains_lock_);
    new_domains->insert(new_domains->end(), domains_.begin() + domains_drained_, domains_.end());
    domains_drained_ = domains_.size();
  }
  std::vector<NvtxPayloadSchema> fresh_schemas;
  {
    std::lock_guard<SpinLock> lock(domains_lock_);
    fresh_schemas.assign(schemas_.begin() + schemas_drained_, schemas_.end());
    schemas_drained_ = schemas_.size();
  }
  std::vector<NvtxDomain> fresh(new_domains->begin() + first_domain, new_domains->end());
  ExportStrings(strings, events, first, &fresh, &fresh_schemas);
  std::copy(fresh.begin(), fresh.end(), new_domains->begin() + first_domain);
  new_schemas->insert(new_schemas->end(), fresh_schemas.begin(), fresh_schemas.end());
}

uint64_t NvtxRecorder::RegisterSchema(NvtxPayloadSchema schema,
                                      std::span<const nvtx_payload::TypeInfo> type_info) {
  std::lock_guard<SpinLock> lock(domains_lock_);
  if (schema.schema_id == 0) schema.schema_id = next_dynamic_schema_id_++;
  const uint32_t domain = schema.domain_id;
  nvtx_payload::ResolveLayout(
      type_info, [&](uint64_t id) { return FindSchemaLocked(domain, id); }, &schema);
  const uint64_t id = schema.schema_id;
  schemas_.push_back(std::move(schema));
  return id;
}

const NvtxPayloadSchema* NvtxRecorder::FindSchemaLocked(uint32_t domain,
                                                        uint64_t schema_id) const {
  // Latest registration wins (a library re-registering a static id after a fork, say).
  for (auto it = schemas_.rbegin(); it != schemas_.rend(); ++it) {
    if (it->domain_id == domain && it->schema_id == schema_id) return &*it;
  }
  return nullptr;
}

uint64_t NvtxRecorder::SchemaStaticSize(uint32_t domain, uint64_t schema_id) const {
  std::lock_guard<SpinLock> lock(domains_lock_);
  const NvtxPayloadSchema* schema = FindSchemaLocked(domain, schema_id);
  return schema == nullptr ? 0 : schema->static_size_bytes;
}

void NvtxRecorder::ExportStrings(StringInterner& strings, std::vector<NvtxEvent>* events,
                                 size_t first, std::vector<NvtxDomain>* domains,
                                 std::vector<NvtxPayloadSchema>* schemas) {
  // Every id used above was interned before its event or domain was collected, so it is below
  // this size.
  std::vector<std::string> fresh;
  local_strings_.CopyFrom(static_cast<uint32_t>(exported_ids_.size()), &fresh);
  exported_ids_.reserve(exported_ids_.size() + fresh.size());
  for (const std::string& text : fresh) exported_ids_.push_back(strings.Intern(text));
  auto exported = [this](uint32_t local) {
    return local < exported_ids_.size() ? exported_ids_[local] : 0;
  };
  for (size_t i = first; i < events->size(); ++i) {
    (*events)[i].message_id = exported((*events)[i].message_id);
  }
  for (NvtxDomain& domain : *domains) domain.name_id = exported(domain.name_id);
  for (NvtxPayloadSchema& schema : *schemas) {
    schema.name_id = exported(schema.name_id);
    for (NvtxPayloadEntry& entry : schema.entries) entry.name_id = exported(entry.name_id);
    for (NvtxPayloadEnumValue& value : schema.enum_values) value.name_id = exported(value.name_id);
  }
}

void NvtxRecorder::PrepareFork() {
  drain_lock_.lock();
  threads_lock_.lock();
  for (const auto& thread : threads_) thread->lock.lock();
  ranges_lock_.lock();
  domains_lock_.lock();
  local_strings_.LockForFork();
}

void NvtxRecorder::ParentAfterFork() {
  local_strings_.UnlockAfterFork();
  domains_lock_.unlock();
  ranges_lock_.unlock();
  for (const auto& thread : threads_) thread->lock.unlock();
  threads_lock_.unlock();
  drain_lock_.unlock();
}

void NvtxRecorder::ResetAfterFork() {
  // Only this thread exists now; a lock that another thread held can never be released.
  drain_lock_.Reset();
  threads_lock_.Reset();
  ranges_lock_.Reset();
  domains_lock_.Reset();
  local_strings_.ResetAfterFork();
  NvtxThreadState* self = BoundThreadState(generation_);
  std::shared_ptr<NvtxThreadState> kept;
  for (auto& thread : threads_) {
    thread->lock.Reset();
    thread->unpublished = 0;
    // Completed events belong to the parent's recording, which the parent still writes.
    std::vector<NvtxEvent>().swap(thread->events);
    std::vector<NvtxEvent>().swap(thread->spare);
    if (thread.get() == self) kept = std::move(thread);
  }
  // Other threads' states stay referenced by their (never destroyed) thread_local guards: leaked,
  // but emptied above.
  threads_.clear();
  if (kept) {
    kept->tid = static_cast<uint32_t>(gettid());
    threads_.push_back(std::move(kept));
  }
  buffered_.store(0, std::memory_order_relaxed);
  dropped_pending_.store(0, std::memory_order_relaxed);
  dropped_total_.store(0, std::memory_order_relaxed);
  domains_drained_ = 0;  // the child's trace file needs every domain and schema again
  schemas_drained_ = 0;
}

}  // namespace libprof
