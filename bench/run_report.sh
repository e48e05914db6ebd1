#!/usr/bin/env bash
# `profview report` against the read floor (issue 16's target: within 3x) and the page's size
# (target: under 5 MB for 10M records), on the synthetic training-loop traces of run_local.sh
# (bench/README.md). Needs no GPU. Prints a Markdown table.
#
# usage: bench/run_report.sh [--rounds N] [--records N[,N...]] [BUILD_DIR]
#   BUILD_DIR    default <repo>/build-bench (configured Release if it is not yet)
#   --rounds N   rounds of every measurement (default 3): median [min-max]
#   --records    trace sizes (default 1000000,10000000)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build-bench"
rounds=3
sizes=1000000,10000000
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --records) sizes=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "run_report.sh: unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
bench_name=$(basename "$0")
source "$repo/bench/bench_env.sh"

# measure CMD...: "seconds peak_rss_kib" of one run, output discarded; "fail" if it failed.
measure() {
  local t0 t1
  t0=$(date +%s%N)
  if /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/stderr"; then
    t1=$(date +%s%N)
    echo "$(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.3f", d / 1e9}') $(tail -1 "$tmp/rss")"
  else
    echo fail
    echo "  failed: $(tail -1 "$tmp/stderr")" >&2
  fi
}
# median of the first fields of the lines on stdin
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo
echo "| records | file MiB | read floor s | report s (x floor) | report peak RSS MiB | page KiB |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in ${sizes//,/ }; do
  "$gen" --records "$n" -o "$tmp/t.pb" >/dev/null
  : >"$tmp/floor"; : >"$tmp/report"
  for ((r = 1; r <= rounds; r++)); do
    echo "  $n records: round $r of $rounds" >&2
    measure "$floor" "$tmp/t.pb" >>"$tmp/floor"
    measure "$profview" report -o "$tmp/t.html" "$tmp/t.pb" >>"$tmp/report"
  done
  if grep -q fail "$tmp/floor" "$tmp/report"; then
    echo "| $n | | fail | fail | | |"
    continue
  fi
  fl=$(median <"$tmp/floor")
  re=$(median <"$tmp/report")
  rss=$(awk '{print $2}' "$tmp/report" | median)
  echo "| $n | $(awk -v b="$(stat -c %s "$tmp/t.pb")" 'BEGIN {printf "%.1f", b / 1048576}')" \
       "| $fl | $re ($(awk -v a="$re" -v b="$fl" 'BEGIN {printf "%.1fx", a / b}'))" \
       "| $(awk -v k="$rss" 'BEGIN {printf "%.0f", k / 1024}')" \
       "| $(awk -v b="$(stat -c %s "$tmp/t.html")" 'BEGIN {printf "%.0f", b / 1024}') |"
done
