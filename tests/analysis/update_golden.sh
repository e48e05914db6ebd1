#!/bin/sh
# Regenerates tests/analysis/golden/*.out from the current profview build.
# usage: tests/analysis/update_golden.sh [BUILD_DIR]   (default: build)
# Builds profview and make_golden_traces, writes the synthetic traces to a scratch directory and
# reruns every case of golden/cases.txt with UPDATE=1. Review the diff before committing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
cmake --build "$build" --target profview make_golden_traces -j2
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
"$build/tests/analysis/make_golden_traces" "$traces"
grep -vE '^(#|$)' "$here/golden/cases.txt" | while read -r name _; do
  UPDATE=1 "$here/run_golden.sh" "$build/viewer-cli/profview" "$traces" "$here/golden" "$name"
done
