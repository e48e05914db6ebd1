#!/usr/bin/env bash
# The CPU part of the benchmarks (bench/README.md): trace size per record, and the time and peak
# memory of `profview summary`, `findings` and `streams` against the read floor (decoding the
# file and nothing else), on synthetic training-loop traces of 1M and 10M records (and, with
# --many, 64 files of 1M records analysed together). Needs no GPU. Prints Markdown tables.
#
# Also `profview diff` of two traces of the same simulated program (seeds 1 and 2) against the
# floor of reading both, at 1M and 10M records each, without and with the findings (the latter as
# many rounds as findings on 10M records).
#
# usage: bench/run_local.sh [--rounds N] [--large-findings-rounds N] [--many] [BUILD_DIR]
#   BUILD_DIR                  default <repo>/build-bench (configured Release if it is not yet)
#   --rounds N                 rounds of every measurement (default 3): median [min-max]
#   --large-findings-rounds N  rounds of findings on 10M records (default 1: it takes minutes)
#   --many                     also 64 files of 1M records, one round (several minutes, GBs of RAM)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build-bench"
rounds=3
large_findings_rounds=1
many=0
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --large-findings-rounds) large_findings_rounds=$2; shift 2 ;;
    --many) many=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "run_local.sh: unknown flag $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done

# ---- build, tools, scratch directory, memory cap ----------------------------------------------
echo
bench_name=$(basename "$0")
source "$repo/bench/bench_env.sh"

# ---- traces ------------------------------------------------------------------------------------
# value KEY LINE: the value of KEY=... in a key=value line of the generator or read_floor.
value() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

echo "generating traces in $tmp ..." >&2
"$gen" --records 1000000 -o "$tmp/1m.pb" >/dev/null
"$gen" --records 10000000 -o "$tmp/10m.pb" >/dev/null
# The other run of each diff: the same program, another seed (other durations and order).
"$gen" --records 1000000 --seed 2 -o "$tmp/1m-b.pb" >/dev/null
"$gen" --records 10000000 --seed 2 -o "$tmp/10m-b.pb" >/dev/null
if ((many)); then
  for i in $(seq 0 63); do
    "$gen" --records 1000000 --seed $((i + 1)) --pid $((20000 + i)) -o "$tmp/many-$i.pb" >/dev/null
  done
fi

# ---- bytes per record, per kind ----------------------------------------------------------------
# The same simulated run (1M records) written with only some kinds: the file then holds those
# records plus a header and string table of about 4 KB, so its size over their count is their
# cost.
echo
echo "| records in the file | count | bytes | B/record |"
echo "|---|---:|---:|---:|"
for kinds in all runtime,driver kernel memcpy runtime,driver,kernel; do
  if [[ $kinds == all ]]; then args=(); else args=(--kinds "$kinds"); fi
  line=$("$gen" --records 1000000 "${args[@]}" -o "$tmp/kinds.pb")
  count=0
  for kind in ${kinds//,/ }; do
    [[ $kind == all ]] && kind=records
    count=$((count + $(value "$kind" "$line")))
  done
  bytes=$(value bytes "$line")
  label=$kinds
  [[ $kinds == runtime,driver ]] && label="API calls (runtime + nested driver)"
  [[ $kinds == runtime,driver,kernel ]] && label="launch loop (API calls + kernels)"
  [[ $kinds == all ]] && label="full mix"
  per_record=$(awk -v b="$bytes" -v n="$count" 'BEGIN {printf "%.2f", b / n}')
  echo "| $label | $count | $bytes | $per_record |"
done
rm -f "$tmp/kinds.pb"

# ---- time and peak memory ------------------------------------------------------------------------
# measure LABEL CMD...: runs CMD once, output discarded; appends "LABEL seconds peak_rss_kb" (or
# "LABEL fail") to $tmp/raw. Wall time, from date's nanoseconds: %e of GNU time has 10 ms steps.
measure() {
  local label=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  if /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/stderr"; then
    t1=$(date +%s%N)
    echo "$label $(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.3f", d / 1e9}') $(tail -1 "$tmp/rss")" \
      >>"$tmp/raw"
  else
    echo "$label fail" >>"$tmp/raw"
    echo "  $label failed: $(grep -v '^Command' "$tmp/stderr" | tail -1)" >&2
  fi
}

# summarize LABEL FIELD: "median min max" of field 2 (seconds) or 3 (peak RSS KiB) over the
# rounds of LABEL; "fail" if any round failed, "-" if it was not run.
summarize() {
  if grep -q "^$1 fail" "$tmp/raw"; then echo fail; return; fi
  if ! grep -q "^$1 " "$tmp/raw"; then echo -; return; fi
  grep "^$1 " "$tmp/raw" | awk -v f="$2" '{print $f}' | sort -g |
    awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                           print m, v[1], v[NR]}'
}

# run_set NAME ROUNDS FINDINGS_ROUNDS FILE...: every round runs the tools one after the other
# (floor, summary, streams, findings), so that a slow spell of this shared machine touches all
# alike.
run_set() {
  local name=$1 set_rounds=$2 findings_rounds=$3; shift 3
  local r
  for ((r = 1; r <= set_rounds; r++)); do
    echo "  $name: round $r of $set_rounds" >&2
    measure "$name.floor" "$floor" "$@"
    measure "$name.summary" "$profview" summary --format json "$@"
    measure "$name.streams" "$profview" streams --format json "$@"
    if ((r <= findings_rounds)); then
      measure "$name.findings" "$profview" findings --format json "$@"
    fi
  done
}

echo
echo "measuring ($rounds rounds; findings on 10M records: $large_findings_rounds) ..." >&2
findings_rounds_of_diff=$large_findings_rounds
run_set 1m "$rounds" "$rounds" "$tmp/1m.pb"
run_set 10m "$rounds" "$large_findings_rounds" "$tmp/10m.pb"
if ((many)); then
  run_set 64x1m 1 1 "$tmp"/many-*.pb
fi
# diff: per iteration (both traces repeat the NVTX range "iteration"), without the findings
# (streamed) and as by default, with them (each run's findings restricted to the iterations);
# the floor reads both files.
for set in 1m 10m; do
  for ((r = 1; r <= rounds; r++)); do
    echo "  diff $set: round $r of $rounds" >&2
    measure "diff$set.floor" "$floor" "$tmp/$set.pb" "$tmp/$set-b.pb"
    measure "diff$set.diff" "$profview" diff --no-findings --format json "$tmp/$set.pb" "$tmp/$set-b.pb"
    if ((r <= findings_rounds_of_diff)); then
      measure "diff$set.full" "$profview" diff --format json "$tmp/$set.pb" "$tmp/$set-b.pb"
    fi
  done
done

# ---- table -------------------------------------------------------------------------------------
# seconds "median min max" -> "0.65 [0.63-0.70]"; mib "median ..." (KiB) -> "197"; ratio A B ->
# " (5.2x)". "fail" and "-" pass through.
number() { [[ $1 =~ ^[0-9.]+$ ]]; }
seconds() { number "$1" || { echo "$1"; return; }; awk -v m="$1" -v a="$2" -v b="$3" \
  'BEGIN {printf (a == b ? "%.2f" : "%.2f [%.2f-%.2f]"), m, a, b}'; }
mib() { number "$1" || { echo "$1"; return; }; awk -v m="$1" 'BEGIN {printf "%.0f", m / 1024}'; }
ratio() { number "$1" && number "$2" || return 0; awk -v a="$1" -v b="$2" \
  'BEGIN {printf " (%.1fx)", a / b}'; }

echo
echo "| trace | records | file MiB | B/record | read floor s | summary s (x floor) |" \
     "findings s (x floor) | streams s (x floor) |" \
     "peak RSS MiB: floor / summary / findings / streams | RSS / file: summary / findings / streams |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for set in 1m 10m 64x1m; do
  case $set in
    1m) files=("$tmp/1m.pb") ;;
    10m) files=("$tmp/10m.pb") ;;
    64x1m) ((many)) || continue; files=("$tmp"/many-*.pb) ;;
  esac
  bytes=$(cat "${files[@]}" | wc -c)
  records=$(value records "$("$floor" "${files[@]}")")
  read -r fl_t fl_a fl_b <<<"$(summarize "$set.floor" 2)"
  read -r su_t su_a su_b <<<"$(summarize "$set.summary" 2)"
  read -r fi_t fi_a fi_b <<<"$(summarize "$set.findings" 2)"
  read -r st_t st_a st_b <<<"$(summarize "$set.streams" 2)"
  fl_m=$(summarize "$set.floor" 3)
  su_m=$(summarize "$set.summary" 3)
  fi_m=$(summarize "$set.findings" 3)
  st_m=$(summarize "$set.streams" 3)
  # peak RSS over the files' size: "0.4x", or "-"
  per_file() { number "$1" && awk -v k="$1" -v b="$bytes" 'BEGIN {printf "%.1fx", k * 1024 / b}' ||
    echo -; }
  echo "| $set | $records | $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')" \
       "| $(awk -v b="$bytes" -v n="$records" 'BEGIN {printf "%.2f", b / n}')" \
       "| $(seconds $fl_t $fl_a $fl_b)" \
       "| $(seconds $su_t $su_a $su_b)$(ratio "$su_t" "$fl_t")" \
       "| $(seconds $fi_t $fi_a $fi_b)$(ratio "$fi_t" "$fl_t")" \
       "| $(seconds $st_t $st_a $st_b)$(ratio "$st_t" "$fl_t")" \
       "| $(mib ${fl_m%% *}) / $(mib ${su_m%% *}) / $(mib ${fi_m%% *}) / $(mib ${st_m%% *})" \
       "| $(per_file "${su_m%% *}") / $(per_file "${fi_m%% *}") / $(per_file "${st_m%% *}") |"
done

echo
echo "| diff of | records (both) | files MiB | read floor of both s | diff --no-findings s (x floor)" \
     "| diff s (x floor) | peak RSS MiB: floor / diff --no-findings / diff | RSS / files: diff --no-findings / diff |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for set in 1m 10m; do
  files=("$tmp/$set.pb" "$tmp/$set-b.pb")
  bytes=$(cat "${files[@]}" | wc -c)
  records=$(value records "$("$floor" "${files[@]}")")
  read -r fl_t fl_a fl_b <<<"$(summarize "diff$set.floor" 2)"
  read -r di_t di_a di_b <<<"$(summarize "diff$set.diff" 2)"
  read -r fu_t fu_a fu_b <<<"$(summarize "diff$set.full" 2)"
  fl_m=$(summarize "diff$set.floor" 3)
  di_m=$(summarize "diff$set.diff" 3)
  fu_m=$(summarize "diff$set.full" 3)
  per_files() { number "$1" && awk -v k="$1" -v b="$bytes" 'BEGIN {printf "%.2fx", k * 1024 / b}' ||
    echo -; }
  echo "| 2 x $set | $records | $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')" \
       "| $(seconds $fl_t $fl_a $fl_b)" \
       "| $(seconds $di_t $di_a $di_b)$(ratio "$di_t" "$fl_t")" \
       "| $(seconds $fu_t $fu_a $fu_b)$(ratio "$fu_t" "$fl_t")" \
       "| $(mib ${fl_m%% *}) / $(mib ${di_m%% *}) / $(mib ${fu_m%% *})" \
       "| $(per_files "${di_m%% *}") / $(per_files "${fu_m%% *}") |"
done
