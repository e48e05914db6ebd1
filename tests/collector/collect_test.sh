#!/usr/bin/env bash
# Tests of collector/collect.sh that need no GPU: option parsing and its errors, the environment
# the program sees, exit status and signal pass-through, finding libprof.so and profview, and
# --stats on programs that write no trace or fake ones. One case per run:
#   collect_test.sh CASE
# with, in the environment (tests/collector/CMakeLists.txt sets them):
#   COLLECT          the build-tree collect.sh      SOURCE_COLLECT  collector/collect.sh
#   INSTALL_COLLECT  the copy `cmake --install` installs
#   STUB_LIB         a shared library standing in for libprof.so (it does nothing)
#   BUILT_LIBPROF    this build's libprof.so ("" in a sanitizer build, which has none)
#   PROFVIEW         this build's profview       MAKE_TRACES  tests/analysis's make_golden_traces
set -euo pipefail

case_name=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The environment collect.sh starts from: libprof's own variables from the caller must not leak
# into the expectations.
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH LD_PRELOAD LIBPROF_PROFVIEW \
  LIBPROF_OUTPUT LIBPROF_TRACE LIBPROF_LOG_LEVEL LIBPROF_FORCE_OVERWRITE LIBPROF_CAPTURE_RANGE \
  LIBPROF_DELAY_MS LIBPROF_DURATION_MS LIBPROF_FLUSH_INTERVAL_MS LIBPROF_BUFFER_SIZE_KB \
  LIBPROF_BACKTRACE LIBPROF_BACKTRACE_DEPTH LIBPROF_TRACE_LIST
export LIBPROF_LIB=$STUB_LIB LIBPROF_COLLECT_ASSUME_GPU=1
stub=$(realpath "$STUB_LIB")

failures=0
fail_check() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run CMD...: runs with stdin from /dev/null; sets $out, $err and $status.
run() {
  status=0
  "$@" >"$work/.out" 2>"$work/.err" </dev/null || status=$?
  out=$(<"$work/.out")
  err=$(<"$work/.err")
}

expect_eq() {  # ACTUAL EXPECTED WHAT
  [[ $1 == "$2" ]] || fail_check "$3: got '$1', expected '$2'"
}

expect_contains() {  # TEXT PIECE WHAT
  [[ $1 == *"$2"* ]] || fail_check "$3: '$2' not in: $1"
}

# The value of VAR in `env` output $out, or "<unset>".
var_of() {
  local line
  while IFS= read -r line; do
    if [[ $line == "$1="* ]]; then
      echo "${line#*=}"
      return
    fi
  done <<<"$out"
  echo "<unset>"
}

expect_var() {  # VAR VALUE
  expect_eq "$(var_of "$1")" "$2" "$1 seen by the program (collect.sh ${args[*]})"
}

# collect.sh ARGS... -- env; then $out holds the program's environment.
env_under() {
  args=("$@")
  run "$COLLECT" "$@" env
  expect_eq "$status" 0 "exit status of collect.sh ${args[*]} env (stderr: $err)"
}

# A one-line error on stderr with the given exit status.
expect_error() {  # STATUS PIECE ARGS...
  local want_status=$1 piece=$2
  shift 2
  run "$COLLECT" "$@"
  expect_eq "$status" "$want_status" "exit status of collect.sh $*"
  expect_contains "$err" "$piece" "stderr of collect.sh $*"
  expect_eq "$(wc -l <<<"$err")" 1 "lines on stderr of collect.sh $*"
  [[ $err == "collect.sh: "* ]] || fail_check "stderr of collect.sh $* lacks its prefix: $err"
}

test_help() {
  run "$COLLECT" --help
  expect_eq "$status" 0 "--help status"
  expect_contains "$out" "Usage: collect.sh [OPTIONS] [--] PROGRAM [ARGS...]" "--help"
  expect_contains "$out" "Examples:" "--help"
  local option
  for option in --output --trace --capture-range --delay --duration --flush-interval \
    --buffer-size --backtrace --backtrace-depth --force-overwrite --stats --preload --log-level; do
    expect_contains "$out" "$option" "--help"
  done
  run "$COLLECT" -h
  expect_contains "$out" "Usage:" "-h"
  run "$COLLECT" -V
  [[ $out =~ ^libprof\ [0-9]+\.[0-9]+ ]] || fail_check "-V of the build copy: $out"
}

test_usage_errors() {
  expect_error 2 "no program given"
  expect_error 2 "unknown option '--bogus'" --bogus true
  expect_error 2 "unknown option '-x'" -x true
  expect_error 2 "unknown option '-fs'" -fs true
  expect_error 2 "--trace: unknown kind 'bogus'" -t cuda,bogus true
  expect_error 2 "--trace needs a value" --trace= true
  expect_error 2 "-o needs a value" -o
  expect_error 2 "--stats takes no value" --stats=yes true
  expect_error 2 "--capture-range: 'cupti'" -c cupti true
  expect_error 2 "'nvtx:' is not cudaProfilerApi" --capture-range nvtx: true
  expect_error 2 "'nvtx:@dom' has no range name" -c nvtx:@dom true
  expect_error 2 "-y: 'soon' is not a number of seconds" -y soon true
  expect_error 2 "--delay: '-1' is not a number of seconds" --delay=-1 true
  expect_error 2 "--duration: must be at least 1 ms" --duration 0 true
  expect_error 2 "-F: '0' is not a positive integer" -F 0 true
  expect_error 2 "--buffer-size: '1k' is not a positive integer" --buffer-size 1k true
  expect_error 2 "-l: unknown level 'loud'" -l loud true
  expect_error 2 "--backtrace: unknown mode 'some'" --backtrace some true
  expect_error 2 "--backtrace-depth: '0' is not a positive integer" --backtrace-depth=0 true
}

test_program_errors() {
  expect_error 127 "no_such_command_xyz: command not found" no_such_command_xyz
  expect_error 127 "./missing: no such file" -- ./missing
  touch plain
  expect_error 126 "plain: permission denied (not executable)" ./plain
  mkdir adir
  expect_error 126 "adir: is a directory" -s ./adir
}

test_missing_libprof() {
  LIBPROF_LIB=$work/none.so expect_error 1 "LIBPROF_LIB=$work/none.so: no such file" true
  # The source-tree script with no build beside it.
  mkdir -p tree/collector
  cp "$SOURCE_COLLECT" tree/collector/collect.sh
  unset LIBPROF_LIB
  run tree/collector/collect.sh true
  expect_eq "$status" 1 "exit status without libprof.so"
  expect_contains "$err" "collect.sh: libprof.so not found" "stderr without libprof.so"
  expect_eq "$(wc -l <<<"$err")" 1 "lines on stderr without libprof.so"
  # --stats also needs profview.
  mkdir -p tree/build/libprof
  cp "$STUB_LIB" tree/build/libprof/libprof.so
  run tree/collector/collect.sh -s true
  expect_eq "$status" 1 "exit status of --stats without profview"
  expect_contains "$err" "profview not found" "stderr of --stats without profview"
  # --trace is checked by profview's list: without profview the kinds go to libprof unchecked.
  run tree/collector/collect.sh -t bogus true
  expect_eq "$status" 0 "exit status of --trace bogus without profview (stderr: $err)"
}

test_lookup() {
  unset LIBPROF_LIB
  # Source tree: collector/collect.sh finds build/libprof/libprof.so.
  mkdir -p src/collector src/build/libprof
  cp "$SOURCE_COLLECT" src/collector/collect.sh
  cp "$STUB_LIB" src/build/libprof/libprof.so
  COLLECT=src/collector/collect.sh env_under
  expect_var CUDA_INJECTION64_PATH "$work/src/build/libprof/libprof.so"
  # Installed: bin/collect.sh, bin/profview, lib/libprof.so.
  mkdir -p prefix/bin prefix/lib
  cp "$INSTALL_COLLECT" prefix/bin/collect.sh
  cp "$STUB_LIB" prefix/lib/libprof.so
  COLLECT=prefix/bin/collect.sh env_under
  expect_var CUDA_INJECTION64_PATH "$work/prefix/lib/libprof.so"
  expect_var NVTX_INJECTION64_PATH "$work/prefix/lib/libprof.so"
  # Through a symbolic link elsewhere, as from a bin/ directory on PATH.
  ln -s "$work/prefix/bin/collect.sh" linked.sh
  COLLECT=./linked.sh env_under
  expect_var CUDA_INJECTION64_PATH "$work/prefix/lib/libprof.so"
  # The build-tree copy: this build's libprof.so, baked in.
  if [[ -n $BUILT_LIBPROF && -e $BUILT_LIBPROF ]]; then
    env_under
    expect_var CUDA_INJECTION64_PATH "$(realpath "$BUILT_LIBPROF")"
  fi
  # LIBPROF_LIB wins over all of them.
  LIBPROF_LIB=$STUB_LIB COLLECT=prefix/bin/collect.sh env_under
  expect_var CUDA_INJECTION64_PATH "$stub"
}

test_environment() {
  env_under -o 'r%q{RANK}-%h-%p.pb' -t cuda,nvtx -c nvtx:step@train -y 1.5 -d 0.25 -F 250 \
    -b 4096 -f --
  expect_var CUDA_INJECTION64_PATH "$stub"
  expect_var NVTX_INJECTION64_PATH "$stub"
  expect_var LD_PRELOAD "<unset>"
  expect_var LIBPROF_OUTPUT "$work/r%q{RANK}-%h-%p.pb"
  expect_var LIBPROF_TRACE cuda,nvtx
  expect_var LIBPROF_CAPTURE_RANGE nvtx:step@train
  expect_var LIBPROF_DELAY_MS 1500
  expect_var LIBPROF_DURATION_MS 250
  expect_var LIBPROF_FLUSH_INTERVAL_MS 250
  expect_var LIBPROF_BUFFER_SIZE_KB 4096
  expect_var LIBPROF_FORCE_OVERWRITE 1
  expect_var LIBPROF_LOG_LEVEL info

  env_under --output=/tmp/x-%p.pb --trace=kernel,memcpy --capture-range=cudaProfilerApi \
    --delay=2 --duration=0.0015 --flush-interval=100 --buffer-size=64 --force-overwrite \
    --log-level=debug --
  expect_var LIBPROF_OUTPUT /tmp/x-%p.pb
  expect_var LIBPROF_TRACE kernel,memcpy
  expect_var LIBPROF_CAPTURE_RANGE cudaProfilerApi
  expect_var LIBPROF_DELAY_MS 2000
  expect_var LIBPROF_DURATION_MS 1
  expect_var LIBPROF_FLUSH_INTERVAL_MS 100
  expect_var LIBPROF_BUFFER_SIZE_KB 64
  expect_var LIBPROF_LOG_LEVEL debug

  env_under --backtrace all --backtrace-depth=8
  expect_var LIBPROF_BACKTRACE all
  expect_var LIBPROF_BACKTRACE_DEPTH 8

  env_under -ox.pb -tnvtx -l warn
  expect_var LIBPROF_OUTPUT "$work/x.pb"
  expect_var LIBPROF_TRACE nvtx
  expect_var LIBPROF_LOG_LEVEL warn

  # Defaults: only the injection, the absolute default template and the log level.
  env_under
  expect_var LIBPROF_OUTPUT "$work/libprof-%p.pb"
  local var
  for var in LIBPROF_TRACE LIBPROF_CAPTURE_RANGE LIBPROF_DELAY_MS LIBPROF_DURATION_MS \
    LIBPROF_FLUSH_INTERVAL_MS LIBPROF_BUFFER_SIZE_KB LIBPROF_FORCE_OVERWRITE LIBPROF_BACKTRACE \
    LIBPROF_BACKTRACE_DEPTH LIBPROF_TRACE_LIST; do
    expect_var "$var" "<unset>"
  done
  expect_var LIBPROF_LOG_LEVEL info

  # Inherited settings pass through (made absolute for the output); options override them.
  LIBPROF_LOG_LEVEL=error LIBPROF_API_FILTER=all LIBPROF_OUTPUT=rel/%p.pb LIBPROF_TRACE=kernel \
    env_under
  expect_var LIBPROF_LOG_LEVEL error
  expect_var LIBPROF_API_FILTER all
  expect_var LIBPROF_OUTPUT "$work/rel/%p.pb"
  expect_var LIBPROF_TRACE kernel
  LIBPROF_LOG_LEVEL=error LIBPROF_TRACE=kernel env_under -l trace -t memset
  expect_var LIBPROF_LOG_LEVEL trace
  expect_var LIBPROF_TRACE memset

  # --preload puts libprof first in LD_PRELOAD, keeping what was there.
  env_under --preload
  expect_var LD_PRELOAD "$stub"
  LD_PRELOAD=$stub env_under -p
  expect_var LD_PRELOAD "$stub:$stub"

  # Another tool's injection is replaced, with a warning.
  CUDA_INJECTION64_PATH=/opt/other/tool.so env_under
  expect_var CUDA_INJECTION64_PATH "$stub"
  expect_contains "$err" "warning: replacing CUDA_INJECTION64_PATH=/opt/other/tool.so" "stderr"

  # Words after the program are its own, options or not; the first non-option is the program.
  run "$COLLECT" sh -c 'echo "$*"' sh -o x --stats -- y
  expect_eq "$out" "-o x --stats -- y" "arguments of the program"
}

test_output_templates() {
  # Expansion is libprof's (libprof/output_path.h, tested there); collect.sh passes the template
  # unchanged but absolute, and creates its literal directory.
  env_under -o traces/
  expect_var LIBPROF_OUTPUT "$work/traces/"
  [[ -d traces ]] || fail_check "-o traces/ did not create the directory"
  env_under -o deep/er/run-%p.pb
  expect_var LIBPROF_OUTPUT "$work/deep/er/run-%p.pb"
  [[ -d deep/er ]] || fail_check "-o deep/er/run-%p.pb did not create deep/er"
  env_under -o 'rank%q{OMPI_COMM_WORLD_RANK}/t-%h-%n.pb'
  expect_var LIBPROF_OUTPUT "$work/rank%q{OMPI_COMM_WORLD_RANK}/t-%h-%n.pb"
  [[ ! -e 'rank%q{OMPI_COMM_WORLD_RANK}' ]] || fail_check "created a directory named by % codes"
  env_under -o '100%%.pb'
  expect_var LIBPROF_OUTPUT "$work/100%%.pb"
  # No overwrite unless asked: libprof picks the next free name by default.
  env_under -o run.pb
  expect_var LIBPROF_FORCE_OVERWRITE "<unset>"
  LIBPROF_FORCE_OVERWRITE=1 env_under -o run.pb
  expect_var LIBPROF_FORCE_OVERWRITE 1
}

test_exit_status() {
  local mode
  for mode in exec stats; do
    local flags=()
    [[ $mode == exec ]] || flags=(--stats)
    run "$COLLECT" "${flags[@]}" sh -c 'exit 3'
    expect_eq "$status" 3 "exit status ($mode)"
    run "$COLLECT" "${flags[@]}" sh -c 'kill -TERM $$'
    expect_eq "$status" 143 "status of a program killed by SIGTERM ($mode)"
    run "$COLLECT" "${flags[@]}" sh -c 'kill -INT $$'
    expect_eq "$status" 130 "status of a program killed by SIGINT ($mode)"
  done
}

test_exec_passes_through() {
  # Same process: the program's pid is collect.sh's.
  "$COLLECT" sh -c 'echo $$' >pid.txt &
  local pid=$!
  wait "$pid"
  expect_eq "$(<pid.txt)" "$pid" "pid of the program under exec"
  # stdin, stdout and stderr are the program's, in both modes.
  local mode
  for mode in "" --stats; do
    local result
    result=$(echo hello | "$COLLECT" $mode sh -c 'cat; echo to-stderr >&2' 2>stderr.txt)
    expect_eq "$result" hello "stdout of cat ${mode:-exec}"
    expect_contains "$(<stderr.txt)" to-stderr "stderr ${mode:-exec}"
  done
}

# Starts collect.sh --stats on a program that sleeps, sends collect.sh a signal and expects
# the program to die of it (the status is 128 + the signal's number).
forward_case() {
  local signal=$1 want=$2
  rm -f ready
  # As from an interactive shell: SIGINT not ignored (a background job's would be).
  (
    trap - INT QUIT
    exec "$COLLECT" --stats sh -c 'touch ready; exec sleep 60'
  ) >/dev/null 2>&1 &
  local pid=$! i
  for ((i = 0; i < 100; i++)); do
    [[ ! -e ready ]] || break
    sleep 0.1
  done
  [[ -e ready ]] || fail_check "the program did not start"
  kill -s "$signal" "$pid"
  local started=$SECONDS status=0
  wait "$pid" || status=$?
  expect_eq "$status" "$want" "status of collect.sh --stats after SIG$signal"
  ((SECONDS - started < 30)) || fail_check "SIG$signal was not forwarded"
}

test_signal_forwarding() {
  forward_case TERM 143
  forward_case INT 130
}

test_stats_no_trace() {
  run "$COLLECT" --stats sh -c 'echo output; exit 4'
  expect_eq "$status" 4 "exit status"
  expect_eq "$out" output "stdout"
  expect_contains "$err" "collect.sh: no trace was written" "stderr"
}

# A program that does what libprof would: writes trace files named by LIBPROF_OUTPUT, for
# itself and for a child process (one under the "name.1.pb" libprof picks instead of
# overwriting), and appends their paths to LIBPROF_TRACE_LIST; it also writes a file that
# matches the template but is no trace of this run, and lists one that it then deletes.
write_fake_app() {
  mkdir "$work/synthetic"
  "$MAKE_TRACES" "$work/synthetic" >/dev/null
  cat >fake_app.sh <<EOF
#!/bin/sh
out=\${LIBPROF_OUTPUT%/}/libprof-host-\$\$.pb
cp "$work/synthetic/nrm2.pb" "\$out"
echo "\$out" >>"\$LIBPROF_TRACE_LIST"
sh -c 'out=\${LIBPROF_OUTPUT%/}/libprof-host-\$\$.1.pb
cp "$work/synthetic/hostonly.pb" "\$out"
echo "\$out" >>"\$LIBPROF_TRACE_LIST"'
cp "$work/synthetic/nrm2.pb" "\${LIBPROF_OUTPUT%/}/libprof-other-1.pb"
echo "\${LIBPROF_OUTPUT%/}/gone.pb" >>"\$LIBPROF_TRACE_LIST"
exit 5
EOF
  chmod +x fake_app.sh
}

test_stats_with_traces() {
  write_fake_app
  mkdir traces
  # Matches the template but was there before the run: not listed.
  cp "$work/synthetic/nrm2.pb" traces/libprof-host-1.pb
  touch -d '1 hour ago' traces/libprof-host-1.pb
  mkdir tmp
  TMPDIR=$work/tmp run "$COLLECT" --stats -o traces/ ./fake_app.sh
  expect_eq "$status" 5 "exit status"
  expect_contains "$out" "Total over 2 processes" "summary"
  expect_contains "$out" "Process 4242 on testhost" "summary"
  expect_contains "$out" "Process 8181 on testhost" "summary"
  expect_contains "$out" "blocked-on-prior-work" "findings"
  local lines
  lines=$(grep -c '^collect.sh: trace ' <<<"$err" || true)
  expect_eq "$lines" 2 "traces listed (stderr: $err)"
  [[ $err =~ collect.sh:\ trace\ $work/traces/libprof-host-[0-9]+\.pb\ \(965\ B\) ]] ||
    fail_check "trace line with size: $err"
  [[ $err != *libprof-host-1.pb* ]] || fail_check "listed a trace of an earlier run: $err"
  [[ $err != *libprof-other-1.pb* ]] || fail_check "listed a file libprof did not list: $err"
  [[ $err != *gone.pb* ]] || fail_check "listed a trace that does not exist: $err"
  [[ -z $(ls -A tmp) ]] || fail_check "the trace list was left behind: $(ls -A tmp)"

  # profview is looked up like libprof.so: LIBPROF_PROFVIEW names another.
  # shellcheck disable=SC2016  # $1 is the fake's
  printf '#!/bin/sh\necho "fake profview $1"\n' >fake_profview
  chmod +x fake_profview
  LIBPROF_PROFVIEW=$work/fake_profview run "$COLLECT" -s -o traces/ ./fake_app.sh
  expect_eq "$out" $'\nfake profview summary\n\nfake profview findings' "LIBPROF_PROFVIEW"
}

test_no_gpu() {
  LIBPROF_COLLECT_ASSUME_GPU=0 run "$COLLECT" echo ran
  expect_eq "$status" 0 "exit status without a GPU"
  expect_eq "$out" ran "the program runs without a GPU"
  expect_contains "$err" "warning: no NVIDIA GPU driver found" "stderr without a GPU"
  expect_contains "$err" "no trace will be recorded" "stderr without a GPU"
  LIBPROF_COLLECT_ASSUME_GPU=1 run "$COLLECT" echo ran
  expect_eq "$err" "" "stderr with a GPU"
}

"test_$case_name"
if ((failures > 0)); then
  echo "$case_name: $failures check(s) failed" >&2
  exit 1
fi
echo "$case_name: OK"
