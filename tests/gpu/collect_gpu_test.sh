#!/usr/bin/env bash
# GPU tests of collect.sh (issue 4): run real CUDA programs through the launcher and check the
# traces with profview. Exits 77 (skipped) where no GPU is present.
# usage: collect_gpu_test.sh COLLECT_SH PROFVIEW SAMPLES_BIN_DIR TORCH_LOOP_PY
set -uo pipefail
collect=$1 profview=$2 bin=$3 torch_py=$4
if [[ ! -e /dev/nvidiactl ]] || ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU here"; exit 77
fi
work=$(mktemp -d)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
count_traces() { compgen -G "$1/*.pb" | wc -l; }
# Number of device-table rows (kernels, copies) of a trace whose name contains $2.
kernels_named() {
  "$profview" summary --format json "$1" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["device"]
print(sum(r["calls"] for r in rows if sys.argv[1] in r["name"]))' "$2"
}

# Proves: a program that forks two CUDA children gives one trace per CUDA process (3), and the
# child forked after CUDA started writes none; the exit code is the program's.
d=$work/fork; mkdir -p "$d"
timeout 120 "$collect" -o "$d/" -- "$bin/fork_children" >"$work/fork.out" 2>"$work/fork.err" || fail "fork_children exit $?"
[[ $(count_traces "$d") -eq 3 ]] || fail "fork_children: $(count_traces "$d") traces, want 3"

# Proves: a shell script starting two CUDA processes gives two traces.
d=$work/script; mkdir -p "$d"
timeout 120 "$collect" -o "$d/" -- sh -c "'$bin/launch_bound' 100 && '$bin/launch_bound' 200" >/dev/null 2>&1 || fail "script exit"
[[ $(count_traces "$d") -eq 2 ]] || fail "script: $(count_traces "$d") traces, want 2"

# Proves: %n numbers the processes of one job with the first free numbers, and each trace's
# header holds the rank its launcher announced (torchrun's RANK here), as profview shows it.
d=$work/ranks; mkdir -p "$d"
timeout 120 "$collect" -o "$d/run.%n.pb" -- sh -c "RANK=0 '$bin/launch_bound' 100 && RANK=1 '$bin/launch_bound' 200" >/dev/null 2>&1 || fail "ranks exit"
if [[ -f $d/run.1.pb && -f $d/run.2.pb ]]; then
  ranks=$("$profview" summary --format json "$d/run.1.pb" "$d/run.2.pb" | python3 -c '
import json, sys
print(" ".join(str(p.get("rank")) for p in json.load(sys.stdin)["processes"]))')
  [[ $ranks == "0 1" ]] || fail "ranks: '$ranks', want '0 1'"
else
  fail "ranks: want run.1.pb and run.2.pb, have: $(ls "$d")"
fi

# Proves: a Python program (PyTorch) is recorded without --preload, NVTX included.
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  d=$work/python; mkdir -p "$d"
  timeout 240 "$collect" -o "$d/t-%p.pb" -- python3 "$torch_py" >/dev/null 2>"$work/python.err" || fail "python exit"
  t=$(compgen -G "$d/*.pb" | head -1)
  if [[ -z "$t" ]]; then fail "python: no trace"; else
    "$profview" summary "$t" | grep -q "torch_loop" || fail "python: NVTX range torch_loop missing"
    [[ $(kernels_named "$t" "") -ge 1000 ]] || fail "python: fewer than 1000 device operations"
  fi
else
  echo "note: no CUDA-enabled torch, Python case skipped"
fi

# Proves: --capture-range cudaProfilerApi and nvtx:NAME record only the chosen phase.
for range in cudaProfilerApi:ProfiledKernel:50 nvtx:capture-me:NvtxKernel:30; do
  spec=${range%:*:*} kernel=$(echo "$range" | awk -F: '{print $(NF-1)}') want=${range##*:}
  t=$work/range-$kernel.pb
  timeout 120 "$collect" -c "$spec" -o "$t" -- "$bin/capture_ranges" >/dev/null 2>&1 || fail "$spec exit"
  got=$(kernels_named "$t" "$kernel"); other=$(kernels_named "$t" "Kernel")
  [[ "$got" == "$want" && "$other" == "$want" ]] || fail "$spec: $got $kernel of $other kernels, want $want of $want"
done

# Proves: an existing trace is never overwritten (the next free name is used, and libprof says
# so), and folders named by the output template are created.
t=$work/new/dir/same.pb
for run in 1 2; do
  timeout 120 "$collect" -o "$t" -- "$bin/launch_bound" 100 >/dev/null 2>"$work/same$run.err" || fail "same-name run $run"
done
[[ -s $t && -s $work/new/dir/same.1.pb ]] || fail "no-overwrite: expected same.pb and same.1.pb"
grep -q "exists; writing .*same.1.pb instead" "$work/same2.err" || fail "no-overwrite: not said on stderr"

# Proves: --stats prints the summary and findings after the program, and keeps its exit code.
d=$work/stats; mkdir -p "$d"
timeout 120 "$collect" --stats -o "$d/" -- "$bin/normalize_nrm2" 5 >"$work/stats.out" 2>"$work/stats.err"
code=$?
[[ $code -eq 0 ]] || fail "--stats exit $code"
grep -q "Host-side activity" "$work/stats.out" || fail "--stats: no summary"
grep -q "blocked-on-prior-work" "$work/stats.out" || fail "--stats: no blocking finding for nrm2"

if ((failures)); then
  echo "$failures failure(s); outputs kept in $work"; tail -5 "$work"/*.err; exit 1
fi
rm -rf "$work"
echo "OK: collect.sh GPU cases passed"
