#include "libprof/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <memory>

namespace libprof {

spdlog::logger& Log() {
  // Leaked on purpose: it is used from atexit handlers, after static destructors may have run.
  static spdlog::logger* logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* l = new spdlog::logger("libprof", std::move(sink));
    l->set_pattern("libprof: %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *logger;
}

void InitLog(const std::string& level) {
  Log().set_level(spdlog::level::from_str(level));
}

}  // namespace libprof
