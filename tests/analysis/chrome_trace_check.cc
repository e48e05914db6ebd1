#include "tests/analysis/chrome_trace_check.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace libprof::analysis::testing {
namespace {

using Json = nlohmann::json;
using Track = std::pair<int64_t, int64_t>;  // (pid, tid)

struct Slice {
  int64_t start = 0;
  int64_t end = 0;
};

std::string Where(size_t i, const Json& e) {
  return "event " + std::to_string(i) + " (" + e.value("ph", "?") + " " +
         (e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "?") + ")";
}

bool Inside(const std::vector<Slice>& slices, int64_t t) {
  for (const Slice& s : slices) {
    if (s.start <= t && t <= s.end) return true;
  }
  return false;
}

}  // namespace

int64_t Nanos(const Json& micros) {
  return static_cast<int64_t>(std::llround(micros.get<double>() * 1000.0));
}

std::vector<std::string> CheckChromeTrace(const Json& document) {
  std::vector<std::string> problems;
  if (!document.is_object() || !document.contains("traceEvents") ||
      !document["traceEvents"].is_array()) {
    return {"no traceEvents array"};
  }
  if (document.value("displayTimeUnit", "") != "ns") problems.push_back("displayTimeUnit is not ns");
  const Json& events = document["traceEvents"];

  std::map<Track, int64_t> last_ts;
  std::map<Track, std::vector<Slice>> open;    // per track, the open slices (a stack)
  std::map<Track, std::vector<Slice>> slices;  // per track, every slice
  struct FlowEnd {
    const Json* event;
    Track track;
    int64_t ts;
  };
  std::map<uint64_t, std::vector<FlowEnd>> flow_starts, flow_ends;
  std::map<std::pair<std::string, uint64_t>, std::vector<const Json*>> async_begins, async_ends;
  std::set<int64_t> pids, named_pids;
  std::set<Track> tracks, named_tracks;
  const std::set<std::string> phases = {"X", "i", "s", "f", "b", "e", "M", "C"};

  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string() || !e.contains("name") ||
        !e["name"].is_string() || !e.contains("pid") || !e["pid"].is_number_integer() ||
        !e.contains("tid") || !e["tid"].is_number_integer()) {
      problems.push_back(Where(i, e) + ": lacks ph, name, pid or tid");
      continue;
    }
    const std::string ph = e["ph"];
    if (phases.count(ph) == 0) {
      problems.push_back(Where(i, e) + ": unknown phase");
      continue;
    }
    const Track track{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
    if (ph == "M") {
      if (e["name"] == "process_name") named_pids.insert(track.first);
      if (e["name"] == "thread_name") named_tracks.insert(track);
      if (!e.contains("args") || !e["args"].is_object()) {
        problems.push_back(Where(i, e) + ": metadata without args");
      }
      continue;
    }
    pids.insert(track.first);
    if (!e.contains("ts") || !e["ts"].is_number()) {
      problems.push_back(Where(i, e) + ": no numeric ts");
      continue;
    }
    const int64_t ts = Nanos(e["ts"]);
    if (ph == "C") {
      // A counter: its values are the args, numbers all (Perfetto draws one track per name).
      bool numeric = e.contains("args") && e["args"].is_object() && !e["args"].empty();
      if (numeric) {
        for (const auto& [key, value] : e["args"].items()) numeric = numeric && value.is_number();
      }
      if (!numeric) problems.push_back(Where(i, e) + ": counter without numeric args");
      continue;
    }
    if (ph == "X" || ph == "i" || ph == "s" || ph == "f") tracks.insert(track);
    if (ph == "X" || ph == "i") {
      auto [it, first] = last_ts.try_emplace(track, ts);
      if (!first && ts < it->second) {
        problems.push_back(Where(i, e) + ": ts goes back on its track");
      }
      it->second = ts;
    }
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || Nanos(e["dur"]) < 0) {
        problems.push_back(Where(i, e) + ": no dur >= 0");
        continue;
      }
      const Slice slice{ts, ts + Nanos(e["dur"])};
      std::vector<Slice>& stack = open[track];
      while (!stack.empty() && stack.back().end <= slice.start) stack.pop_back();
      if (!stack.empty() && stack.back().end < slice.end) {
        problems.push_back(Where(i, e) + ": overlaps an enclosing slice without nesting in it");
      }
      stack.push_back(slice);
      slices[track].push_back(slice);
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !e["id"].is_number_unsigned()) {
        problems.push_back(Where(i, e) + ": flow without id");
        continue;
      }
      if (ph == "f" && e.value("bp", "") != "e") {
        problems.push_back(Where(i, e) + ": flow end not bound to its enclosing slice");
      }
      (ph == "s" ? flow_starts : flow_ends)[e["id"].get<uint64_t>()].push_back({&e, track, ts});
    } else if (ph == "b" || ph == "e") {
      if (!e.contains("id") || !e["id"].is_number_unsigned()) {
        problems.push_back(Where(i, e) + ": async event without id");
        continue;
      }
      const auto key = std::make_pair(e.value("cat", ""), e["id"].get<uint64_t>());
      (ph == "b" ? async_begins : async_ends)[key].push_back(&e);
    }
  }

  for (const auto& [id, starts] : flow_starts) {
    const auto ends = flow_ends.find(id);
    if (starts.size() != 1 || ends == flow_ends.end() || ends->second.size() != 1) {
      problems.push_back("flow " + std::to_string(id) + ": not exactly one start and one end");
      continue;
    }
    const FlowEnd& s = starts.front();
    const FlowEnd& f = ends->second.front();
    if ((*s.event)["name"] != (*f.event)["name"] ||
        s.event->value("cat", "") != f.event->value("cat", "")) {
      problems.push_back("flow " + std::to_string(id) + ": ends differ in name or category");
    }
    if (!Inside(slices[s.track], s.ts)) {
      problems.push_back("flow " + std::to_string(id) + ": start outside any slice");
    }
    if (!Inside(slices[f.track], f.ts)) {
      problems.push_back("flow " + std::to_string(id) + ": end outside any slice");
    }
  }
  for (const auto& [id, ends] : flow_ends) {
    if (flow_starts.count(id) == 0) {
      problems.push_back("flow " + std::to_string(id) + ": end without start");
    }
  }
  for (const auto& [key, begins] : async_begins) {
    const auto ends = async_ends.find(key);
    if (begins.size() != 1 || ends == async_ends.end() || ends->second.size() != 1) {
      problems.push_back("async " + key.first + " " + std::to_string(key.second) +
                         ": not exactly one begin and one end");
      continue;
    }
    if (Nanos((*ends->second.front())["ts"]) < Nanos((*begins.front())["ts"])) {
      problems.push_back("async " + std::to_string(key.second) + ": ends before it begins");
    }
  }
  for (const auto& [key, ends] : async_ends) {
    if (async_begins.count(key) == 0) {
      problems.push_back("async " + std::to_string(key.second) + ": end without begin");
    }
  }
  for (int64_t pid : pids) {
    if (named_pids.count(pid) == 0) problems.push_back("pid " + std::to_string(pid) + " unnamed");
  }
  for (const Track& t : tracks) {
    if (named_tracks.count(t) == 0) {
      problems.push_back("track " + std::to_string(t.first) + "/" + std::to_string(t.second) +
                         " unnamed");
    }
  }
  return problems;
}

}  // namespace libprof::analysis::testing
