#include "analysis/reports/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace libprof::analysis {
namespace {

// The temporary files a signal handler must remove: fixed slots of fixed size, because the
// handler may only call async-signal-safe functions (unlink, raise) and read plain memory.
// Eight is more than any profview command has open at once (one).
constexpr int kTemporarySlots = 8;
constexpr size_t kTemporaryPathMax = 4096;
char temporaries[kTemporarySlots][kTemporaryPathMax];
volatile sig_atomic_t temporary_used[kTemporarySlots];

void RemoveTemporariesAndDie(int signal) {
  for (int i = 0; i < kTemporarySlots; ++i) {
    if (temporary_used[i]) unlink(temporaries[i]);
  }
  std::signal(signal, SIG_DFL);
  raise(signal);
}

int RegisterTemporary(const std::string& path) {
  if (path.size() >= kTemporaryPathMax) return -1;
  for (int i = 0; i < kTemporarySlots; ++i) {
    if (temporary_used[i]) continue;
    std::memcpy(temporaries[i], path.c_str(), path.size() + 1);
    temporary_used[i] = 1;
    return i;
  }
  return -1;  // not removed on a signal; still removed by the destructor
}

void UnregisterTemporary(int slot) {
  if (slot >= 0) temporary_used[slot] = 0;
}

}  // namespace

void RemoveOutputTemporariesOnSignal() {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, RemoveTemporariesAndDie);
}

std::expected<std::unique_ptr<OutputFile>, std::string> OutputFile::Create(
    const std::string& path, Options options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return std::unexpected(path + ": is a directory");
  if (!options.replace && fs::exists(fs::symlink_status(path, ec))) {
    return std::unexpected(path + ": exists already (--force replaces it)");
  }
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) return std::unexpected(path + ": cannot create: " + std::strerror(errno));
  // mkstemp creates the file 0600; an export is an ordinary file, readable as umask allows.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  std::unique_ptr<OutputFile> file(new OutputFile(path, temp, options));
  if (!options.open_stream) return file;
  file->stream_.open(temp, std::ios::binary | std::ios::trunc);
  if (!file->stream_) return std::unexpected(path + ": cannot open " + temp + " for writing");
  return file;
}

OutputFile::OutputFile(std::string path, std::string temp_path, Options options)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      options_(options),
      signal_slot_(RegisterTemporary(temp_path_)) {}

OutputFile::~OutputFile() {
  UnregisterTemporary(signal_slot_);
  if (!committed_) std::remove(temp_path_.c_str());
}

std::expected<void, std::string> OutputFile::Commit() {
  if (options_.open_stream) {
    stream_.close();
    if (!stream_) return std::unexpected(path_ + ": write failed");
  }
  if (!options_.replace) {
    // RENAME_NOREPLACE: a file that appeared under the name since Create is kept, atomically.
    if (renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) == 0) {
      committed_ = true;
      return {};
    }
    if (errno == EEXIST) return std::unexpected(path_ + ": exists already (--force replaces it)");
    if (errno != EINVAL && errno != ENOSYS) {
      return std::unexpected(path_ + ": cannot write: " + std::strerror(errno));
    }
    // A file system without RENAME_NOREPLACE: link() fails too on an existing target.
    if (link(temp_path_.c_str(), path_.c_str()) != 0) {
      return std::unexpected(path_ + (errno == EEXIST ? ": exists already (--force replaces it)"
                                                      : ": cannot write: " +
                                                            std::string(std::strerror(errno))));
    }
    std::remove(temp_path_.c_str());
    committed_ = true;
    return {};
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return std::unexpected(path_ + ": cannot write: " + std::strerror(errno));
  }
  committed_ = true;
  return {};
}

}  // namespace libprof::analysis
