// FileSink: the trace file as a ByteSink. Plain POSIX calls, no stdio, so that nothing is
// buffered behind our back in a process that may die at any moment.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "proto/trace_writer.h"

namespace libprof {

std::unique_ptr<FileSink> FileSink::Create(const std::string& path, bool overwrite,
                                           std::string* error) {
  // O_EXCL by default: two processes given the same name template must not interleave chunks.
  const int flags = O_CREAT | O_WRONLY | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  int fd;
  do {
    fd = open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int open_errno = errno;
    if (error != nullptr) *error = "cannot create " + path + ": " + strerror(open_errno);
    errno = open_errno;  // callers tell EEXIST (a name taken meanwhile) from real failures
    return nullptr;
  }
  return std::unique_ptr<FileSink>(new FileSink(fd));
}

FileSink::~FileSink() {
  if (fd_ >= 0) close(fd_);
}

bool FileSink::Write(const void* data, size_t size) {
  if (!error_.empty()) return false;
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = write(fd_, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      // write() returning 0 for a non-empty regular-file write means no progress is possible.
      error_ = std::string("write failed: ") + (written < 0 ? strerror(errno) : "no progress");
      return false;
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

}  // namespace libprof
