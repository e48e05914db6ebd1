#include "libprof/output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace libprof {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Bounded: past this the exclusive create fails and says so, rather than looping forever.
constexpr int kMaxTries = 100000;

}  // namespace

bool ExpandOutputTemplate(const std::string& templ, const PathContext& context, std::string* out,
                          std::string* error) {
  if (templ.empty()) {
    *error = "the output path is empty";
    return false;
  }
  std::string base = templ;
  // Like nsys and rocprofv3: a directory gets one file per process inside it.
  if (base.back() == '/' || IsDirectory(base)) {
    if (base.back() != '/') base += '/';
    base += "libprof-%h-%p.pb";
  }
  std::string result;
  for (size_t i = 0; i < base.size(); ++i) {
    char c = base[i];
    if (c != '%') {
      result += c;
      continue;
    }
    if (i + 1 >= base.size()) {
      *error = "output template '" + templ + "' ends with a lone '%' (write %% for a percent sign)";
      return false;
    }
    char code = base[++i];
    switch (code) {
      case 'p': result += std::to_string(context.pid); break;
      case 'h': result += context.hostname; break;
      case 'n': result += std::to_string(context.sequence); break;
      case '%': result += '%'; break;
      case 'q': {
        size_t close = base.find('}', i + 1);
        if (i + 1 >= base.size() || base[i + 1] != '{' || close == std::string::npos ||
            close == i + 2) {
          *error = "output template '" + templ + "': %q must be followed by {VARIABLE}";
          return false;
        }
        std::string name = base.substr(i + 2, close - i - 2);
        const char* value = context.getenv_fn ? context.getenv_fn(name.c_str()) : nullptr;
        if (value != nullptr) result += value;
        i = close;
        break;
      }
      default:
        *error = std::string("output template '") + templ + "': unknown code %" + code +
                 " (known: %p pid, %h host, %n sequence, %q{VAR} environment variable, %% percent)";
        return false;
    }
  }
  *out = std::move(result);
  return true;
}

std::string PickFreePath(const std::string& path, bool overwrite,
                         const std::function<bool(const std::string&)>& exists) {
  if (overwrite || !exists(path)) return path;
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  std::string stem = has_ext ? path.substr(0, dot) : path;
  std::string ext = has_ext ? path.substr(dot) : "";
  std::string candidate = path;
  for (int n = 1; n <= kMaxTries; ++n) {
    candidate = stem + "." + std::to_string(n) + ext;
    if (!exists(candidate)) break;
  }
  return candidate;
}

std::expected<OutputFile, std::string> OpenOutputFile(const std::string& templ,
                                                      PathContext context, bool overwrite) {
  std::string first, second, error;
  context.sequence = 1;
  if (!ExpandOutputTemplate(templ, context, &first, &error)) return std::unexpected(error);
  context.sequence = 2;
  ExpandOutputTemplate(templ, context, &second, &error);
  const bool numbered = first != second;  // the template uses %n (a literal "%%n" does not)

  // A template such as traces/%q{RANK}/run.pb may name folders no one created yet.
  if (auto parent = std::filesystem::path(first).parent_path(); !parent.empty()) {
    std::error_code ignored;  // FileSink::Create below reports an unusable folder clearly
    std::filesystem::create_directories(parent, ignored);
  }
  OutputFile out;
  for (int attempt = 1; attempt <= kMaxTries; ++attempt) {
    std::string path;
    if (numbered) {
      context.sequence = static_cast<uint32_t>(attempt);
      ExpandOutputTemplate(templ, context, &path, &error);
    } else {
      path = PickFreePath(first, overwrite, Exists);
    }
    out.sink = FileSink::Create(path, overwrite && !numbered, &error);
    if (out.sink) {
      out.path = path;
      if (!numbered && path != first) out.requested = first;
      return out;
    }
    // Another process took the name between the check and the create: try the next one.
    if (errno != EEXIST) return std::unexpected(error);
  }
  return std::unexpected("no free file name for the output template '" + templ + "'");
}

std::expected<void, std::string> AppendToTraceList(const std::string& list,
                                                   const std::string& path) {
  std::string line = path;
  if (line.empty() || line[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) {
      return std::unexpected("cannot read the working directory: " + std::string(strerror(errno)));
    }
    line = std::string(cwd) + "/" + line;
  }
  line += '\n';
  const int fd = open(list.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected("cannot open " + list + ": " + strerror(errno));
  const ssize_t written = write(fd, line.data(), line.size());
  const int write_errno = errno;
  close(fd);
  if (written != static_cast<ssize_t>(line.size())) {
    return std::unexpected("cannot write to " + list + ": " +
                           (written < 0 ? strerror(write_errno) : "short write"));
  }
  return {};
}

}  // namespace libprof
