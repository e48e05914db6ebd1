#!/usr/bin/env python3
"""Renders `profview report` pages of the recorded sample traces in headless Chromium and checks
what a browser shows: no console error, no exception, no network request; every section
present; one timeline lane per host thread and per GPU stream that the trace has (streams as
`profview streams` lists them); a blocked-call mark for each blocked call that `profview
findings` reports (host-wait rules, as viewer-cli/USAGE.md classes them), its arrow starting in
the call's thread lane and ending in the waited-for work's stream lane at the time that work
ended (from `profview trace`); each one-time band where its data puts it, with every host
finding inside an autotuner or a compiler in one; for a trace with unified-memory migrations, a drawn migration
series per direction with the bytes `profview memory` reports. Also a report of two processes merged into one file (overview per
rank), and a trace that cannot be read (error, exit code as `profview summary`, no page).
Writes a full-page and a timeline screenshot PNG per page for a person to look at.

usage: report_browser_test.py --profview BIN --traces DIR --usage USAGE.md --out DIR
Exit 77 (CTest: skipped) with the reason when Chromium is not installed.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp_pipe import Browser, find_chromium  # noqa: E402

SECTIONS = ["headline", "findings", "timeline", "details", "utilization", "memory", "bandwidth",
            "summary"]
# Blocked-call marks drawn on the whole-trace timeline (html_process_report.cc kOverviewMarks).
OVERVIEW_MARKS = 60
# How far (pixels) a mark's end may sit from where the trace puts it: coordinates are printed
# with one decimal, and the arrow head is drawn inside its lane.
TOLERANCE_PX = 1.0

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(args, expect_ok=True):
    result = subprocess.run(args, capture_output=True, text=True)
    if expect_ok and result.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(args), result.returncode,
                                                   result.stderr))
    return result


def host_wait_rules(usage_path):
    """The rules of family host-wait, from USAGE.md's rules table (which rule_registry_test
    holds to the registry)."""
    rules = set()
    with open(usage_path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\|\s*`([a-z-]+)`\s*\|\s*host-wait\s*\|", line)
            if m:
                rules.add(m.group(1))
    if not rules:
        raise RuntimeError("no host-wait rule found in " + usage_path)
    return rules


# What the page holds, read back from the DOM in one evaluation.
DOM_QUERY = r"""
(() => {
  const sections = {};
  for (const s of document.querySelectorAll('section[id]')) {
    sections[s.id] = {title: (s.querySelector('h2,h3') || {}).textContent || '',
                      children: s.children.length};
  }
  const svgs = {};
  for (const svg of document.querySelectorAll('svg.timeline')) {
    const lanes = [...svg.querySelectorAll('g.lane')].map(g => ({
      kind: g.dataset.kind, thread: g.dataset.thread, device: g.dataset.device,
      stream: g.dataset.stream, y0: +g.dataset.y0, y1: +g.dataset.y1,
      label: (g.querySelector('text.lane-label') || {}).textContent || '',
      box: (() => { const r = g.getBBox(); return [r.x, r.y, r.width, r.height]; })()}));
    const marks = [...svg.querySelectorAll('g.blocked')].map(g => {
      const l = g.querySelector('line');
      return {thread: g.dataset.thread, corr: g.dataset.corr, device: g.dataset.device,
              stream: g.dataset.stream, opCorr: g.dataset.opCorr, blockedNs: +g.dataset.blockedNs,
              x1: +l.getAttribute('x1'), y1: +l.getAttribute('y1'),
              x2: +l.getAttribute('x2'), y2: +l.getAttribute('y2')};
    });
    const oneTime = [...svg.querySelectorAll('g.one-time')].map(g => {
      const r = g.querySelector('rect');
      return {start: +g.dataset.startNs, end: +g.dataset.endNs, x: +r.getAttribute('x'),
              width: +r.getAttribute('width'), drawn: r.getBoundingClientRect().width,
              title: (g.querySelector('title') || {}).textContent || ''};
    });
    svgs[svg.id] = {t0: +svg.dataset.t0Ns, t1: +svg.dataset.t1Ns, origin: +svg.dataset.originNs,
                    x0: +svg.dataset.x0, width: +svg.dataset.plotWidth, lanes, marks, oneTime,
                    rendered: svg.getBoundingClientRect().width};
  }
  const migrations = [...document.querySelectorAll('svg.chart.migrations path.series')].map(
      p => ({direction: p.dataset.direction, bytes: +p.dataset.bytes,
             drawn: p.getBoundingClientRect().width}));
  return {title: document.title, sections, svgs, migrations,
          ranks: document.querySelectorAll('g.rank-strip').length,
          bytes: document.documentElement.outerHTML.length};
})()
"""


def check_migrations(name, page, memory):
    """The migration chart against `profview memory`'s unified-memory migrations."""
    expected = []
    for p in memory["processes"]:
        for m in p.get("unified_memory", {}).get("migrations", []):
            expected.append((m["direction"], m["bytes"]))
    drawn = [(m["direction"], m["bytes"]) for m in page["migrations"]]
    check(drawn == expected, "%s: migration series %s, profview memory has %s" %
          (name, drawn, expected))
    for m in page["migrations"]:
        check(m["drawn"] > 100, "%s: migration series %s is not drawn" % (name, m["direction"]))


def check_one_time(name, page, findings):
    """The one-time work's bands on the whole-trace timeline: each drawn where its data says,
    and every host finding inside an autotuner or a compiler (`one_time` in profview findings)
    lying inside one of them."""
    svg = page["svgs"].get("p0-timeline-svg")
    if svg is None:
        return
    bands = svg["oneTime"]
    scale = svg["width"] / max(svg["t1"] - svg["t0"], 1)
    for b in bands:
        x1 = svg["x0"] + (max(b["start"], svg["t0"]) - svg["t0"]) * scale
        x2 = svg["x0"] + (min(b["end"], svg["t1"]) - svg["t0"]) * scale
        check(abs(b["x"] - x1) <= TOLERANCE_PX, "%s: a one-time band starts at x=%.1f, its data "
              "says %.1f" % (name, b["x"], x1))
        check(abs(b["width"] - max(2.0, x2 - x1)) <= TOLERANCE_PX, "%s: a one-time band is %.1f "
              "wide, its data says %.1f" % (name, b["width"], max(2.0, x2 - x1)))
        check(b["drawn"] > 0 and b["title"].endswith(", paid once"),
              "%s: a one-time band is not drawn or not named: %s" % (name, b))
    for f in findings:
        if not f.get("one_time"):
            continue
        start = svg["origin"] + f["host_start_ns"]
        end = start + f["host_duration_ns"]
        check(any(b["start"] <= start and end <= b["end"] for b in bands),
              "%s: the %s finding at %d ns (%s) lies in no one-time band" %
              (name, f["rule"], f["host_start_ns"], f["one_time"]))
    return len(bands)


def check_page(name, page, findings, streams, trace_events, host_wait):
    prefix = "p0"
    for s in SECTIONS:
        sid = prefix + "-" + s
        check(sid in page["sections"], "%s: section %s missing" % (name, sid))
        if sid in page["sections"]:
            check(page["sections"][sid]["children"] >= 2, "%s: section %s is empty" % (name, sid))
    svg = page["svgs"].get(prefix + "-timeline-svg")
    if not check(svg is not None, name + ": no whole-trace timeline"):
        return
    check(svg["rendered"] > 500, name + ": the timeline was not laid out")
    # Lanes: every stream with work, and every thread with a finding's call.
    lane_streams = {(l["device"], l["stream"]) for l in svg["lanes"] if l["kind"] == "stream"}
    expected_streams = set()
    for p in streams["processes"]:
        for s in p["streams"]:
            work = s["kernels"]["count"] + s["memsets"]["count"] + s["graphs"]["count"] + sum(
                c["count"] for c in s["copies"].values())
            if work:
                expected_streams.add((str(s["device_id"]), str(s["stream_id"])))
    check(lane_streams == expected_streams, "%s: stream lanes %s, the trace has %s" %
          (name, sorted(lane_streams), sorted(expected_streams)))
    lane_threads = {l["thread"] for l in svg["lanes"] if l["kind"] == "thread"}
    for f in findings:
        if f["rule"] in host_wait:
            check(str(f["thread_id"]) in lane_threads,
                  "%s: no lane for thread %d of a %s finding" % (name, f["thread_id"], f["rule"]))
    for l in svg["lanes"]:
        check(l["y1"] > l["y0"] and l["box"][3] > 0, "%s: lane %s has no height" % (name, l))
    # Marks: one per (host-wait finding, blamed work with device operations), most time first.
    ends = {}
    for e in trace_events:
        if e["kind"] != "api" and "device_id" in e:
            end = e["start_ns"] + e["duration_ns"]
            key = e["id"]
            if key not in ends or end > ends[key][0]:
                ends[key] = (end, str(e["device_id"]), str(e["stream_id"]))
    expected = []
    for f in findings:
        if f["rule"] not in host_wait:
            continue
        for b in f["blamed"]:
            if b["correlation_id"] in ends:
                expected.append((str(f["thread_id"]), str(f["correlation_id"]),
                                 str(b["correlation_id"]), f["blocked_ns"]))
    want = min(len(expected), OVERVIEW_MARKS)
    check(len(svg["marks"]) == want, "%s: %d blocked-call marks, expected %d" %
          (name, len(svg["marks"]), want))
    expected_keys = {e[:3] for e in expected}
    lanes = {(l["kind"], l["thread"] if l["kind"] == "thread" else (l["device"], l["stream"])): l
             for l in svg["lanes"]}
    scale = svg["width"] / (svg["t1"] - svg["t0"])
    for m in svg["marks"]:
        key = (m["thread"], m["corr"], m["opCorr"])
        if not check(key in expected_keys, "%s: mark %s matches no blocked call" % (name, key)):
            continue
        end_ns, device, stream = ends[int(m["opCorr"])]
        check((m["device"], m["stream"]) == (device, stream),
              "%s: mark %s on stream %s, the work ran on %s" %
              (name, key, (m["device"], m["stream"]), (device, stream)))
        thread_lane = lanes.get(("thread", m["thread"]))
        stream_lane = lanes.get(("stream", (device, stream)))
        if check(thread_lane and stream_lane, "%s: mark %s has no lanes" % (name, key)):
            check(thread_lane["y0"] <= m["y1"] <= thread_lane["y1"],
                  "%s: mark %s starts at y=%s, outside thread lane %s-%s" %
                  (name, key, m["y1"], thread_lane["y0"], thread_lane["y1"]))
            check(stream_lane["y0"] <= m["y2"] <= stream_lane["y1"],
                  "%s: mark %s ends at y=%s, outside stream lane %s-%s" %
                  (name, key, m["y2"], stream_lane["y0"], stream_lane["y1"]))
        x_end = svg["x0"] + (svg["origin"] + end_ns - svg["t0"]) * scale
        x_end = min(max(x_end, svg["x0"]), svg["x0"] + svg["width"])
        check(abs(m["x2"] - x_end) <= TOLERANCE_PX,
              "%s: mark %s ends at x=%.1f, the work ended at x=%.1f" % (name, key, m["x2"], x_end))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profview", required=True)
    parser.add_argument("--traces", required=True)
    parser.add_argument("--usage", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("SKIP: Chromium is not installed (Debian: apt-get install chromium; "
              "scripts/install-deps.sh installs it)")
        return 77
    os.makedirs(args.out, exist_ok=True)
    host_wait = host_wait_rules(args.usage)
    traces = sorted(glob.glob(os.path.join(args.traces, "*.pb")))
    if not traces:
        raise RuntimeError("no traces in " + args.traces)
    work = tempfile.mkdtemp(prefix="profview-report-test-")
    with Browser(chromium) as browser:
        for trace in traces:
            name = os.path.splitext(os.path.basename(trace))[0]
            html = os.path.join(work, name + ".html")
            run([args.profview, "report", "-o", html, trace])
            findings = json.loads(run([args.profview, "findings", "--all", "--format", "json",
                                       trace]).stdout)["findings"]
            streams = json.loads(run([args.profview, "streams", "--format", "json",
                                      trace]).stdout)
            events = json.loads(run([args.profview, "trace", "--format", "json",
                                     trace]).stdout)["events"]
            memory = json.loads(run([args.profview, "memory", "--format", "json",
                                     trace]).stdout)
            browser.errors.clear()
            seconds = browser.load(html)
            page = browser.evaluate(DOM_QUERY)
            check(not browser.errors, "%s: the browser reported %s" % (name, browser.errors))
            check_page(name, page, findings, streams, events, host_wait)
            check_migrations(name, page, memory)
            bands = check_one_time(name, page, findings)
            if name == "torch_autotune":  # cuDNN's search and Triton's autotuning
                check(bands, "torch_autotune: no one-time band on the timeline")
            browser.screenshot(os.path.join(args.out, name + ".png"))
            browser.screenshot_element("#p0-timeline", os.path.join(args.out,
                                                                    name + "-timeline.png"))
            print("%s: %d bytes, loaded in %.2f s, %d lanes, %d marks, %d one-time bands" % (
                name, os.path.getsize(html), seconds,
                len(page["svgs"]["p0-timeline-svg"]["lanes"]),
                len(page["svgs"]["p0-timeline-svg"]["marks"]), bands or 0))

        # Two processes in one merged file: an overview per rank, a section per process.
        merged = os.path.join(work, "merged.pb")
        pair = [t for t in traces if os.path.basename(t) in ("normalize_nrm2.pb",
                                                             "stream_overlap.pb")]
        run([args.profview, "merge", "-o", merged] + pair)
        html = os.path.join(work, "merged.html")
        run([args.profview, "report", "-o", html, merged])
        browser.errors.clear()
        browser.load(html)
        page = browser.evaluate(DOM_QUERY)
        check(not browser.errors, "merged: the browser reported %s" % browser.errors)
        check("overview" in page["sections"], "merged: no overview section")
        check(page["ranks"] == 2, "merged: %d rank strips, expected 2" % page["ranks"])
        for p in ("p0", "p1"):
            for s in SECTIONS:
                check(p + "-" + s in page["sections"], "merged: section %s-%s missing" % (p, s))
        browser.screenshot(os.path.join(args.out, "merged.png"))
        browser.screenshot_element("#overview", os.path.join(args.out, "merged-overview.png"))

    # A trace that cannot be read: an error, the exit code of the other subcommands, no page.
    bad = os.path.join(work, "bad.pb")
    with open(bad, "wb") as f:
        f.write(b"this is not a libprof trace")
    out = os.path.join(work, "bad.html")
    report = run([args.profview, "report", "-o", out, bad], expect_ok=False)
    summary = run([args.profview, "summary", bad], expect_ok=False)
    check(report.returncode != 0 and report.returncode == summary.returncode,
          "bad trace: report exited %d, summary %d" % (report.returncode, summary.returncode))
    check("bad.pb" in report.stderr, "bad trace: the error does not name the file: " +
          report.stderr)
    check(not os.path.exists(out), "bad trace: a page was written")
    check(not [n for n in os.listdir(work) if n.startswith(".bad.html")],
          "bad trace: a temporary file was left")

    print("screenshots in " + args.out)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
