#!/usr/bin/env bash
# Installs what libprof needs to build and test, from Debian's packages (nothing is downloaded
# at build time). The CUDA Toolkit (13.x, for CUPTI and NVTX headers and nvcc) is expected at
# /usr/local/cuda, as on our build machines; it is not a Debian package.
set -euo pipefail

packages=(cmake g++ make binutils python3
          libprotobuf-dev protobuf-compiler libprotozero-dev
          libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev
          nlohmann-json3-dev  # header-only: partial summaries (analysis/metrics); tests parse JSON with it
          libtomlplusplus-dev  # profview check --config (analysis/check_config.h says why TOML)
          # profview export --format sqlite, and the sqlite3 shell its USAGE examples run in.
          libsqlite3-dev sqlite3
          # The Python package (python/), installed from the checkout with pip, offline, and its
          # pytest tests (tests/python/); pandas is what it returns.
          python3-pip python3-setuptools python3-wheel python3-pandas python3-pytest
          # libprof.dask (python/libprof/dask.py) and its test on a LocalCluster.
          python3-dask python3-distributed
          chromium)  # tests/report/ renders profview report's pages in headless Chromium
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [[ ! -e /usr/local/cuda/include/cupti.h ]]; then
  echo "install-deps: the CUDA Toolkit (with CUPTI) is not at /usr/local/cuda;" \
       "set CUDAToolkit_ROOT when configuring" >&2
fi
