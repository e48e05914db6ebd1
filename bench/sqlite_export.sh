#!/usr/bin/env bash
# `profview export --format sqlite` on the synthetic training-loop traces (bench/README.md,
# "SQLite export"): rows per second and peak memory, on 1M and 10M records. Needs no GPU.
# Prints a Markdown table: wall and CPU (user + sys) time, rows/s by each, peak RSS, database size.
#
# usage: bench/sqlite_export.sh [--rounds N] [BUILD_DIR]   (default <repo>/build-bench, Release)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build-bench"
rounds=3
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    -*) echo "sqlite_export.sh: unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
[[ -x /usr/bin/time ]] || { echo "sqlite_export.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLIBPROF_BUILD_SAMPLES=OFF >/dev/null
fi
cmake --build "$build" -j "${JOBS:-2}" --target make_synthetic_trace profview >/dev/null
profview="$build/viewer-cli/profview"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libprof-sqlite-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%F); build type" \
     "$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt");" \
     "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "generating traces in $tmp ..." >&2
declare -A records
for name in 1m 10m; do
  line=$("$build/bench/make_synthetic_trace" --records "${name%m}000000" -o "$tmp/$name.pb")
  records[$name]=$(tr ' ' '\n' <<<"$line" | sed -n 's/^records=//p')
done

echo
echo "| trace | records | rows | round | wall s | CPU s | rows/s (wall) | rows/s (CPU) | peak RSS MiB | database MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for name in 1m 10m; do
  for ((r = 1; r <= rounds; r++)); do
    rm -f "$tmp/$name.sqlite"
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" \
      "$profview" export --format sqlite -o "$tmp/$name.sqlite" "$tmp/$name.pb" >"$tmp/out"
    t1=$(date +%s%N)
    rows=$(sed -n 's/^Wrote \([0-9]*\) rows.*/\1/p' "$tmp/out")
    read -r user sys rss <"$tmp/time"
    awk -v n="$name" -v rec="${records[$name]}" -v rows="$rows" -v r="$r" -v wall=$((t1 - t0)) \
        -v cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" -v rss="$rss" \
        -v db="$(stat -c %s "$tmp/$name.sqlite")" \
        'BEGIN {w = wall / 1e9; printf "| %s | %d | %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f |\n",
                n, rec, rows, r, w, cpu, rows / w, rows / cpu, rss / 1024, db / 1048576}'
  done
done
