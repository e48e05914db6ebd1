#!/usr/bin/env bash
# collect.sh: profile any program with libprof. It only sets up the environment and `exec`s the
# program, so the program keeps its pid, exit status, signals, stdin/stdout and process tree;
# every process that initialises CUDA writes its own trace (STYLE.md, "Layers and boundaries").
# With --stats it cannot exec: it runs the program as a child, forwards SIGINT/SIGTERM, then
# prints `profview summary` and `profview findings` of the traces written, which libprof lists
# in LIBPROF_TRACE_LIST. Rules that C++ owns are asked of it, never copied here: the record kinds
# (`profview --list-trace-kinds`), the output template's expansion (libprof).
#
# Environment that libprof.so reads (README.md "Settings"); the options below set it:
#   CUDA_INJECTION64_PATH  libprof.so: the CUDA driver loads it inside cuInit
#   NVTX_INJECTION64_PATH  libprof.so: NVTX reads it once, at each library's first NVTX call, so
#                          it must be in the environment before the program starts
#   LD_PRELOAD             only with --preload (see "Injection" in usage())
#   LIBPROF_OUTPUT         -o, made absolute (so a program that changes directory, and --stats,
#                          agree on where traces go); default $PWD/libprof-%p.pb
#   LIBPROF_TRACE, LIBPROF_FLUSH_INTERVAL_MS, LIBPROF_BUFFER_SIZE_KB, LIBPROF_FORCE_OVERWRITE=1,
#   LIBPROF_BACKTRACE, LIBPROF_BACKTRACE_DEPTH
#   LIBPROF_LOG_LEVEL      info unless set (by -l or by the caller): at info, every process
#                          prints "libprof: trace written to PATH: N records, M bytes" as it
#                          exits, which is the only way to report traces after `exec`.
#   LIBPROF_TRACE_LIST     only with --stats: a temporary file to which every process appends
#                          the path of the trace it creates
# Not yet read by libprof (collect.sh passes them; libprof implements them, so that they work
# without the launcher too):
#   LIBPROF_CAPTURE_RANGE  "cudaProfilerApi": record only between cudaProfilerStart and
#                          cudaProfilerStop; "nvtx:NAME" or "nvtx:NAME@DOMAIN": only inside NVTX
#                          ranges with that message (in that domain; the last '@' splits).
#   LIBPROF_DELAY_MS       record nothing for this many milliseconds after the process starts
#   LIBPROF_DURATION_MS    stop recording this many milliseconds after recording began
#
# Exit status: the program's own; 2 for a usage error, 1 when libprof.so or profview is missing,
# 127 when PROGRAM is not found and 126 when it cannot be executed (as the shell does).
set -euo pipefail

readonly SELF=collect.sh
# Filled in by CMake (configure_file) in the build-tree and installed copies; a path relative to
# this script's directory or absolute. In the source tree they stay as they are and are ignored.
readonly BAKED_LIBPROF='@COLLECT_LIBPROF_SO@'
readonly BAKED_PROFVIEW='@COLLECT_PROFVIEW@'
readonly BAKED_VERSION='@PROJECT_VERSION@'

readonly LOG_LEVELS=" off error warn info debug trace "
readonly BACKTRACE_MODES=" none blocking all "

# Options, as parsed.
output=""
trace_kinds=""
capture_range=""
delay_ms=""
duration_ms=""
flush_ms=""
buffer_kb=""
backtrace=""
backtrace_depth=""
force_overwrite=0
stats=0
preload=0
log_level=""
program=()

usage() {
  cat <<'EOF'
Usage: collect.sh [OPTIONS] [--] PROGRAM [ARGS...]

Runs PROGRAM with libprof injected. Every process that initialises CUDA (PROGRAM and any
process it starts: fork, shell scripts, python, mpirun/torchrun workers) writes its own trace.
PROGRAM keeps its pid, exit status, signals, stdin and stdout.

Options:
  -o, --output TEMPLATE      trace path: %p pid, %h host, %q{VAR} environment variable VAR
                             (e.g. %q{RANK}, %q{OMPI_COMM_WORLD_RANK}), %n the first number
                             from 1 that gives a free name (run.%n.pb: run.1.pb, run.2.pb...),
                             %% percent.
                             A directory (existing, or ending in /) gets one file per process,
                             libprof-<host>-<pid>.pb. Default: libprof-%p.pb
  -t, --trace KINDS          comma-separated record kinds: cuda (every CUDA kind), all (cuda and
                             nvtx, the default), runtime, driver, kernel, memcpy, memset, sync,
                             memory, nvtx, overhead, graph (one record per graph launch),
                             uvm (unified memory migrations and page faults)
  -c, --capture-range RANGE  record only inside RANGE: cudaProfilerApi (between
                             cudaProfilerStart and cudaProfilerStop) or nvtx:NAME[@DOMAIN]
                             (inside NVTX ranges with that message)
  -y, --delay SECONDS        start recording CUDA activity SECONDS after CUDA starts in each process
  -d, --duration SECONDS     stop recording CUDA activity SECONDS after it began
  -F, --flush-interval MS    write completed records every MS milliseconds (default 1000)
  -b, --buffer-size KB       CUPTI activity buffer size in KiB (default 8192)
  --backtrace MODE           record the native call stack of API calls: blocking (the default:
                             copies, memsets, synchronisations, frees, allocations), all, none
  --backtrace-depth N        frames kept per call stack (default 32)
  -f, --force-overwrite      replace existing trace files (default: pick the next free name,
                             name.1.pb, name.2.pb, ...)
  -s, --stats                when PROGRAM ends, print `profview summary` and `profview findings`
                             of the traces it wrote, and where they are
  -p, --preload              also LD_PRELOAD libprof.so (see below)
  -l, --log-level LEVEL      libprof's stderr messages: off, error, warn, info (default here:
                             each process says where its trace went), debug, trace
  -h, --help                 this help
  -V, --version              libprof's version

Examples:
  collect.sh ./my_app --size 1024                 # writes libprof-<pid>.pb here
  collect.sh -s -- python3 train.py               # profile, then summarise and explain
  collect.sh -o traces/ -- ./run_all.sh           # one file per process in traces/
  mpirun -np 8 collect.sh -o 'rank%q{OMPI_COMM_WORLD_RANK}.pb' ./solver
  srun -n 64 collect.sh -o 'job/%q{SLURM_PROCID}-%h.pb' ./solver
  torchrun --nproc-per-node 4 --no-python collect.sh -o 'r%q{RANK}.pb' -- python3 train.py
  collect.sh -c nvtx:train_step -t cuda,nvtx -- python3 train.py
  collect.sh -c cudaProfilerApi -o run.pb ./my_app
  profview merge -o all.pb traces/                # one multi-process file from a directory

Injection: collect.sh sets CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH, which every child
process inherits; that is enough for native programs, Python and launchers. --preload also puts
libprof.so in LD_PRELOAD, for programs that clear CUDA_INJECTION64_PATH before starting CUDA;
it loads libprof.so into every process, CUDA or not.

Settings not covered by an option (LIBPROF_API_FILTER, LIBPROF_MAX_BUFFERS, ...) are read from
the environment as usual; an option overrides the variable. LIBPROF_LIB and LIBPROF_PROFVIEW
name libprof.so and profview when they are not next to collect.sh. LIBPROF_COLLECT_ASSUME_GPU=1
skips the check for a GPU driver.
EOF
}

# Prints one line on stderr and exits with status $1.
fail() {
  local status=$1
  shift
  echo "$SELF: $*" >&2
  exit "$status"
}

warn() { echo "$SELF: warning: $*" >&2; }
note() { echo "$SELF: $*" >&2; }

usage_error() { fail 2 "$* (see $SELF --help)"; }

# "1.5" seconds -> "1500" (milliseconds, rounded down); a usage error unless a non-negative
# decimal number.
seconds_to_ms() {
  local option=$1 value=$2
  [[ $value =~ ^([0-9]+)(\.([0-9]*))?$ ]] ||
    usage_error "$option: '$value' is not a number of seconds"
  local whole=${BASH_REMATCH[1]} fraction="${BASH_REMATCH[3]}000"
  ((${#whole} <= 9)) || usage_error "$option: '$value' seconds is too long"
  echo $((10#$whole * 1000 + 10#${fraction:0:3}))
}

# A usage error unless $2 is a positive integer. Ranges are libprof's to check (it warns and
# uses the default), so that the limits live in one place.
check_positive_int() {
  if [[ ! $2 =~ ^[0-9]{1,9}$ ]] || ((10#$2 == 0)); then
    usage_error "$1: '$2' is not a positive integer"
  fi
}

# Checks --trace against the kinds LIBPROF_TRACE accepts, so that a typo fails before the program
# runs instead of becoming a warning and the default set. The list is profview's
# (proto/capture_kinds.h, which libprof's parser reads too); without a profview that answers, the
# kinds go to libprof unchecked, and libprof warns.
check_trace_kinds() {
  local kind kinds profview known
  IFS=, read -ra kinds <<<"$1"
  ((${#kinds[@]} > 0)) || usage_error "--trace: no record kind given"
  profview=$(find_profview 2>/dev/null) || return 0
  known=$("$profview" --list-trace-kinds 2>/dev/null | tr '\n' ' ') || return 0
  [[ -n $known ]] || return 0
  known=" $known"
  for kind in "${kinds[@]}"; do
    [[ $known == *" $kind "* ]] ||
      usage_error "--trace: unknown kind '$kind' (known:${known% })"
  done
}

check_capture_range() {
  case $1 in
    cudaProfilerApi) ;;
    nvtx:?*) [[ ${1#nvtx:} != @* ]] || usage_error "--capture-range: '$1' has no range name" ;;
    *) usage_error "--capture-range: '$1' is not cudaProfilerApi or nvtx:NAME[@DOMAIN]" ;;
  esac
}

# Sets the option variables and `program` from the command line. Options end at `--` or at the
# first word that is not an option (as `nsys profile ./app` does).
parse_args() {
  local option value
  while (($# > 0)); do
    option=$1
    value=""
    case $option in
      --) shift; break ;;
      --*=*) value=${option#*=}; option=${option%%=*} ;;
      -[otcydFbl]?*) value=${option:2}; option=${option:0:2} ;;  # -ofile
      -?*) ;;
      *) break ;;  # the program
    esac
    # Options with a value take it from `--opt=value`, `-ovalue` or the next word.
    case $option in
      -o | --output | -t | --trace | -c | --capture-range | -y | --delay | -d | --duration | \
        -F | --flush-interval | -b | --buffer-size | -l | --log-level | --backtrace | \
        --backtrace-depth)
        if [[ -z $value && $1 == "$option" ]]; then
          (($# >= 2)) || usage_error "$option needs a value"
          value=$2
          shift
        fi
        [[ -n $value ]] || usage_error "$option needs a value"
        ;;
      *) [[ $1 == "$option" ]] || usage_error "$option takes no value" ;;
    esac
    shift
    case $option in
      -o | --output) output=$value ;;
      -t | --trace) check_trace_kinds "$value"; trace_kinds=$value ;;
      -c | --capture-range) check_capture_range "$value"; capture_range=$value ;;
      -y | --delay) delay_ms=$(seconds_to_ms "$option" "$value") ;;
      -d | --duration)
        duration_ms=$(seconds_to_ms "$option" "$value")
        ((duration_ms > 0)) || usage_error "$option: must be at least 1 ms"
        ;;
      -F | --flush-interval) check_positive_int "$option" "$value"; flush_ms=$((10#$value)) ;;
      -b | --buffer-size) check_positive_int "$option" "$value"; buffer_kb=$((10#$value)) ;;
      --backtrace)
        [[ $BACKTRACE_MODES == *" $value "* ]] ||
          usage_error "$option: unknown mode '$value' (known:${BACKTRACE_MODES% })"
        backtrace=$value
        ;;
      --backtrace-depth) check_positive_int "$option" "$value"; backtrace_depth=$((10#$value)) ;;
      -l | --log-level)
        [[ $LOG_LEVELS == *" $value "* ]] ||
          usage_error "$option: unknown level '$value' (known:${LOG_LEVELS% })"
        log_level=$value
        ;;
      -f | --force-overwrite) force_overwrite=1 ;;
      -s | --stats) stats=1 ;;
      -p | --preload) preload=1 ;;
      -h | --help) usage; exit 0 ;;
      -V | --version) print_version; exit 0 ;;
      *) usage_error "unknown option '$option'" ;;
    esac
  done
  (($# > 0)) || usage_error "no program given: $SELF [OPTIONS] [--] PROGRAM [ARGS...]"
  program=("$@")
}

print_version() {
  if [[ $BAKED_VERSION == @*@ ]]; then echo "libprof (source tree)"; else echo "libprof $BAKED_VERSION"; fi
}

# This script's directory, through symbolic links (a bin/collect.sh linked from elsewhere still
# finds ../lib/libprof.so beside the real file).
script_dir() { dirname -- "$(realpath -- "${BASH_SOURCE[0]}")"; }

# Prints the first of the candidate paths that exists; returns 1 if none does. A baked path that
# is relative is relative to this script's directory.
first_existing() {
  local here candidate
  here=$(script_dir)
  for candidate in "$@"; do
    [[ -z $candidate || $candidate == @*@ ]] && continue
    [[ $candidate == /* ]] || candidate="$here/$candidate"
    if [[ -e $candidate ]]; then
      # Canonical, so that the variables the program sees are absolute and free of "..".
      realpath -- "$candidate"
      return 0
    fi
  done
  return 1
}

# libprof.so: $LIBPROF_LIB, else the path CMake baked in, else the installed layout
# (bin/collect.sh, lib/libprof.so), else the source tree's build/ directory.
find_libprof() {
  if [[ -n ${LIBPROF_LIB:-} ]]; then
    [[ -f $LIBPROF_LIB ]] || fail 1 "LIBPROF_LIB=$LIBPROF_LIB: no such file"
    realpath -- "$LIBPROF_LIB"
    return
  fi
  first_existing "$BAKED_LIBPROF" ../lib/libprof.so ../build/libprof/libprof.so ||
    fail 1 "libprof.so not found next to $(script_dir) (build it with" \
      "'cmake --build build --target libprof', or set LIBPROF_LIB)"
}

# profview, looked up like libprof.so (installed next to collect.sh in bin/).
find_profview() {
  if [[ -n ${LIBPROF_PROFVIEW:-} ]]; then
    [[ -x $LIBPROF_PROFVIEW ]] || fail 1 "LIBPROF_PROFVIEW=$LIBPROF_PROFVIEW: not an executable"
    echo "$LIBPROF_PROFVIEW"
    return
  fi
  first_existing "$BAKED_PROFVIEW" profview ../build/viewer-cli/profview ||
    fail 1 "profview not found next to $(script_dir) (needed by --stats; build it with" \
      "'cmake --build build --target profview', or set LIBPROF_PROFVIEW)"
}

# Fails unless the program can be executed, with the shell's statuses and a clearer message
# than exec's.
check_program() {
  local name=$1 path
  if [[ $name == */* ]]; then
    path=$name
    [[ -e $path ]] || fail 127 "$name: no such file"
  else
    path=$(type -P -- "$name") || fail 127 "$name: command not found"
  fi
  [[ ! -d $path ]] || fail 126 "$name: is a directory"
  [[ -x $path ]] || fail 126 "$name: permission denied (not executable)"
}

# True when a CUDA driver and a GPU device node are present. Cheap: no CUDA call, no subprocess
# beyond ldconfig. /dev/dxg is the GPU of WSL2, whose libcuda lives in /usr/lib/wsl/lib.
gpu_present() {
  case ${LIBPROF_COLLECT_ASSUME_GPU:-} in
    1) return 0 ;;
    0) return 1 ;;
  esac
  [[ -e /dev/nvidiactl || -e /dev/dxg ]] || return 1
  local dir dirs
  IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
  for dir in "${dirs[@]}" /usr/lib/wsl/lib; do
    [[ -n $dir && -e $dir/libcuda.so.1 ]] && return 0
  done
  local ldconfig
  ldconfig=$(PATH="$PATH:/sbin:/usr/sbin" type -P ldconfig) || return 1
  "$ldconfig" -p 2>/dev/null | grep -q '[[:space:]]libcuda\.so\.1[[:space:]]'
}

# The output template as libprof will see it: absolute, so that it does not depend on the
# program's working directory. Its literal directory is created; a directory named through %
# codes is libprof's to create.
output_template() {
  local template=${output:-${LIBPROF_OUTPUT:-libprof-%p.pb}}
  [[ $template == /* ]] || template="$PWD/$template"
  local dir=$template
  [[ $template == */ || -d $template ]] || dir=${template%/*}
  if [[ $dir != *%* && ! -d $dir ]]; then
    mkdir -p -- "$dir" 2>/dev/null || fail 1 "cannot create the output directory $dir"
  fi
  echo "$template"
}

# Exports the variables of the header comment. Options override inherited LIBPROF_* variables;
# variables without an option are inherited unchanged.
export_environment() {
  local lib=$1 template=$2
  local var
  for var in CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH; do
    if [[ -n ${!var:-} && ${!var} != "$lib" ]]; then
      warn "replacing $var=${!var} (another tool's?) with libprof"
    fi
    export "$var=$lib"
  done
  if ((preload)); then
    [[ $lib != *[[:space:]:]* ]] || fail 1 "--preload: LD_PRELOAD cannot hold a path with spaces or colons: $lib"
    export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
  fi
  export LIBPROF_OUTPUT="$template"
  [[ -z $trace_kinds ]] || export LIBPROF_TRACE="$trace_kinds"
  [[ -z $flush_ms ]] || export LIBPROF_FLUSH_INTERVAL_MS="$flush_ms"
  [[ -z $buffer_kb ]] || export LIBPROF_BUFFER_SIZE_KB="$buffer_kb"
  [[ -z $backtrace ]] || export LIBPROF_BACKTRACE="$backtrace"
  [[ -z $backtrace_depth ]] || export LIBPROF_BACKTRACE_DEPTH="$backtrace_depth"
  ((force_overwrite == 0)) || export LIBPROF_FORCE_OVERWRITE=1
  [[ -z $capture_range ]] || export LIBPROF_CAPTURE_RANGE="$capture_range"
  [[ -z $delay_ms ]] || export LIBPROF_DELAY_MS="$delay_ms"
  [[ -z $duration_ms ]] || export LIBPROF_DURATION_MS="$duration_ms"
  if [[ -n $log_level ]]; then
    export LIBPROF_LOG_LEVEL="$log_level"
  elif [[ -z ${LIBPROF_LOG_LEVEL:-} ]]; then
    export LIBPROF_LOG_LEVEL=info
  fi
}

# True when this shell is in its terminal's foreground process group: then a Ctrl-C reached the
# program directly (it is in the same group), and forwarding SIGINT would deliver it twice.
in_terminal_foreground() {
  local stat
  stat=$(</proc/$$/stat) 2>/dev/null || return 1
  stat=${stat##*) }  # the fields after "(comm)": state ppid pgrp session tty_nr tpgid ...
  local _state _ppid pgrp _session _tty tpgid
  read -r _state _ppid pgrp _session _tty tpgid _ <<<"$stat"
  ((tpgid > 0 && tpgid == pgrp))
}

forward_signal() {
  local signal=$1 child=$2
  [[ $signal == INT ]] && in_terminal_foreground && return 0
  kill -s "$signal" "$child" 2>/dev/null || true
}

# Runs the program as a child with the terminal, stdin and signal dispositions it would have had
# under exec, forwards SIGINT/SIGTERM sent to collect.sh, and returns its exit status (128+N when
# signal N killed it).
run_child() {
  # A background job of a non-interactive shell starts with SIGINT and SIGQUIT ignored and stdin
  # from /dev/null: `trap -` restores the dispositions collect.sh itself inherited, <&0 the stdin.
  (
    trap - INT QUIT
    exec "$@"
  ) <&0 &
  local child=$! status
  # shellcheck disable=SC2064  # the child's pid is known now
  trap "forward_signal INT $child" INT
  # shellcheck disable=SC2064
  trap "forward_signal TERM $child" TERM
  # wait returns early (status > 128) when a trapped signal arrives; wait again until the child
  # is gone. A reaped child no longer answers kill -0.
  while true; do
    status=0
    wait "$child" || status=$?
    kill -0 "$child" 2>/dev/null || break
  done
  trap - INT TERM
  return "$status"
}

# The traces libprof listed in $1 (LIBPROF_TRACE_LIST), once each, that still exist.
listed_traces() {
  local file
  sort -u -- "$1" | while IFS= read -r file; do
    [[ -f $file ]] && printf '%s\n' "$file"
  done
}

human_size() {
  local bytes=$1
  if ((bytes < 1024)); then
    echo "$bytes B"
  elif ((bytes < 1048576)); then
    echo "$((bytes / 1024)).$((bytes % 1024 * 10 / 1024)) KiB"
  else
    echo "$((bytes / 1048576)).$((bytes % 1048576 * 10 / 1048576)) MiB"
  fi
}

# --stats: run, then summarise the traces written. The exit status stays the program's.
run_with_stats() {
  local profview=$1
  local list status=0
  list=$(mktemp "${TMPDIR:-/tmp}/collect.XXXXXX")
  # shellcheck disable=SC2064  # expand now: the path is fixed
  trap "rm -f -- '$list'" EXIT
  export LIBPROF_TRACE_LIST="$list"
  run_child "${program[@]}" || status=$?

  local traces=()
  mapfile -t traces < <(listed_traces "$list")
  rm -f -- "$list"
  if ((${#traces[@]} == 0)); then
    note "no trace was written (no process initialised CUDA, or no GPU/driver was usable)"
    return "$status"
  fi
  echo
  "$profview" summary "${traces[@]}" || true
  echo
  "$profview" findings "${traces[@]}" || true
  local file
  for file in "${traces[@]}"; do
    note "trace $file ($(human_size "$(stat -c %s -- "$file")"))"
  done
  return "$status"
}

main() {
  parse_args "$@"
  local lib profview="" template
  lib=$(find_libprof)
  ((stats == 0)) || profview=$(find_profview)
  check_program "${program[0]}"
  template=$(output_template)
  if ! gpu_present; then
    warn "no NVIDIA GPU driver found on this host (/dev/nvidiactl, libcuda.so.1): the program" \
      "runs, but no trace will be recorded here"
  fi
  export_environment "$lib" "$template"
  if ((stats)); then
    local status=0
    run_with_stats "$profview" || status=$?
    exit "$status"
  fi
  exec -- "${program[@]}"
}

main "$@"
