# %% [markdown]
# # "cudaMemcpyAsync: where is it used?" in ten lines of pandas
#
# The question (shared/seeds/000): a CUDA.jl user sees 60% of host time in `cudaMemcpyAsync`,
# never calls it, and asks where it comes from and why it is slow. Here on the recorded trace of
# `samples/normalize_nrm2.cu` (`cublasSnrm2` in a loop, as `norm()` does in CUDA.jl).
# Run it as a script or cell by cell (`# %%`, the percent format of Jupyter and VS Code):
#
#     LIBPROF_PROFVIEW=build/viewer-cli/profview python3 samples/notebooks/where_is_cudaMemcpyAsync.py
#
# with the package installed (`python3 -m pip install --no-build-isolation --no-deps ./python`)
# or `PYTHONPATH=python`.

# %%
import sys
from pathlib import Path

import libprof

trace = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / "traces/normalize_nrm2.pb"

# %% The ten lines: each cudaMemcpyAsync with its copy, how long it waited before the copy could
# start, and the functions it was called from (the recorded call stack, innermost first).
t = libprof.load(trace)
calls = t["api_calls"].query("name == 'cudaMemcpyAsync'")
m = calls.merge(t["memcpys"], on=["process_id", "correlation_id"], suffixes=("", "_copy"))
m["host_us"], m["copy_us"] = (m.end_ns - m.start_ns) / 1e3, (m.end_ns_copy - m.start_ns_copy) / 1e3
m["waited_us"] = (m.start_ns_copy - m.start_ns) / 1e3  # the copy's stream was busy until then
frames = t["call_stacks"].merge(t["stack_frames"], left_on=["process_id", "frame_id"],
                                right_on=["process_id", "id"], suffixes=("_stack", ""))
named = frames[frames.function != ""].sort_values("depth")
sites = named.groupby(["process_id", "id_stack"]).function.agg(lambda f: " <- ".join(f.head(3)))
m = m.join(sites.rename("called_from"), on=["process_id", "stack_id"])

# %% The answer: who calls it, and where its time goes.
summary = m.groupby(["called_from", "copy_kind", "dst_kind"]).agg(
    calls=("host_us", "size"), host_us=("host_us", "sum"), waited_us=("waited_us", "sum"),
    copy_us=("copy_us", "sum"), bytes=("bytes", "sum"))
print(summary.to_string())
waited = summary.waited_us.sum() / summary.host_us.sum()
print(f"\n{waited:.0%} of cudaMemcpyAsync's host time was spent waiting for earlier work on its "
      f"stream; the copies themselves took {summary.copy_us.sum():.1f} us in all.")
