"""A PyTorch program that runs its own torch.profiler (Kineto, on CUPTI) for a few seconds.

Under libprof this is the case of two CUPTI clients in one process: CUDA 13.0's CUPTI serves one,
and Kineto takes over the activity buffers when its profile starts. A profiler injected into such
a program must notice and say so, and must leave the application's own profiler working.

Usage: torch_profiler.py [seconds=4] [--no-profiler]
Prints: the final sum and, with the profiler, how many CUDA kernel events it recorded (> 0 means
torch.profiler worked).
"""
import sys
import time

import torch


def main():
    seconds = float(next((a for a in sys.argv[1:] if not a.startswith("--")), 4))
    use_profiler = "--no-profiler" not in sys.argv
    x = torch.ones(32, device="cuda")
    torch.cuda.synchronize()

    def loop():
        deadline = time.monotonic() + seconds
        steps = 0
        while time.monotonic() < deadline:
            x.add_(1)
            steps += 1
            if steps % 100 == 0:
                time.sleep(0.001)  # a real program's pace, not a tight loop
        torch.cuda.synchronize()

    if use_profiler:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as prof:
            loop()
        kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"profiler_kernel_events_positive={kernels > 0}")
    else:
        loop()
    print(f"sum_positive={x.sum().item() > 32}")


if __name__ == "__main__":
    main()
