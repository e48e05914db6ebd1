#!/usr/bin/env bash
# The GPU half of issue 5 ("Overhead" and "Exit cost"), on the device machine, in one run of under
# 8 minutes: each round runs every configuration of a case side by side (order rotated per
# round), so drifts in clocks or load hit all of them alike; then one table (summarize.py).
#   launch     launch_loop, 1M empty kernels: none / CUPTI floor / libprof / libprof API_FILTER=all
#              / libprof BACKTRACE=none / libprof BACKTRACE=all (libprof is BACKTRACE=blocking)
#   torch-add  x.add_(1), 100k ops; torch-mlp: MLP training steps (one python process runs both):
#              none / libprof (LD_PRELOAD) / libprof API_FILTER=all / torch.profiler CPU+CUDA / CUDA
#              / libprof BACKTRACE=none / libprof BACKTRACE=all
#   exit       launch_loop, 500k launches (about 1M records): time from its last CUDA call to the
#              process end; libprof-buffered keeps the records in memory until exit
#   copy, long 64 MiB copies / 20 x 50 ms kernels: none / libprof (should be lost in the noise)
#   uvm        launch_loop: none / libprof without the `uvm` kind / libprof (CASES=uvm only)
# After each libprof run, `profview summary` gives the records and drops; the file size gives
# bytes per record. A run that fails or times out shows FAILED (SKIPPED past BUDGET_S).
#
# Usage (repository root of the carried tree): bench/device/run_device.sh
#   models     ResNet-18 training step and GPT-2-small forward (torch_models_bench.py): none / CUPTI
#              floor / libprof BACKTRACE=none / libprof / libprof PYTHON_FRAMES=0 / libprof
#              BACKTRACE=all / torch.profiler CPU+CUDA (not in the default CASES: CASES=models)
# Environment: CASES (launch,torch,exit,copy,size, and uvm, models (not by default): which parts to run; e.g. CASES=launch,torch for
# the call-stack cost alone), ROUNDS (5 for C++ cases, 3 for PyTorch), BUDGET_S (430: no run
# starts later, none runs past it by more than 40 s), BUILD_DIR, OUT (raw CSV and logs go there), LAUNCHES (1000000),
# EXIT_LAUNCHES (500000), MODELS_CONFIGS (the models configurations, space-separated; default all;
# floor-skip-KIND[+KIND] is the floor less those kinds), MODELS_WORKLOAD (resnet, gpt2, both),
# LAUNCH_CONFIGS (the launch case's configurations; default all).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# The build tree holds absolute /work/main paths (scripts/device_run.sh does the same).
mkdir -p /work && { [[ -e /work/main ]] || ln -s "$repo" /work/main; }
b=${BUILD_DIR:-/work/main/build-device}
lib=$b/libprof/libprof.so
floor=$b/bench/device/libcupti_floor.so
loop=$b/bench/device/launch_loop
copylong=$b/bench/device/copy_and_long_kernel
profview=$b/viewer-cli/profview
torch_bench=$here/torch_loop_bench.py
models_bench=$here/torch_models_bench.py
models_steps=${MODELS_STEPS:-40}
read -r -a models_configs <<< "${MODELS_CONFIGS:-none floor libprof-bt-none libprof libprof-no-python libprof-bt-all kineto-cpu-cuda}"
read -r -a launch_configs <<< "${LAUNCH_CONFIGS:-none floor libprof libprof-all libprof-bt-none libprof-bt-all}"
python=${PYTHON:-python3}  # the one with torch
cpp_rounds=${ROUNDS:-5}
torch_rounds=${ROUNDS:-3}
exit_rounds=${ROUNDS:-3}
budget_s=${BUDGET_S:-430}
cases=",${CASES:-launch,torch,exit,copy,size},"
launches=${LAUNCHES:-1000000}
exit_launches=${EXIT_LAUNCHES:-500000}
work=$(mktemp -d /tmp/bench_device.XXXXXX)
csv=$work/bench.csv
start_s=$(date +%s)

echo "bench/device/run_device.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -4
timeout 60 "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
for f in "$lib" "$floor" "$loop" "$copylong" "$profview" "$torch_bench"; do
  [[ -e $f ]] || echo "MISSING: $f (its cases will show FAILED)"
done
ldd "$floor" 2>/dev/null | grep "not found" && echo "the CUPTI floor will not load: libcupti not found"
echo "case,config,round,value,exit_us,rc,records,dropped,trace_bytes,wall_ms" >"$csv"
# Warm the page cache and the driver: the first process of a kind is slower.
timeout 60 "$loop" 10000 >/dev/null 2>&1 || echo "launch_loop warm-up FAILED"

# Sets env_vars to the environment of configuration $1; $2 = inject | preload (how libprof loads).
set_config() {
  env_vars=()
  local how=CUDA_INJECTION64_PATH
  [[ ${2:-inject} == preload ]] && how=LD_PRELOAD
  case $1 in
    floor) env_vars=(CUDA_INJECTION64_PATH="$floor") ;;
    # The floor less some kinds (cupti_floor.cc names them), e.g. floor-skip-driver+event.
    # ... and with callbacks on the synchronising and event calls instead (cupti_floor.cc).
    floor-callbacks-skip-*) local skip=${1#floor-callbacks-skip-}
                            env_vars=(CUDA_INJECTION64_PATH="$floor" CUPTI_FLOOR_SKIP="${skip//+/,}"
                                      CUPTI_FLOOR_SYNC_CALLBACKS=1) ;;
    floor-skip-*) local skip=${1#floor-skip-}
                  env_vars=(CUDA_INJECTION64_PATH="$floor" CUPTI_FLOOR_SKIP="${skip//+/,}") ;;
    libprof) env_vars=("$how=$lib") ;;
    libprof-all) env_vars=("$how=$lib" LIBPROF_API_FILTER=all) ;;
    libprof-buffered) env_vars=("$how=$lib" LIBPROF_FLUSH_INTERVAL_MS=600000) ;;
    libprof-bt-none) env_vars=("$how=$lib" LIBPROF_BACKTRACE=none) ;;
    libprof-bt-all) env_vars=("$how=$lib" LIBPROF_BACKTRACE=all) ;;
    # The default kinds less `uvm`: what the unified-memory counters cost a program without them.
    libprof-no-uvm) env_vars=("$how=$lib"
                              LIBPROF_TRACE=runtime,driver,kernel,memcpy,memset,sync,memory,nvtx,overhead) ;;
    libprof-no-python) env_vars=("$how=$lib" LIBPROF_PYTHON_FRAMES=0) ;;
    # The default kinds less `sync` and `memory`: their CUPTI kinds (SYNCHRONIZATION, CUDA_EVENT,
    # MEMORY2) were measured to cost a PyTorch step more than the rest together (bench/README.md).
    libprof-no-sync-memory) env_vars=("$how=$lib"
                                      LIBPROF_TRACE=runtime,driver,kernel,memcpy,memset,nvtx,overhead,uvm) ;;
    # The default kinds less `driver`: what recording driver calls costs (torch.profiler's
    # comparison; every runtime call makes one or more driver calls).
    libprof-no-driver) env_vars=("$how=$lib"
                                 LIBPROF_TRACE=runtime,kernel,memcpy,memset,sync,memory,nvtx,overhead,uvm) ;;
  esac
}

# measure CONFIG ROUND LIMIT_S CASE=KEY[,CASE=KEY] PROGRAM ARGS...: one run under env_vars; one CSV
# row per CASE with the value printed as KEY=value (KEY exit_ms: the exit cost).
measure() {
  local config=$1 round=$2 limit=$3 keys=$4
  shift 4
  local tag=${keys%%=*}.$config.$round
  local out=$work/$tag.out err=$work/$tag.err trace=$work/trace.pb
  rm -f "$work"/trace*.pb
  local rc=SKIPPED t0 t1 wall_ms="" exit_us="" records="" dropped="" bytes=""
  local left=$(( budget_s - ($(date +%s) - start_s) ))
  if (( left > 0 )); then
    (( limit > left + 40 )) && limit=$(( left + 40 ))  # a hung run must not cost the table
    t0=$(date +%s%N)
    timeout -k 10 "$limit" env "${env_vars[@]}" LIBPROF_OUTPUT="$trace" LIBPROF_FORCE_OVERWRITE=1 \
      "$@" >"$out" 2>"$err"
    rc=$?
    t1=$(date +%s%N)
    wall_ms=$(( (t1 - t0) / 1000000 ))
    local stamp
    stamp=$(sed -n 's/^exit_stamp_ns=\([0-9]*\)$/\1/p' "$out" | tail -n1)
    [[ -n $stamp ]] && exit_us=$(( (t1 - stamp) / 1000 ))
    if [[ $config == libprof* && -s $trace ]]; then
      bytes=$(stat -c %s "$trace")
      LD_LIBRARY_PATH=$b/carrylib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 60 \
        "$profview" summary --format json "$trace" >"$work/$tag.json" 2>>"$err"
      read -r records dropped < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); print(d.get("events", ""), d.get("dropped_records", ""))' \
        "$work/$tag.json" 2>/dev/null)
    elif [[ $config == floor* ]]; then
      dropped=$(sed -n 's/^cupti_floor: .*dropped=\([0-9]*\)$/\1/p' "$err" | tail -n1)
    fi
  fi
  local pair case key value shown=""
  for pair in ${keys//,/ }; do
    case=${pair%%=*} key=${pair#*=} value=""
    if [[ $rc == SKIPPED ]]; then
      value=SKIPPED
    elif [[ $rc == 0 && $key == exit_ms && -n $exit_us ]]; then
      value=$(awk -v us="$exit_us" 'BEGIN { printf "%.3f", us / 1000 }')
    elif [[ $rc == 0 ]]; then
      value=$(sed -n "s/^$key=\([0-9.]*\)$/\1/p" "$out" | tail -n1)
    fi
    [[ -z $value ]] && value=FAILED
    echo "$case,$config,$round,$value,$exit_us,$rc,$records,$dropped,$bytes,$wall_ms" >>"$csv"
    shown+=" $case=$value"
  done
  printf '[%4ss] r%s %-16s%s (rc %s, %s ms%s%s)\n' "$(( $(date +%s) - start_s ))" "$round" \
    "$config" "$shown" "$rc" "$wall_ms" "${records:+, $records records}" "${dropped:+, $dropped dropped}"
  if [[ $rc != 0 && $rc != SKIPPED ]]; then
    grep -v "^\s*$" "$err" | tail -n 4 | sed 's/^/    stderr: /'
  elif [[ -e $err ]]; then  # libprof's warnings, less the expected one in PyTorch processes
    grep "^libprof:" "$err" | grep -v "PyTorch process" | head -n 3 | sed 's/^/    stderr: /'
  fi
}

# rotated N I ITEMS...: ITEMS starting at index I mod N, wrapping around.
rotated() {
  local n=$1 i=$2
  shift 2
  local items=("$@") k
  for (( k = 0; k < n; ++k )); do echo "${items[(i + k) % n]}"; done
}

# wanted CASE: whether CASES asks for it.
wanted() { [[ $cases == *",$1,"* ]]; }

if wanted launch; then
  echo "== launch loop: $launches launches, $cpp_rounds rounds"
  for (( r = 1; r <= cpp_rounds; ++r )); do
    for c in $(rotated ${#launch_configs[@]} $r "${launch_configs[@]}"); do
      set_config "$c"
      measure "$c" "$r" 180 launch=us_per_launch "$loop" "$launches"
    done
  done
fi

# The unified-memory counters (LIBPROF_TRACE uvm) in a program with no managed memory: libprof
# without and with the kind, side by side (the exit column shows what it costs at exit).
if wanted uvm; then
  echo "== uvm: launch loop, $launches launches, $cpp_rounds rounds, libprof with and without uvm"
  for (( r = 1; r <= cpp_rounds; ++r )); do
    for c in $(rotated 3 $r none libprof-no-uvm libprof); do
      set_config "$c"
      measure "$c" "$r" 180 uvm-launch=us_per_launch "$loop" "$launches"
    done
  done
fi

# The floor here is the CUPTI floor injected into python: what CUPTI alone costs an eager op.
if wanted torch; then
  echo "== PyTorch: x.add_(1) 100k ops, MLP 2000 steps, $torch_rounds rounds"
  for (( r = 1; r <= torch_rounds; ++r )); do
    for c in $(rotated 8 $r none floor libprof libprof-all kineto-cpu-cuda kineto-cuda \
               libprof-bt-none libprof-bt-all); do
      set_config "$c" preload
      mode=none
      [[ $c == kineto-* ]] && mode=$c
      measure "$c" "$r" 240 torch-add=add_us_per_op,torch-mlp=mlp_us_per_step \
        "$python" "$torch_bench" --mode "$mode"
    done
  done
fi

# Real models (issue 19): ResNet-18 training step and GPT-2-small forward, one process per run.
# libprof is blocking (default, with Python frames), -no-python the same without Python frames.
if wanted models; then
  echo "== models: ResNet-18 training step, GPT-2-small forward, $models_steps steps, $torch_rounds rounds"
  for (( r = 1; r <= torch_rounds; ++r )); do
    for c in $(rotated ${#models_configs[@]} $r "${models_configs[@]}"); do
      set_config "$c" preload
      mode=none
      [[ $c == kineto-* ]] && mode=$c
      measure "$c" "$r" 240 resnet=resnet_ms_per_step,gpt2=gpt2_ms_per_step,resnet-median=resnet_median_ms_per_step,gpt2-median=gpt2_median_ms_per_step \
        "$python" "$models_bench" --mode "$mode" --steps "$models_steps" --workload "${MODELS_WORKLOAD:-both}"
    done
  done
fi

if wanted exit; then
  echo "== exit cost: $exit_launches launches, $exit_rounds rounds"
  for (( r = 1; r <= exit_rounds; ++r )); do
    for c in $(rotated 3 $r none libprof libprof-buffered); do
      set_config "$c"
      measure "$c" "$r" 180 exit=exit_ms "$loop" "$exit_launches"
    done
  done
fi

if wanted copy; then
  echo "== copies and long kernels, $cpp_rounds rounds"
  for (( r = 1; r <= cpp_rounds; ++r )); do
    for c in $(rotated 2 $r none libprof); do
      set_config "$c"
      measure "$c" "$r" 120 copy=copy_ms "$copylong" copy
      measure "$c" "$r" 120 long=long_ms "$copylong" long
    done
  done
fi

# Trace size per op, once: libprof's trace vs torch.profiler's Chrome trace (issue 5, "Trace size").
kineto_bytes="" kineto_kernels=""
if wanted size; then
  echo "== trace size: x.add_(1), 100k ops"
  set_config libprof preload
  measure libprof 1 240 size-libprof=add_us_per_op "$python" "$torch_bench" --workload add
  set_config none
  rm -f "$work/kineto.json"
  measure kineto-cpu-cuda 1 300 size-kineto=add_us_per_op \
    "$python" "$torch_bench" --workload add --mode kineto-cpu-cuda --export "$work/kineto.json"
  kineto_bytes=$(stat -c %s "$work/kineto.json" 2>/dev/null)
  # If torch.profiler could not load CUPTI it records CPU ops only: check that kernels are there.
  kineto_kernels=$(grep -o '"cat": *"kernel"' "$work/kineto.json" 2>/dev/null | wc -l)
  rm -f "$work/kineto.json" "$work"/trace*.pb
fi

echo
echo "== results ($(hostname), $(date -u +%Y-%m-%d), $(( $(date +%s) - start_s )) s)"
python3 "$here/summarize.py" "$csv" "${kineto_bytes:-}" || echo "summarize.py FAILED; raw numbers in $csv"
echo "added/ref: libprof's added time over the CUPTI floor's (launch) or torch.profiler CPU+CUDA's (torch)."
echo "torch.profiler's Chrome trace of the size run holds $kineto_kernels kernels (about 100000 expected)."
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT/bench_logs" && cp "$csv" "$OUT/bench.csv" && cp "$work"/*.out "$work"/*.err "$OUT/bench_logs/" 2>/dev/null
  echo "raw numbers: $OUT/bench.csv"
fi
