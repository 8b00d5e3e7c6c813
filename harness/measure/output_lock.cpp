#include "harness/measure/output_lock.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "harness/measure/output_file.hpp"

namespace cuzk {
namespace {

namespace fs = std::filesystem;

// Attempts at opening and locking a path that its previous holder may be removing meanwhile.
constexpr int kClaimAttempts = 5;

bool same_inode(int fd, const std::string& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The pid a lock file holds (written by FolderClaim), 0 when it holds none.
pid_t pid_in_file(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long v = std::strtol(buf, &end, 10);
  return v > 0 && end != buf ? static_cast<pid_t>(v) : 0;
}

// True when `dir` holds an entry other than the lock file.
bool holds_anything(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool any = false;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != ".." && n != kOutputLockName) {
      any = true;
      break;
    }
  }
  ::closedir(d);
  return any;
}

// `dir` as an absolute path without a trailing separator, so that parent_path() goes up.
fs::path absolute_folder(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();
  return p;
}

std::string not_empty_message(const std::string& flag, const std::string& dir) {
  return fmt::format("{} {} already exists and is not empty: name a new folder (nothing there is replaced)", flag, dir);
}

}  // namespace

bool try_lock_exclusive(int fd) {
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  return rc == 0 || errno != EWOULDBLOCK;
}

pid_t lock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  std::ifstream f("/proc/locks");
  std::string line;
  pid_t by_inode = 0;  // overlay filesystems may report another device than stat(2) does
  while (std::getline(f, line)) {
    // "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10952905 0 EOF"; "1: -> FLOCK ..." is a waiter.
    std::istringstream in(line);
    std::string id, type, mode, access, dev;
    long pid = 0;
    if (!(in >> id >> type) || type == "->") continue;
    if (!(in >> mode >> access >> pid >> dev) || pid <= 0) continue;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (std::sscanf(dev.c_str(), "%x:%x:%llu", &maj, &min, &ino) != 3 || ino != st.st_ino) continue;
    if (maj == major(st.st_dev) && min == minor(st.st_dev)) return static_cast<pid_t>(pid);
    if (!by_inode) by_inode = static_cast<pid_t>(pid);
  }
  return by_inode;
}

std::string claimed_message(const std::string& what, pid_t holder) {
  return holder > 0 ? fmt::format("{} is being written by another cuzk-bench (pid {})", what, holder)
                    : fmt::format("{} is being written by another cuzk-bench", what);
}

void check_not_claimed(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  // Read from /proc/locks, not by taking a lock: a check must never make a real claim fail.
  const pid_t holder = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lock_holder(fd) : 0;
  ::close(fd);
  if (holder > 0 && holder != ::getpid()) throw FileError(claimed_message(what, holder));
}

FolderClaim::FolderClaim(const std::string& dir, const std::string& flag, bool require_empty) : dir_(dir) {
  if (dir.empty()) throw FileError(fmt::format("{} needs a folder name", flag));
  lock_path_ = (fs::path(dir) / kOutputLockName).string();
  const std::string what = fmt::format("{} {}", flag, dir);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw FileError(fmt::format("{} is not a directory", what));
    // Before anything is created in it: a folder in use, or one with files, is refused untouched.
    check_not_claimed(lock_path_, what);
    if (require_empty && holds_anything(dir)) throw FileError(not_empty_message(flag, dir));
  }
  for (int attempt = 0;; ++attempt) {
    if (!fs::is_directory(dir, ec)) {
      // The outermost folder this claim creates: a refused run removes it again.
      fs::path top = absolute_folder(dir);
      while (top.has_parent_path() && top.parent_path() != top && !fs::exists(top.parent_path(), ec))
        top = top.parent_path();
      if (fs::create_directories(dir, ec) && !created_dir_) {
        created_dir_ = true;
        created_top_ = top.string();
      }
      if (ec) throw FileError(fmt::format("{}: cannot create the folder: {}", what, ec.message()));
    }
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      const int e = errno;
      if (e == ENOENT && attempt + 1 < kClaimAttempts) continue;  // the previous holder removed the folder
      throw FileError(fmt::format("{}: cannot write in the folder: {}", what, std::strerror(e)));
    }
    if (!try_lock_exclusive(fd)) {
      pid_t holder = lock_holder(fd);
      if (!holder) holder = pid_in_file(fd);
      ::close(fd);
      created_dir_ = false;  // the holder's folder now, whoever made it
      throw FileError(claimed_message(what, holder));
    }
    if (!same_inode(fd, lock_path_)) {  // its previous holder removed it after we opened it
      ::close(fd);
      if (attempt + 1 < kClaimAttempts) continue;
      throw FileError(fmt::format("{}: the lock file {} keeps being replaced", what, lock_path_));
    }
    fd_ = fd;
    break;
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int e = errno;
    release();
    throw FileError(fmt::format("{}: cannot write {}: {}", what, lock_path_, std::strerror(e)));
  }
  // Another run may have finished in the folder between the check above and the claim.
  if (require_empty && holds_anything(dir)) {
    release();
    throw FileError(not_empty_message(flag, dir));
  }
}

FolderClaim::FolderClaim(FolderClaim&& o) noexcept
    : dir_(std::move(o.dir_)),
      lock_path_(std::move(o.lock_path_)),
      created_top_(std::move(o.created_top_)),
      fd_(o.fd_),
      created_dir_(o.created_dir_) {
  o.fd_ = -1;
  o.created_dir_ = false;
}

FolderClaim& FolderClaim::operator=(FolderClaim&& o) noexcept {
  if (this != &o) {
    release();
    dir_ = std::move(o.dir_);
    lock_path_ = std::move(o.lock_path_);
    created_top_ = std::move(o.created_top_);
    fd_ = o.fd_;
    created_dir_ = o.created_dir_;
    o.fd_ = -1;
    o.created_dir_ = false;
  }
  return *this;
}

void FolderClaim::release() {
  if (fd_ < 0) return;
  // Removed while still locked, so that no one locks the old file after we let go of it.
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
  if (created_dir_) {  // only folders left empty: a refused run leaves none behind
    const fs::path top = created_top_;
    fs::path p = absolute_folder(dir_);
    while (!p.empty() && ::rmdir(p.c_str()) == 0 && p != top) p = p.parent_path();
  }
  created_dir_ = false;
}

}  // namespace cuzk
