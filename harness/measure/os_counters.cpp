// OS counters per phase: see os_counters.hpp.
#include "harness/measure/os_counters.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cuzk::os_counters {
namespace {

enum Field { kMinflt, kMajflt, kNvcsw, kNivcsw, kUtime, kStime, kMaxrss, kRchar, kWchar, kReadBytes, kWriteBytes };

bool is_io(int f) { return f >= kRchar; }

int64_t tv_ns(const timeval& tv) { return static_cast<int64_t>(tv.tv_sec) * 1000000000 + tv.tv_usec * 1000; }

// The value of "key: N" in /proc/self/io's text; -1 when absent.
int64_t io_field(const char* text, const char* key) {
  const char* p = std::strstr(text, key);
  if (!p) return -1;
  return std::strtoll(p + std::strlen(key), nullptr, 10);
}

}  // namespace

const std::vector<Info>& all() {
  static const std::vector<Info> v = {
      {"os::minflt", "faults", "getrusage(RUSAGE_SELF)", "minor page faults (a page mapped without I/O: first touch of fresh memory)"},
      {"os::majflt", "faults", "getrusage(RUSAGE_SELF)", "major page faults (a page read from storage)"},
      {"os::nvcsw", "switches", "getrusage(RUSAGE_SELF)", "voluntary context switches (waits: locks, I/O, GPU synchronization)"},
      {"os::nivcsw", "switches", "getrusage(RUSAGE_SELF)", "involuntary context switches (preempted: more runnable threads than cores)"},
      {"os::utime_ns", "ns", "getrusage(RUSAGE_SELF)", "user CPU time of all threads"},
      {"os::stime_ns", "ns", "getrusage(RUSAGE_SELF)", "system (kernel) CPU time of all threads: page faults, pinning, copies"},
      {"os::maxrss_kib", "KiB", "getrusage(RUSAGE_SELF)", "growth of the peak resident set size"},
      {"os::rchar", "bytes", "/proc/self/io", "bytes read by read-like system calls (including from the page cache)"},
      {"os::wchar", "bytes", "/proc/self/io", "bytes written by write-like system calls"},
      {"os::read_bytes", "bytes", "/proc/self/io", "bytes fetched from storage"},
      {"os::write_bytes", "bytes", "/proc/self/io", "bytes sent to storage"},
  };
  return v;
}

const std::vector<std::string>& defaults() {
  static const std::vector<std::string> v = {"os::minflt", "os::majflt",   "os::nvcsw",    "os::nivcsw",
                                             "os::utime_ns", "os::stime_ns", "os::maxrss_kib"};
  return v;
}

bool is_os_name(const std::string& name) { return name.rfind(kPrefix, 0) == 0; }

const Info* find(const std::string& name) {
  for (const auto& i : all())
    if (name == i.name) return &i;
  return nullptr;
}

Reader::Reader(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    int f = -1;
    for (size_t i = 0; i < all().size(); ++i)
      if (n == all()[i].name) f = static_cast<int>(i);
    field_.push_back(f);
    error_.push_back(f < 0 ? "not an OS counter" : "");
    need_rusage_ = need_rusage_ || (f >= 0 && !is_io(f));
    need_io_ = need_io_ || (f >= 0 && is_io(f));
  }
  if (need_io_) {
    io_fd_ = ::open("/proc/self/io", O_RDONLY | O_CLOEXEC);
    if (io_fd_ < 0) {
      const std::string why = fmt::format("/proc/self/io: {} (a kernel without task I/O accounting)", std::strerror(errno));
      for (size_t i = 0; i < field_.size(); ++i)
        if (field_[i] >= 0 && is_io(field_[i])) error_[i] = why;
      need_io_ = false;
    }
  }
}

Reader::~Reader() {
  if (io_fd_ >= 0) ::close(io_fd_);
}

bool Reader::read(std::vector<int64_t>& out, std::string& error) {
  rusage ru{};
  if (need_rusage_ && ::getrusage(RUSAGE_SELF, &ru) != 0) {
    error = fmt::format("getrusage: {}", std::strerror(errno));
    return false;
  }
  char io[512] = {};
  if (need_io_) {
    const ssize_t n = ::pread(io_fd_, io, sizeof io - 1, 0);
    if (n <= 0) {
      error = fmt::format("/proc/self/io: {}", n < 0 ? std::strerror(errno) : "empty");
      return false;
    }
  }
  out.clear();
  for (size_t i = 0; i < field_.size(); ++i) {
    if (!error_[i].empty()) continue;
    switch (field_[i]) {
      case kMinflt: out.push_back(ru.ru_minflt); break;
      case kMajflt: out.push_back(ru.ru_majflt); break;
      case kNvcsw: out.push_back(ru.ru_nvcsw); break;
      case kNivcsw: out.push_back(ru.ru_nivcsw); break;
      case kUtime: out.push_back(tv_ns(ru.ru_utime)); break;
      case kStime: out.push_back(tv_ns(ru.ru_stime)); break;
      case kMaxrss: out.push_back(ru.ru_maxrss); break;
      case kRchar: out.push_back(io_field(io, "rchar: ")); break;
      case kWchar: out.push_back(io_field(io, "wchar: ")); break;
      case kReadBytes: out.push_back(io_field(io, "read_bytes: ")); break;
      case kWriteBytes: out.push_back(io_field(io, "write_bytes: ")); break;
      default: break;
    }
  }
  return true;
}

}  // namespace cuzk::os_counters
