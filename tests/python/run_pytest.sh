#!/usr/bin/env bash
# CTest entry of the Python package's tests: installs python/ from the checkout the way users and
# CI do (Debian's /usr/bin/python3, pip, offline, no build isolation), into a private directory of
# the build tree so that nothing outside it changes, then runs pytest on tests/python/ with that
# install and the profview just built.
# Usage: run_pytest.sh PROFVIEW SOURCE_DIR WORK_DIR [pytest args...]
set -euo pipefail
profview=$(realpath "$1") source_dir=$(realpath "$2") work_dir=$(realpath -m "$3")
shift 3
python=/usr/bin/python3  # Debian's: it has python3-pandas and python3-pytest
rm -rf "$work_dir"
mkdir -p "$work_dir"
# Built from a copy, so that setuptools' build/ and egg-info never land in the checkout.
cp -r "$source_dir/python" "$work_dir/src"
"$python" -m pip install --quiet --no-build-isolation --no-deps --no-index --no-cache-dir \
  --disable-pip-version-check --target "$work_dir/site" "$work_dir/src" 2>&1 |
  grep -v "Running pip as the 'root' user" >&2 || true
[[ -f "$work_dir/site/libprof/__init__.py" ]] || { echo "run_pytest: pip install failed" >&2; exit 1; }
export PYTHONPATH="$work_dir/site"
export LIBPROF_PROFVIEW="$profview"
export LIBPROF_SAMPLE_TRACES="$source_dir/samples/traces"
export LIBPROF_SOURCE_DIR="$source_dir"
cd "$work_dir"
# A test still running after 300 s prints every thread's stack (the suite takes about 25 s; it
# hung once for over 20 minutes on a loaded 2-core machine, in test_dask.py's cluster while
# another checkout's ran beside it), and CTest's TIMEOUT then ends it instead of holding CI.
exec "$python" -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300 \
  "$source_dir/tests/python" "$@"
