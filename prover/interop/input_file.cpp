#include "prover/interop/input_file.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cuzk {
namespace {

// What a stat'ed path is, when it is not a regular file ("" when it is one).
const char* not_regular(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

// The kernel pseudo-filesystems whose files claim to be regular (size 0 or 4096) while a read
// returns whatever the kernel makes up, possibly without end or after a wait.
const char* pseudo_filesystem(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC: return "/proc (procfs)";
    case SYSFS_MAGIC: return "/sys (sysfs)";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC: return "the cgroup filesystem";
    default: return nullptr;
  }
}

std::string errno_text(int e) {
  std::string s = std::strerror(e);
  if (e == ELOOP) s += " (a loop of symbolic links?)";
  return s;
}

}  // namespace

InputFile::InputFile(std::string path, Fail fail) : path_(std::move(path)), fail_(fail) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) refuse(path_ + ": cannot open: " + errno_text(errno));
  if (const char* what = not_regular(st.st_mode); *what) refuse(path_ + " is " + what + ", not a regular file");
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) refuse(path_ + ": cannot open: " + errno_text(errno));
  // The path may have been replaced between stat and open: what counts is what was opened.
  if (::fstat(fd_, &st) != 0) refuse(path_ + ": cannot stat: " + errno_text(errno));
  if (const char* what = not_regular(st.st_mode); *what) refuse(path_ + " is " + what + ", not a regular file");
  if (const char* fs = pseudo_filesystem(fd_))
    refuse(path_ + " is a file of " + fs + ", not a regular file (the kernel makes up its content when read)");
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0) refuse(path_ + ": cannot open: " + errno_text(errno));
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::fail(const std::string& message) const {
  if (fail_) fail_(message);
  throw InputFileError(message);
}

void InputFile::refuse(const std::string& message) {
  if (fd_ >= 0) ::close(fd_);  // the destructor of an object not yet constructed does not run
  fd_ = -1;
  fail(message);
}

bool InputFile::fill() {
  if (offset_ >= size_) return false;
  constexpr size_t kChunk = size_t(1) << 16;
  if (buf_.size() < kChunk) buf_.resize(kChunk);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - offset_));
  ssize_t n;
  do {
    n = ::pread(fd_, buf_.data(), want, static_cast<off_t>(offset_));
  } while (n < 0 && errno == EINTR);
  if (n < 0) fail(path_ + ": read error: " + errno_text(errno));
  if (n == 0) {  // the file shrank since it was opened: its end is here
    size_ = offset_;
    return false;
  }
  pos_ = 0;
  end_ = static_cast<size_t>(n);
  offset_ += static_cast<uint64_t>(n);
  return true;
}

void InputFile::rewind() {
  offset_ = 0;
  pos_ = end_ = 0;
}

std::string InputFile::read_all(uint64_t max_bytes, std::string_view what) {
  if (size_ > max_bytes)
    fail(path_ + " is " + std::to_string(size_) + " bytes, over the limit of " + std::to_string(max_bytes) +
         " bytes for " + std::string(what));
  return read_text();
}

std::string InputFile::read_text() {
  rewind();
  std::string out;
  out.reserve(static_cast<size_t>(size_));
  while (fill()) out.append(buf_.data(), end_);
  pos_ = end_;
  return out;
}

std::vector<uint8_t> InputFile::read_bytes() {
  rewind();
  std::vector<uint8_t> out(static_cast<size_t>(size_));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n;
    do {
      n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(done));
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail(path_ + ": read error: " + errno_text(errno));
    if (n == 0) break;  // the file shrank since it was opened
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  offset_ = done;
  return out;
}

InputFile::Line InputFile::next_line(std::string& line, size_t max_bytes, uint64_t* length) {
  line.clear();
  uint64_t total = 0;
  bool any = false;
  for (;;) {
    if (pos_ == end_ && !fill()) {
      if (!any) return Line::kEnd;
      if (length) *length = total;
      return total > max_bytes ? Line::kTooLong : Line::kUnterminated;
    }
    any = true;
    const char* start = buf_.data() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    const size_t n = nl ? static_cast<size_t>(nl - start) : end_ - pos_;
    total += n;
    // Past the limit the line is only counted, so a huge line costs no memory.
    if (total <= max_bytes) line.append(start, n);
    else line.clear();
    pos_ += n + (nl ? 1 : 0);
    if (nl) {
      if (length) *length = total;
      return total > max_bytes ? Line::kTooLong : Line::kLine;
    }
  }
}

}  // namespace cuzk
