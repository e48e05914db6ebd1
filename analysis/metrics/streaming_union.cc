#include "analysis/metrics/streaming_union.h"

#include <algorithm>

namespace libprof::analysis {

StreamingUnion::StreamingUnion(size_t max_pending, uint64_t horizon_ns, std::vector<Interval>* sink)
    : max_pending_(max_pending), horizon_ns_(horizon_ns), sink_(sink) {
  inbox_.reserve(kInboxSize);
}

void StreamingUnion::Add(uint64_t start_ns, uint64_t end_ns) {
  if (end_ns <= start_ns) return;
  inbox_.push_back({start_ns, end_ns});
  latest_end_ns_ = std::max(latest_end_ns_, end_ns);
  if (inbox_.size() >= kInboxSize) Compact();
}

void StreamingUnion::AddClipped(uint64_t start_ns, uint64_t end_ns,
                                const std::vector<Interval>& windows) {
  if (end_ns <= start_ns) return;
  // First window that ends after `start_ns`.
  auto it = std::upper_bound(windows.begin(), windows.end(), start_ns,
                             [](uint64_t t, const Interval& w) { return t < w.end_ns; });
  for (; it != windows.end() && it->start_ns < end_ns; ++it) {
    Add(std::max(start_ns, it->start_ns), std::min(end_ns, it->end_ns));
  }
}

void StreamingUnion::Compact() {
  if (inbox_.empty()) return;
  std::sort(inbox_.begin(), inbox_.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  if (settled_any_ && inbox_.front().start_ns < frontier_ns_) out_of_order_ = true;
  // Only the pieces that end at or after the batch's first start can merge with it.
  const uint64_t first = inbox_.front().start_ns;
  const size_t keep = std::lower_bound(pending_.begin(), pending_.end(), first,
                                       [](const Interval& p, uint64_t t) { return p.end_ns < t; }) -
                      pending_.begin();
  merged_.clear();
  auto add = [this](const Interval& i) {
    if (!merged_.empty() && i.start_ns <= merged_.back().end_ns) {
      merged_.back().end_ns = std::max(merged_.back().end_ns, i.end_ns);
    } else {
      merged_.push_back(i);
    }
  };
  size_t p = keep, q = 0;
  while (p < pending_.size() || q < inbox_.size()) {
    if (q == inbox_.size() || (p < pending_.size() && pending_[p].start_ns <= inbox_[q].start_ns)) {
      add(pending_[p++]);
    } else {
      add(inbox_[q++]);
    }
  }
  pending_.resize(keep);
  pending_.insert(pending_.end(), merged_.begin(), merged_.end());
  inbox_.clear();
  if (max_pending_ != 0 && pending_.size() > max_pending_ && latest_end_ns_ > horizon_ns_) {
    // Pieces are disjoint and sorted, so their ends grow too: the old ones are a prefix.
    const uint64_t old_before = latest_end_ns_ - horizon_ns_;
    const size_t old =
        std::lower_bound(pending_.begin(), pending_.end(), old_before,
                         [](const Interval& p, uint64_t t) { return p.end_ns < t; }) -
        pending_.begin();
    Settle(std::min(old, pending_.size() - max_pending_ / 2));
  }
}

void StreamingUnion::Settle(size_t pieces) {
  for (size_t i = 0; i < pieces; ++i) {
    const Interval& piece = pending_[i];
    settled_ns_ += piece.length();
    if (sink_ != nullptr) {
      if (!sink_->empty() && piece.start_ns <= sink_->back().end_ns) {
        sink_->back().end_ns = std::max(sink_->back().end_ns, piece.end_ns);
      } else {
        sink_->push_back(piece);
      }
    }
    frontier_ns_ = std::max(frontier_ns_, piece.end_ns);
    settled_any_ = true;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pieces));
}

void StreamingUnion::Finish() {
  Compact();
  Settle(pending_.size());
}

}  // namespace libprof::analysis
