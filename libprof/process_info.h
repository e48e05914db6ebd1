// Facts about the process being recorded, for the trace header and output names.
//
// Layer: libprof/ (CUDA-free). Reads /proc and libc only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace libprof {

std::string Hostname();
std::vector<std::string> CommandLine();  // argv from /proc/self/cmdline
// The path libprof.so was loaded from (for NVTX_INJECTION64_PATH in LD_PRELOAD mode).
std::string OwnLibraryPath();

struct Rank {
  uint32_t value = 0;
  std::string source;  // the environment variable it came from
};
// The process's global rank as a parallel launcher announces it: the first of LIBPROF_RANK,
// RANK (torchrun), OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK, PMI_RANK (MPICH, Intel MPI),
// SLURM_PROCID (srun), MV2_COMM_WORLD_RANK (MVAPICH2) that holds a plain number.
// LOCAL_RANK is not a global rank and is not read.
std::optional<Rank> RankFromEnvironment(
    const std::function<const char*(const char*)>& getenv_fn);

}  // namespace libprof
