// Process trees, as torchrun, multiprocessing and test harnesses make them: the parent forks two
// children before it touches CUDA; each child runs a kernel and a copy and exits 0; the parent
// waits for them and then uses CUDA itself; finally it forks one more child, after CUDA is
// initialised, which uses no CUDA and exits 0 through exit() (so atexit handlers run in it).
//
// A profiler should write three traces (the parent and the two early children, each under its
// own pid) and nothing for the late child, whose exit must not hang on the inherited profiler
// state (CUPTI flushes hang in a forked child).
//
// Usage: fork_children
// Prints: each child's status and the parent's result, once everything has exited.
#include <sys/wait.h>
#include <unistd.h>

#include "sample_util.cuh"

namespace {

constexpr int kElements = 1024;

__global__ void SquareKernel(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i * i;
}

// A kernel and a copy; returns the sum of the results (checked by the caller).
long long SmallWorkload() {
  int* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, kElements * sizeof(int)));
  SquareKernel<<<(kElements + 255) / 256, 256>>>(device, kElements);
  CHECK_LAUNCH();
  int host[kElements];
  CHECK_CUDA(cudaMemcpy(host, device, sizeof(host), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(device));
  long long sum = 0;
  for (int i = 0; i < kElements; ++i) sum += host[i];
  return sum;
}

constexpr long long kExpectedSum = 1LL * (kElements - 1) * kElements * (2 * kElements - 1) / 6;

// Forks a child that runs `child` and exits with its return value through exit().
template <typename F>
pid_t Spawn(F child) {
  std::fflush(stdout);  // a child must not print the parent's buffered output again
  pid_t pid = fork();
  CHECK_TRUE(pid >= 0, "fork failed");
  if (pid == 0) std::exit(child());
  return pid;
}

// Waits for `pid`; returns its exit status, or 128 + signal.
int Wait(pid_t pid) {
  int status = 0;
  CHECK_TRUE(waitpid(pid, &status, 0) == pid, "waitpid failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main() {
  auto cuda_child = [] { return SmallWorkload() == kExpectedSum ? 0 : 3; };
  pid_t first = Spawn(cuda_child);
  pid_t second = Spawn(cuda_child);
  const int first_status = Wait(first);
  const int second_status = Wait(second);

  const long long parent_sum = SmallWorkload();
  CHECK_TRUE(parent_sum == kExpectedSum, "parent sum %lld, want %lld", parent_sum, kExpectedSum);

  pid_t late = Spawn([] { return 0; });  // CUDA is initialised in the parent by now
  const int late_status = Wait(late);

  std::printf("fork_children: child1=%d child2=%d parent_sum=%lld late_child=%d\n", first_status,
              second_status, parent_sum, late_status);
  return first_status == 0 && second_status == 0 && late_status == 0 ? 0 : 1;
}
