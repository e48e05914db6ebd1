// Stable sorting of lists that arrive almost in order, as a trace's lists do: CUPTI delivers a
// kind's records nearly by time (a nested driver call just before the runtime call around it,
// a buffer of one stream after another's), so an insertion sort finishes them in about one pass,
// where std::stable_sort pays n log n comparisons and a buffer of n/2 elements every time.
//
// Layer: analysis/model/. Pure, header-only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace libprof::analysis {

// Sorts [first, last) by `less` (a strict weak order), stably: the result std::stable_sort gives.
// Linear in the list plus the distance elements move; once the elements moved exceed
// kMovesPerElement per element (a list far from sorted), the rest is left to std::stable_sort.
template <typename It, typename Less>
void StableSortNearlySorted(It first, It last, Less less) {
  constexpr size_t kMovesPerElement = 8;  // a judgement: a few local swaps per element
  const size_t max_moves = kMovesPerElement * static_cast<size_t>(last - first);
  size_t moves = 0;
  for (It i = first == last ? last : std::next(first); i != last; ++i) {
    if (!less(*i, *std::prev(i))) continue;
    // Moves left past the elements greater than it only: equal elements keep their order.
    auto value = std::move(*i);
    It j = i;
    do {
      *j = std::move(*std::prev(j));
      --j;
      ++moves;
    } while (j != first && less(value, *std::prev(j)));
    *j = std::move(value);
    if (moves > max_moves) {
      // Equal elements are still in their original order: a stable sort of the whole keeps it.
      std::stable_sort(first, last, less);
      return;
    }
  }
}

}  // namespace libprof::analysis
