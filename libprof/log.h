// libprof's private logger: stderr only, never the application's stdout.
//
// Layer: libprof/. A spdlog logger of our own (never spdlog's global registry, which other .so
// files in the process may share), compiled header-only and hidden in libprof.so. Nothing here is
// called per record: hot paths count problems and report them once.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace libprof {

// Sets the level ("off", "error", "warn", "info", "debug", "trace"). Safe to call again.
void InitLog(const std::string& level);

// The logger; usable before InitLog (level "warn").
spdlog::logger& Log();

}  // namespace libprof
