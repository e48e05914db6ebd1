#!/bin/sh
# Runs one golden case of profview and compares its output with the checked-in expectation.
# usage: run_golden.sh PROFVIEW TRACES_DIR GOLDEN_DIR CASE_NAME
# The output compared is stdout, then "--- stderr ---" and stderr, then the exit code, with the
# traces directory replaced by "TRACES" (and samples/traces by "SAMPLES"). With UPDATE=1 the expectation is rewritten instead.
set -u
profview=$1
traces=$2
golden=$3
name=$4
line=$(grep -E "^$name( |\$)" "$golden/cases.txt") || { echo "no case $name"; exit 2; }
# SAMPLES: the traces recorded on a GPU and committed under samples/traces/.
samples=$(cd "$golden/../../../samples/traces" && pwd)
args=$(echo "$line" | sed -e "s|^$name||" -e "s|TRACES|$traces|g" -e "s|SAMPLES|$samples|g")
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err" "$out.actual"' EXIT
set -f  # the case's words are split on spaces, never globbed
# shellcheck disable=SC2086
set -- $args
envs="COLUMNS=120 LC_ALL=C.UTF-8"
while [ $# -gt 0 ]; do
  case $1 in
    *=*) envs="$envs $1"; shift ;;
    *) break ;;
  esac
done
# shellcheck disable=SC2086
env $envs "$profview" "$@" >"$out" 2>"$err"
code=$?
{
  cat "$out"
  echo "--- stderr ---"
  cat "$err"
  echo "--- exit code: $code ---"
} | sed -e "s|$traces|TRACES|g" -e "s|$samples|SAMPLES|g" >"$out.actual"
if [ "${UPDATE:-0}" = 1 ]; then
  cp "$out.actual" "$golden/$name.out"
  echo "updated $golden/$name.out"
  exit 0
fi
if ! diff -u "$golden/$name.out" "$out.actual"; then
  echo "golden mismatch for $name; regenerate with tests/analysis/update_golden.sh if intended"
  exit 1
fi
