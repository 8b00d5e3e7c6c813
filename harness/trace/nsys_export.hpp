// The rows of an `nsys export --type sqlite` file that trace-diff uses (docs/trace-diff.md): the
// NVTX ranges, the CUDA runtime calls, and the kernels, copies and memsets they launched.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::trace {

// Bad input (not SQLite, truncated, a table or column missing, an unknown schema version, no
// NVTX range): one line that names the file.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The export schema's major version this reader follows, and the versions it was written
// against (docs/trace-diff.md#schema).
constexpr int kSchemaMajor = 3;
constexpr const char* kSchemaKnown = "3.x (written against 3.17.2, the exporter of Nsight Systems in CUDA 12.9; checked on 3.20.3, Nsight Systems 2025.3.2)";

// NVTX_EVENTS.eventType of push/pop and start/end ranges.
constexpr int kNvtxPushPopRange = 59;
constexpr int kNvtxStartEndRange = 60;
// NVTX_EVENTS.eventType of a domain's creation (its text is the domain's name), and the domain
// the harness opens its phase ranges in (harness/measure/nvtx.hpp, docs/nsys.md).
constexpr int kNvtxDomainCreate = 75;
constexpr const char* kNvtxDomain = "cuzk";

// CUPTI_ACTIVITY_MEMCPY_KIND and CUPTI_ACTIVITY_MEMORY_KIND values (cupti_activity.h).
constexpr int kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyPtoP = 10;
constexpr int kMemPageable = 1, kMemPinned = 2, kMemDevice = 3;

struct Range {
  int64_t start = 0, end = 0, global_tid = 0;
  std::string text;
};

struct RuntimeCall {
  int64_t start = 0, end = 0, global_tid = 0, correlation = 0;
};

enum class ActivityKind { kernel, memcpy, memset };

struct Activity {
  ActivityKind kind = ActivityKind::kernel;
  int64_t start = 0, end = 0, device = 0, stream = 0, correlation = 0;
  int64_t global_pid = -1;  // where the table has globalPid; -1 otherwise
  std::string name;  // kernels: the demangled name as exported (or mangled where that is all there is)
  std::array<int64_t, 3> grid{}, block{};
  int64_t registers = 0, static_smem = 0, dynamic_smem = 0;
  int copy_kind = 0, src_kind = 0, dst_kind = 0;  // copies
  int64_t bytes = 0;                              // copies and memsets
};

struct Export {
  std::string path, schema_version;
  std::string nvtx_domain;  // "cuzk" when only that domain's ranges were read; "" when the trace has no such domain (all ranges)
  std::vector<Range> ranges;
  std::vector<RuntimeCall> calls;
  std::vector<Activity> activities;
};

// False where cuzk-bench was built without SQLite: read_nsys_export then throws saying so.
bool sqlite_available();
// Reads one export; throws TraceError on any bad input.
Export read_nsys_export(const std::string& path);
// Every *.sqlite in folder `dir`, by name; throws TraceError naming `flag` (the option that gave
// the folder) when it is not a folder or holds none.
std::vector<std::string> sqlite_files_in(const std::string& dir, const std::string& flag);

}  // namespace cuzk::trace
