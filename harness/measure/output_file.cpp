#include "harness/measure/output_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace cuzk {
namespace {

std::string flagged(const char* flag, const std::string& path) {
  return flag && *flag ? fmt::format("{} {}", flag, path) : path;
}

// The folder a new file at `path` would go into ("." for a bare name).
std::string folder_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// "missing", "regular", "directory" or "special" (device, FIFO, socket): what rename(2) may replace.
enum class PathKind { kMissing, kRegular, kDirectory, kSpecial };
PathKind kind_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return PathKind::kMissing;  // a dangling link is replaced too
  if (S_ISREG(st.st_mode)) return PathKind::kRegular;
  if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
  return PathKind::kSpecial;
}

void write_all(int fd, std::string_view content, const std::string& path, const std::string& cleanup) {
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      if (!cleanup.empty()) ::unlink(cleanup.c_str());
      throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(e)));
    }
    off += size_t(n);
  }
}

// A device or FIFO: written in place, never replaced (no O_CREAT, no rename).
void write_special(const std::string& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  write_all(fd, content, path, "");
  if (::close(fd) != 0) throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

// Writes `content` to a new temporary beside `path` (fsync'ed); returns its name.
std::string write_temporary(const std::string& path, std::string_view content) {
  const std::string base = fs::path(path).filename().string();
  std::string tmpl = folder_of(path) + "/." + base + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  const std::string tmp(buf.data());
  write_all(fd, content, path, tmp);
  // mkstemp makes the file 0600; an output is as readable as any file the user creates.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(e)));
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(e)));
  }
  return tmp;
}

}  // namespace

void check_input_file(const std::string& path, const char* flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw FileError(fmt::format("cannot open {}: {}", flagged(flag, path), std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw FileError(fmt::format("{} is a directory, not a file", flagged(flag, path)));
  if (::access(path.c_str(), R_OK) != 0)
    throw FileError(fmt::format("cannot open {}: {}", flagged(flag, path), std::strerror(errno)));
}

void check_output_file(const std::string& path, const char* flag, bool force) {
  if (path.empty()) throw FileError(fmt::format("{} needs a file name", flag));
  switch (kind_of(path)) {
    case PathKind::kDirectory:
      throw FileError(fmt::format("{} {} is a directory, not a file", flag, path));
    case PathKind::kRegular:
      if (!force) throw FileError(fmt::format("{} {} exists (pass --force to replace it)", flag, path));
      break;
    case PathKind::kSpecial:
      return;  // written in place; its folder (e.g. /dev) need not be writable
    case PathKind::kMissing:
      break;
  }
  const std::string dir = folder_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw FileError(fmt::format("{} {}: cannot write in {}: {}", flag, path, dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) throw FileError(fmt::format("{} {}: {} is not a directory", flag, path, dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw FileError(fmt::format("{} {}: cannot write in {}: {}", flag, path, dir, std::strerror(errno)));
}

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return ca == cb;
}

void check_distinct(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& o = outputs[i];
    if (o.path.empty() || kind_of(o.path) == PathKind::kSpecial) continue;  // /dev/null twice is fine
    for (const NamedPath& in : inputs)
      if (same_file(o.path, in.path))
        throw FileError(fmt::format("{} {} is the same file as {} {}: writing it would replace the input", o.flag,
                                    o.path, in.flag, in.path));
    for (size_t j = 0; j < i; ++j)
      if (same_file(o.path, outputs[j].path))
        throw FileError(fmt::format("{} and {} name the same file {}: one output would overwrite the other",
                                    outputs[j].flag, o.flag, o.path));
  }
}

void ensure_output_dir(const std::string& dir, const char* flag) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw FileError(fmt::format("{} {}: cannot create the folder: {}", flag, dir, ec.message()));
  if (!fs::is_directory(dir, ec)) throw FileError(fmt::format("{} {} is not a directory", flag, dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw FileError(fmt::format("{} {}: cannot write in the folder: {}", flag, dir, std::strerror(errno)));
}

void write_output_file(const std::string& path, std::string_view content) {
  OutputFiles out;
  out.add(path, content);
  out.commit();
}

void append_output_line(const std::string& path, std::string_view line) {
  std::string s(line);
  s.push_back('\n');
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  ssize_t n;
  do {
    n = ::write(fd, s.data(), s.size());
  } while (n < 0 && errno == EINTR);
  const int e = n < 0 ? errno : ENOSPC;  // a short write to a regular file: the disk filled up
  const bool ok = n == static_cast<ssize_t>(s.size()) && ::fsync(fd) == 0;
  const int sync_errno = errno;
  ::close(fd);
  if (!ok)
    throw FileError(fmt::format("cannot write {}: {}", path, std::strerror(n == static_cast<ssize_t>(s.size()) ? sync_errno : e)));
}

OutputFiles::~OutputFiles() {
  for (const Staged& s : staged_)
    if (!s.tmp.empty()) ::unlink(s.tmp.c_str());
}

void OutputFiles::add(const std::string& path, std::string_view content) {
  if (fs::path(path).filename().empty()) throw FileError(fmt::format("{} names a folder, not a file", path));
  switch (kind_of(path)) {
    case PathKind::kDirectory:
      throw FileError(fmt::format("cannot write {}: it is a directory", path));
    case PathKind::kSpecial:
      staged_.push_back({path, "", std::string(content)});
      return;
    default:
      staged_.push_back({path, write_temporary(path, content), ""});
  }
}

void OutputFiles::commit() {
  // Special files first: they are the ones likely to fail (a full device, a FIFO nobody reads)
  // and cannot be undone, while no regular target has been replaced yet.
  for (Staged& s : staged_)
    if (s.tmp.empty()) write_special(s.path, s.content);
  for (Staged& s : staged_) {
    if (s.tmp.empty()) continue;
    if (::rename(s.tmp.c_str(), s.path.c_str()) != 0)
      throw FileError(fmt::format("cannot write {}: {}", s.path, std::strerror(errno)));  // ~OutputFiles removes tmp
    s.tmp.clear();
  }
  staged_.clear();
}

}  // namespace cuzk
