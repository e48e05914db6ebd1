// The loop of the commands that look at one process at a time: loads the traces one file at a
// time, filters them and hands each process to `analyse` before the next file is read, so that
// memory holds one file's records rather than all of them (64 traces of 1M records:
// bench/README.md).
//
// Layer: analysis/ (commands). Shared by commands.cc and compare_commands.cc.
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "proto/trace_inputs.h"
#include "analysis/model/filters.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

// One file of ForEachProcess: loaded, filtered (what the filters matched noted in *matches) and
// each process handed to `analyse`.
template <typename Analyse>
std::expected<void, std::string> ForEachProcessOf(const std::string& path,
                                                  const FilterOptions& filters,
                                                  std::vector<std::string>* warnings,
                                                  FilterMatches* matches, Analyse& analyse) {
  auto loaded = LoadTraceFile(path, warnings);
  if (!loaded) return std::unexpected(loaded.error());
  auto kept = FilterProcesses(std::move(*loaded), filters, matches);
  if (!kept) return std::unexpected(kept.error());
  for (const ProcessTrace& t : *kept) analyse(t);
  return {};
}

template <typename Analyse>
std::expected<void, std::string> ForEachProcess(const std::vector<std::string>& inputs,
                                                const FilterOptions& filters,
                                                std::vector<std::string>* warnings,
                                                Analyse analyse) {
  if (inputs.empty()) return std::unexpected("no trace file given");
  auto files = ExpandTraceInputs(inputs);
  if (!files) return std::unexpected(files.error());
  FilterMatches matches;
  for (const std::string& path : *files) {
    const FilterMatches before = matches;
    if (auto done = ForEachProcessOf(path, filters, warnings, &matches, analyse); !done) {
      return done;
    }
    if (std::string w = NvtxLeftOutWarning(path, before, matches); !w.empty()) {
      warnings->push_back(std::move(w));
    }
  }
  return CheckFilterMatches(filters, matches);
}

// The loop of the commands that read a file in windows when they can (bounded memory,
// model/trace_windows.h): each file goes to `windowed(path, &matches)`, which analyses it in
// windows, filtered as ApplyFilters filters it (model/window_filter.h), notes in matches what
// the filters matched and returns true, or returns false when the windows cannot give the exact
// answer (or it does not filter in windows), and the file is then analysed whole, as
// ForEachProcess does. The output is the same either way; an error of either stops the loop;
// once every file is read, a filter that matched nothing is an error (CheckFilterMatches).
template <typename Windowed, typename Whole>
std::expected<void, std::string> ForEachFileInWindows(const std::vector<std::string>& inputs,
                                                      const FilterOptions& filters,
                                                      std::vector<std::string>* warnings,
                                                      Windowed windowed, Whole whole) {
  if (inputs.empty()) return std::unexpected("no trace file given");
  auto files = ExpandTraceInputs(inputs);
  if (!files) return std::unexpected(files.error());
  FilterMatches matches;
  for (const std::string& path : *files) {
    const FilterMatches before = matches;
    std::expected<bool, std::string> done = windowed(path, &matches);
    if (!done) return std::unexpected(done.error());
    if (!*done) {
      if (auto loaded = ForEachProcessOf(path, filters, warnings, &matches, whole); !loaded) {
        return loaded;
      }
    }
    if (std::string w = NvtxLeftOutWarning(path, before, matches); !w.empty()) {
      warnings->push_back(std::move(w));
    }
  }
  return CheckFilterMatches(filters, matches);
}

}  // namespace libprof::analysis
