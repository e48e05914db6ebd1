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

class OutputFile {
 public:
  // Creates "<dir>/.<name>.tmp-XXXXXX" next to `path`. Error: the directory is missing or not
  // writable, or `path` is a directory.
  static std::expected<std::unique_ptr<OutputFile>, std::string> Create(const std::string& path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  // Closes the stream and renames the temporary file to the target path. Error (the temporary
  // file is then removed): a write failed (disk full) or the rename did.
  std::expected<void, std::string> Commit();

 private:
  OutputFile(std::string path, std::string temp_path);
  std::string path_;
  std::string temp_path_;
  std::ofstream stream_;
  bool committed_ = false;
};

}  // namespace libprof::analysis
