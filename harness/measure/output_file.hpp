// Files the CLI reads and writes on the user's behalf (proofs, keys, traces, reports, gate
// verdicts, calibration outputs), checked before any work and written so that nothing already
// there is lost:
//  - an output is written to a temporary file in its own folder, fsync'ed and renamed over the
//    target only when complete, so the target holds the old or the new content, never a part;
//  - rename(2) replaces only a regular file or a missing path: a device, FIFO or socket is
//    written in place (as root, renaming over /dev/full would replace the device node), and a
//    directory is refused;
//  - several outputs of one command are all-or-nothing as far as the filesystem allows: all are
//    written to temporaries first, then renamed in turn.
// Results JSON Lines files have their own writer (harness/measure/results.hpp): not these.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuzk {

// A path the user can fix: a missing or unreadable input, an output that exists, a folder that
// cannot be written. The CLI reports it as bad input (exit 2).
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks that `path` is a file that can be read. Throws FileError "<path> is a directory" or
// "cannot open <path>: <strerror>" (prefixed with "<flag> " when `flag` is given).
void check_input_file(const std::string& path, const char* flag = nullptr);

// Checks, before any work, that `path` can be written as an output: a directory is refused; an
// existing regular file is refused unless `force` (the message names `flag` and --force); its
// folder must exist and be writable. An existing device or FIFO is accepted (written in place).
void check_output_file(const std::string& path, const char* flag, bool force);

// True when `a` and `b` name the same file: the same inode when both exist, else the same
// absolute path once symbolic links and "." / ".." are resolved.
bool same_file(const std::string& a, const std::string& b);

// One path of a command with the flag that gave it (for messages), e.g. {"--proof", "p.json"}.
struct NamedPath {
  std::string flag, path;
};
// Throws FileError when an output names the same file as an input ("would replace its input")
// or as another output ("two outputs are the same file"). Empty paths are ignored.
void check_distinct(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

// Creates folder `dir` (and its parents) if needed and checks that it can be written.
// Throws FileError naming `flag` and the reason.
void ensure_output_dir(const std::string& dir, const char* flag);

// Writes `content` to `path` as described above. Throws FileError naming the path and the
// reason, e.g. "cannot write /dev/full: No space left on device".
void write_output_file(const std::string& path, std::string_view content);

// Appends one line (a newline is added) to a log such as bisect.jsonl with one write(2), then
// fsync(2). Throws FileError naming the path and the reason (a full disk is never silent).
void append_output_line(const std::string& path, std::string_view line);

// Several outputs, all or nothing: add() writes each to a temporary beside its target, commit()
// renames them into place (devices and FIFOs are written then). Temporaries not committed are
// removed by the destructor, so a failure leaves every target as it was.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();
  void add(const std::string& path, std::string_view content);
  void commit();

 private:
  struct Staged {
    std::string path, tmp;  // tmp empty: a special file, written in place at commit
    std::string content;    // kept only for special files
  };
  std::vector<Staged> staged_;
};

}  // namespace cuzk
