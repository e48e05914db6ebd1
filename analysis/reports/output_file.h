// A file that appears under its final name only once it is complete: written under a temporary
// name in the same directory, renamed over the target by Commit(), removed if never committed.
// A failed or interrupted export so leaves no half-written file that looks finished.
//
// Layer: analysis/reports/. Plain C++ and POSIX; errors are returned, never thrown.
#pragma once

#include <expected>
#include <fstream>
#include <memory>
#include <string>

namespace libprof::analysis {

// Makes SIGINT, SIGTERM and SIGHUP remove the temporary files of the OutputFiles not yet
// committed before the process dies of the signal as it would have, so that an interrupted
// export (Ctrl-C) leaves nothing behind. For programs that own their signals (profview's main).
void RemoveOutputTemporariesOnSignal();

class OutputFile {
 public:
  struct Options {
    bool open_stream = true;  // false: the caller writes temp_path() itself (e.g. SQLite)
    bool replace = true;      // false: Commit fails rather than replace an existing `path`
  };
  // Creates "<dir>/.<name>.tmp-XXXXXX" next to `path`. Error: the directory is missing or not
  // writable, `path` is a directory, or (replace false) `path` exists already.
  static std::expected<std::unique_ptr<OutputFile>, std::string> Create(const std::string& path,
                                                                        Options options);
  static std::expected<std::unique_ptr<OutputFile>, std::string> Create(const std::string& path) {
    return Create(path, Options{});
  }
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  const std::string& temp_path() const { return temp_path_; }
  // Closes the stream and renames the temporary file to the target path. Error (the temporary
  // file is then removed): a write failed (disk full), the rename did, or (replace false) the
  // target appeared meanwhile: the rename never replaces it then.
  std::expected<void, std::string> Commit();

 private:
  OutputFile(std::string path, std::string temp_path, Options options);
  std::string path_;
  std::string temp_path_;
  Options options_;
  std::ofstream stream_;
  bool committed_ = false;
  int signal_slot_;  // of RemoveOutputTemporariesOnSignal's list; -1 when it was full
};

}  // namespace libprof::analysis
