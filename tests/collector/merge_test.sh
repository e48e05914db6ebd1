#!/usr/bin/env bash
# Tests of `profview merge` through the CLI. One case per run:
#   merge_test.sh PROFVIEW MAKE_TRACES GOLDEN_DIR SAMPLE_TRACES_DIR CASE
# synthetic  merges tests/analysis's synthetic traces; the merge listing and `profview summary` of
#            the merged file are compared with GOLDEN_DIR/merge_listing.out and
#            merge_summary.out (UPDATE=1 rewrites them), and summary, findings and trace of the
#            merged file must equal those of the separate files but for the file names.
# directory  a directory argument (of merge, summary, findings, trace) stands for its *.pb files,
#            sorted by name.
# samples    the same equivalence on the real traces of samples/traces.
# errors     bad arguments, inputs and outputs: one line on stderr, exit status 1 or 2.
set -euo pipefail

# Absolute: the cases change directory.
profview=$(realpath "$1")
make_traces=$(realpath "$2")
golden=$(realpath "$3")
samples=$(realpath "$4")
case_name=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COLUMNS=120 LC_ALL=C.UTF-8

failures=0
fail_check() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Output of profview without the file names it prints ("Process 4242 on host (FILE)" headings;
# "file" fields of JSON), so that one merged file and the separate files compare equal.
without_paths() {
  "$profview" "$@" | sed -e 's/^\(Process [0-9]* on .*\) (.*)$/\1/' -e 's/"file": *"[^"]*"/"file"/g'
}

# Expects `profview SUBCOMMAND [FLAGS] merged` to print what it prints for the separate files.
expect_same_analysis() {  # MERGED FILES...
  local merged=$1
  shift
  local args
  for args in "summary" "summary --format json" "findings" "findings --format csv" "trace"; do
    # shellcheck disable=SC2086  # the flags are words
    if ! diff -u <(without_paths $args "$@") <(without_paths $args "$merged") >"$work/diff"; then
      fail_check "profview $args differs between the merged file and the separate files:"
      cat "$work/diff" >&2
    fi
  done
}

# Compares the output of profview ARGS... with GOLDEN_DIR/NAME (or rewrites it with UPDATE=1).
golden_check() {  # NAME ARGS...
  local name=$1 actual
  shift
  actual=$("$profview" "$@" | sed "s|$work|WORK|g")
  if [[ ${UPDATE:-0} == 1 ]]; then
    printf '%s\n' "$actual" >"$golden/$name"
    echo "updated $golden/$name"
  elif ! diff -u "$golden/$name" <(printf '%s\n' "$actual"); then
    fail_check "golden mismatch for $name; regenerate with UPDATE=1 if intended"
  fi
}

test_synthetic() {
  "$make_traces" "$work" >/dev/null
  cd "$work"
  golden_check merge_listing.out merge -o merged.pb nrm2.pb nrm2_b.pb hostonly.pb
  golden_check merge_summary.out summary merged.pb
  expect_same_analysis merged.pb nrm2.pb nrm2_b.pb hostonly.pb
  # A merged file merges again like the files it holds.
  "$profview" merge -o twice.pb merged.pb threads.pb >/dev/null
  expect_same_analysis twice.pb nrm2.pb nrm2_b.pb hostonly.pb threads.pb
}

test_directory() {
  mkdir "$work/dir"
  "$make_traces" "$work/dir" >/dev/null
  cd "$work/dir"
  rm truncated.pb corrupt.pb not_a_trace.pb
  # Those of profview diff and check: another schema, and pairs of runs this test needs not.
  rm future_schema.pb other_program.pb nrm2_rank0.pb steps_*.pb
  local listing
  listing=$("$profview" merge -o ../all.pb .)
  [[ $listing == "Merged 14 processes from 14 files into ../all.pb"* ]] ||
    fail_check "listing: $listing"
  expect_same_analysis ../all.pb callsites.pb empty.pb hostonly.pb idle.pb launch_bound.pb \
    memory_pools.pb nrm2.pb nrm2_b.pb overlap.pb startup.pb streams.pb threads.pb \
    two_way_copies.pb unified_memory.pb
  # The other subcommands take a directory the same way.
  expect_same_analysis ../all.pb .
}

test_samples() {
  cd "$work"
  local files=("$samples"/*.pb)
  "$profview" merge -o samples.pb "$samples" >/dev/null
  expect_same_analysis samples.pb "${files[@]}"
  # --pid picks one process out of the merged file.
  local pid
  pid=$("$profview" summary --format json "${files[0]}" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -1)
  if ! diff <(without_paths summary "${files[0]}") <(without_paths summary --pid "$pid" samples.pb); then
    fail_check "summary --pid $pid of the merged file differs from ${files[0]}"
  fi
}

# A one-line error with the given status, and no output file.
expect_merge_error() {  # STATUS PIECE ARGS...
  local want=$1 piece=$2 status=0
  shift 2
  "$profview" merge "$@" >"$work/out" 2>"$work/err" || status=$?
  [[ $status == "$want" ]] || fail_check "merge $*: status $status, expected $want"
  [[ $(<"$work/err") == *"$piece"* ]] || fail_check "merge $*: '$piece' not in: $(<"$work/err")"
  [[ $(wc -l <"$work/err") == 1 ]] || fail_check "merge $*: not one line: $(<"$work/err")"
}

test_errors() {
  "$make_traces" "$work" >/dev/null
  cd "$work"
  expect_merge_error 2 "--output is required" nrm2.pb
  expect_merge_error 2 "traces is required" -o out.pb
  expect_merge_error 1 "corrupt.pb: chunk at byte" -o out.pb nrm2.pb corrupt.pb
  expect_merge_error 1 "not_a_trace.pb: not a libprof trace" -o out.pb not_a_trace.pb
  expect_merge_error 1 "missing.pb: cannot open" -o out.pb missing.pb
  expect_merge_error 1 "truncated.pb: the file ends inside the chunk" -o out.pb truncated.pb
  expect_merge_error 1 "nrm2.pb: is also an input" -o nrm2.pb --force nrm2.pb idle.pb
  [[ ! -e out.pb ]] || fail_check "a failed merge left out.pb"
  "$profview" merge -o out.pb --allow-truncated truncated.pb >/dev/null 2>"$work/err"
  [[ $(<"$work/err") == *"warning: truncated.pb: the file ends inside"* ]] ||
    fail_check "--allow-truncated warning: $(<"$work/err")"
  expect_merge_error 1 "out.pb: already exists (--force replaces it)" -o out.pb nrm2.pb
  "$profview" merge -f -o out.pb nrm2.pb >/dev/null || fail_check "--force did not replace"
  cmp -s out.pb nrm2.pb || fail_check "merge of one file is not a copy of it"
}

"test_$case_name"
if ((failures > 0)); then
  echo "$case_name: $failures check(s) failed" >&2
  exit 1
fi
echo "$case_name: OK"
