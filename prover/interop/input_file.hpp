// Opening an input file for reading: a regular file only, and every read bounded by its size.
//
// A FIFO, a device (/dev/zero), a directory, a socket, a file of a kernel pseudo-filesystem
// (/proc, /sys: "regular" files whose size says nothing of what a read returns) and a loop of
// symbolic links are refused before anything is read, with one message naming the path and what
// it is: reading one could block forever or never end. The path is stat'ed first (following
// links), then opened with O_NONBLOCK (opening a FIFO that appeared meanwhile must not wait for
// a writer), checked again with fstat and fstatfs, and only then switched back to blocking reads.
// Reads stop at the size fstat gave when the file was opened. docs/fuzzing.md#limits lists the
// size limits of each reader.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuzk {

class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws E(message): pass throw_as<ReaderError> to InputFile so that its refusals reach the CLI
// as that reader's own error.
template <class E>
[[noreturn]] void throw_as(const std::string& message) {
  throw E(message);
}

class InputFile {
 public:
  // Must throw; InputFileError is thrown where it returns or is null.
  using Fail = void (*)(const std::string& message);

  // Opens `path` after the checks above; every refusal goes through `fail`.
  explicit InputFile(std::string path, Fail fail = nullptr);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // The file's size when it was opened; no read goes beyond it.
  uint64_t size() const { return size_; }

  // The whole file, when it holds at most max_bytes (checked from fstat before anything is
  // read); else a refusal "PATH is N bytes, over the limit of M bytes for WHAT".
  std::string read_all(uint64_t max_bytes, std::string_view what);
  // The whole file (size() bytes), for a format bounded only by the file itself.
  std::string read_text();
  // The whole file as bytes (size() of them).
  std::vector<uint8_t> read_bytes();

  enum class Line {
    kLine,          // a line, without its '\n'
    kUnterminated,  // the file's last bytes, which have no '\n'
    kTooLong,       // a line of more than max_bytes: skipped; *length gets its length
    kEnd,           // nothing left
  };
  // Reads the next line into `line`, never holding more than max_bytes of it.
  Line next_line(std::string& line, size_t max_bytes, uint64_t* length = nullptr);
  // Back to the first byte (after next_line or read_all).
  void rewind();

 private:
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void refuse(const std::string& message);  // fail() from the constructor
  // Refills buf_ from the file; false at the end (size_ reached, or the file shrank).
  bool fill();

  std::string path_;
  Fail fail_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;  // file offset of buf_'s end
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
};

}  // namespace cuzk
