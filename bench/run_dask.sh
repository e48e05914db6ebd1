#!/usr/bin/env bash
# Many-rank summary (bench/README.md, "Many ranks on Dask"): N synthetic ranks of R records each
# (default 64 x 1M), summarised by plain `profview summary` and by `python3 -m libprof.dask` on a
# LocalCluster of 1 and 2 workers (map: summary --partial per file; reduce: combine), with the
# map and reduce steps also timed alone. Checks that every output is identical. Prints Markdown.
#
# usage: bench/run_dask.sh [--files N] [--records R] [--workers "1 2"] [BUILD_DIR]
#   BUILD_DIR   default <repo>/build-bench (configured Release if it is not yet)
# Needs /usr/bin/time (GNU) and Debian's python3-dask/python3-distributed at /usr/bin/python3.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build-bench"
files=64
records=1000000
workers="1 2"
while (($#)); do
  case $1 in
    --files) files=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "run_dask.sh: unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
python=/usr/bin/python3  # Debian's, with python3-dask and python3-distributed

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLIBPROF_BUILD_SAMPLES=OFF >/dev/null
fi
cmake --build "$build" -j "${JOBS:-2}" --target make_synthetic_trace profview >/dev/null
gen="$build/bench/make_synthetic_trace"
profview="$build/viewer-cli/profview"
export LIBPROF_PROFVIEW="$profview" PYTHONPATH="$repo/python${PYTHONPATH:+:$PYTHONPATH}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libprof-dask-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/traces" "$tmp/parts"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM; $(date -u +%F);" \
     "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown);" \
     "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "generating $files traces of $records records in $tmp ..." >&2
for ((i = 0; i < files; i++)); do
  "$gen" --records "$records" --seed $((i + 1)) --pid $((20000 + i)) --rank "$i" \
    -o "$(printf '%s/traces/rank%05d.pb' "$tmp" "$i")" >/dev/null
done
traces=("$tmp"/traces/*.pb)
bytes=$(cat "${traces[@]}" | wc -c)

# measure LABEL OUT CMD...: wall seconds (date's nanoseconds) and the peak RSS of the largest
# process GNU time saw (for Dask: the client; workers are reported by the map/reduce rows).
declare -A secs rss
measure() {
  local label=$1 out=$2; shift 2
  local t0 t1
  t0=$(date +%s%N)
  if ! /usr/bin/time -f %M -o "$tmp/rss" "$@" >"$out" 2>"$tmp/stderr"; then
    echo "run_dask.sh: $label failed: $(tail -3 "$tmp/stderr")" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  secs[$label]=$(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.2f", d / 1e9}')
  rss[$label]=$(awk -v k="$(tail -1 "$tmp/rss")" 'BEGIN {printf "%.0f", k / 1024}')
}

echo "measuring ..." >&2
measure summary "$tmp/summary.out" "$profview" summary "${traces[@]}"
# The map step alone, one process after the other: what one worker does.
t0=$(date +%s%N)
peak=0
for t in "${traces[@]}"; do
  /usr/bin/time -f %M -o "$tmp/rss" "$profview" summary --partial \
    -o "$tmp/parts/$(basename "$t" .pb).json" "$t" >/dev/null
  peak=$(( $(tail -1 "$tmp/rss") > peak ? $(tail -1 "$tmp/rss") : peak ))
done
t1=$(date +%s%N)
secs[map]=$(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.2f", d / 1e9}')
rss[map]=$((peak / 1024))
part_bytes=$(cat "$tmp"/parts/*.json | wc -c)
measure reduce "$tmp/combine.out" "$profview" combine "$tmp"/parts/*.json
measure reduce16 /dev/null "$profview" combine --partial -o "$tmp/level.json" \
  $(ls "$tmp"/parts/*.json | head -16)
level_bytes=$(wc -c <"$tmp/level.json")
sixteen_bytes=$(ls "$tmp"/parts/*.json | head -16 | xargs cat | wc -c)
for w in $workers; do
  measure "dask$w" "$tmp/dask$w.out" "$python" -m libprof.dask summary "$tmp/traces/*.pb" \
    --workers "$w"
done

same=yes
cmp -s "$tmp/summary.out" "$tmp/combine.out" || same="NO (combine)"
for w in $workers; do cmp -s "$tmp/summary.out" "$tmp/dask$w.out" || same="NO (dask $w)"; done

mib() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }
total_records=$((files * records))
echo
echo "$files traces of $records records: $(mib "$bytes") MiB of traces; partial summaries" \
     "$(mib "$part_bytes") MiB ($(awk -v p="$part_bytes" -v n="$total_records" \
     'BEGIN {printf "%.1f", p / n}') B/record); 16 partials combined into one:" \
     "$(mib "$sixteen_bytes") -> $(mib "$level_bytes") MiB; outputs identical: $same"
echo
echo "| run | wall s | peak RSS MiB | ns per record |"
echo "|---|---:|---:|---:|"
row() {
  echo "| $1 | ${secs[$2]} | ${rss[$2]} | $(awk -v s="${secs[$2]}" -v n="$total_records" \
    'BEGIN {printf "%.0f", s * 1e9 / n}') |"
}
row "profview summary (one process)" summary
row "map alone: summary --partial per file, in turn (largest process)" map
row "reduce alone: combine of all partials" reduce
row "one reduce task: combine --partial of 16 partials" reduce16
for w in $workers; do row "libprof.dask, LocalCluster of $w worker(s) (client)" "dask$w"; done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
