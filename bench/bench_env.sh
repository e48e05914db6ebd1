# The set-up the CPU benchmarks share (run_local.sh, run_report.sh), sourced after their flags.
# Needs: repo, build (configured Release here if it is not yet), bench_name (for messages and
# the scratch directory's name). Sets: gen, floor, profview (the tools, built), tmp (a scratch
# directory removed at exit). Caps virtual memory and prints the machine line.

# GNU time gives the peak RSS of a child (bash's `time` cannot).
if [[ ! -x /usr/bin/time ]]; then
  echo "$bench_name: needs GNU time at /usr/bin/time (apt-get install time)" >&2
  exit 1
fi

# LIBPROF_BENCH_BUILT=1: the tools are already built in $build (bench/, viewer-cli/), e.g. on a
# machine without the build's dependencies, where they came with their shared libraries.
if [[ -z ${LIBPROF_BENCH_BUILT:-} ]]; then
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLIBPROF_BUILD_SAMPLES=OFF >/dev/null
  fi
  cmake --build "$build" -j "${JOBS:-2}" --target make_synthetic_trace read_floor profview >/dev/null
fi
gen="$build/bench/make_synthetic_trace"
floor="$build/bench/read_floor"
profview="$build/viewer-cli/profview"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libprof-${bench_name%.sh}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# A memory cap (3/4 of what is free now), so that a run that outgrows this shared machine fails
# and is reported instead of pushing other work into the OOM killer.
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
ulimit -v $((avail_kb * 3 / 4))

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM; $(date -u +%F);" \
     "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
