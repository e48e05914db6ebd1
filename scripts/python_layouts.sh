#!/usr/bin/env bash
# Prints the rows of kPythonLayouts (libprof/backtrace/python_layouts.h), one per CPython given
# (default: the pyenv-installed 3.9 to 3.13 found here), from each interpreter's own headers.
# Usage: scripts/python_layouts.sh [path/to/python3 ...]   (run it when adding a CPython version)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pythons=("$@")
if [[ ${#pythons[@]} -eq 0 ]]; then
  for minor in 9 10 11 12 13; do
    for python in "$HOME"/.pyenv/versions/3."$minor".*/bin/python3; do
      [[ -x "$python" ]] && pythons+=("$python") && break
    done
  done
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for python in "${pythons[@]}"; do
  include="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  echo "    // $("$python" -c 'import sys; print("CPython", sys.version.split()[0])')"
  gcc -I"$include" -I"$include/internal" "$here/python_layouts.c" -o "$work/layout"
  "$work/layout"
done
