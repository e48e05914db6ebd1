// Structural checks of a Chrome Trace Event Format document, as ui.perfetto.dev and
// chrome://tracing need it: the shape of each event, timestamps and nesting per track, both ends
// of every flow and async range, and names for every process and track. Used by the export tests
// on every trace they export.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace libprof::analysis::testing {

// Every problem found, one line each (empty when the document is well formed):
// - the document is an object with "traceEvents" (array) and "displayTimeUnit": "ns";
// - each event has string "ph" (X i s f b e M C) and "name", integer "pid" and "tid"; all but M a
//   numeric "ts"; X a "dur" >= 0; C (a counter) args whose values are all numbers;
// - per (pid, tid), X and i events come in non-decreasing ts and the X slices nest strictly;
// - each flow id has one "s" and one "f" (same name and category, "bp":"e"), each inside an X
//   slice of its own track;
// - each async id has one "b" and one "e", the end not before the begin;
// - every pid has a process_name, and every track with events a thread_name.
std::vector<std::string> CheckChromeTrace(const nlohmann::json& document);

// A timestamp or duration of the document ("41.000" µs) in integer nanoseconds.
int64_t Nanos(const nlohmann::json& micros);

}  // namespace libprof::analysis::testing
