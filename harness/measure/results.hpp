// Results files: JSON Lines, one self-contained object per line (docs/results-format.md).
//
//   header   (first line)  tool, build provenance, machine, counters, command line, suite,
//            GPU clock state and CPU governor (read only); "injected" (inject::describe()) only
//            when $CUZK_INJECT_SLOWDOWN was active (harness/measure/inject.hpp)
//   sample   (one per measured repetition)  suite, case, parameters, variant, repetition,
//            warm-up flag, phase records, optional spans for traces, process id, optional
//            environment readings ("env")
//   summary  (last line, absent when the run was killed)  per-phase medians
//
// Every line carries "schema": "cuzk.results", "version": 1 and "type". The writer emits each
// line with one write(2) of the whole line plus '\n', then fsync(2), so a killed run keeps
// every finished line and never leaves a partial one. The reader validates every line and
// throws ResultsError("file:line: what is wrong").
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/measure/counters.hpp"
#include "harness/measure/recorder.hpp"

namespace cuzk {

class InputFile;

constexpr const char* kResultsSchema = "cuzk.results";
constexpr int kResultsVersion = 1;
constexpr const char* kToolName = "cuzk-bench";
constexpr const char* kToolVersion = "0.1.0";
// A GPU phase record's times without gaps (--gpu-activity): optional, all three or none
// (docs/results-format.md).
constexpr const char* kGpuActivityFields[] = {"gpu_kernel_ns", "gpu_copy_ns", "gpu_idle_ns"};

class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- building lines ----
struct HeaderInfo {
  std::string suite;
  std::vector<std::string> command_line;
  std::vector<CounterStatus> counters;  // requested events with availability
  nlohmann::json extra = nlohmann::json::object();  // more header fields (e.g. {"stable": {...}})
};
std::string variant_name();             // the preset, or "custom" when configured by hand
// Also reads the GPU's clock state and the CPU governor (env_header_fields()); only reads.
// Adds "injected" when an injection is active (no key otherwise).
nlohmann::json make_header(const HeaderInfo& info);
// Merges extra's keys into a line (null: nothing); throws ResultsError when extra is neither
// an object nor null, or would replace one of the line's own fields (`what` names the line).
void merge_line_fields(nlohmann::json& line, const nlohmann::json& extra, const std::string& what);
// This process's id in sample lines ("process_id"): 16 lowercase hex digits, random, drawn
// once per process, so that readers can group repetitions by the process that ran them.
const std::string& run_process_id();

struct SampleInfo {
  std::string suite;
  std::string case_name;
  nlohmann::json parameters = nlohmann::json::object();
  std::string variant = {};  // "" -> variant_name()
  int repetition = 0;
  bool warm = false;  // a warm-up repetition (the sample's "warmup" key)
  // The device (GPU index) that ran a phase, by phase path: the phase and every phase under it
  // get "gpu_index" in their records (absent elsewhere). For work spread over devices.
  std::map<std::string, uint32_t> gpu_index = {};
};
nlohmann::json phase_record_json(const PhaseRecord& r);
// The round of an interleaved run (ab, matrix, bisect, calibrate) this process measures, from
// $CUZK_ROUND_ID: a non-negative integer, or nullopt when the variable is unset. A malformed value
// stops the process before any work (exit 2, one line), as a malformed $CUZK_INJECT_SLOWDOWN does.
constexpr const char* kRoundIdEnvVar = "CUZK_ROUND_ID";
std::optional<int64_t> round_id_from_env();
// Parses a $CUZK_ROUND_ID value; throws ResultsError naming the variable when it is not a
// non-negative decimal integer.
int64_t parse_round_id(const std::string& text);
// A sample line; it carries run_process_id(), and "round_id" when round_id_from_env() has one.
// Session adds "env" (harness/measure/env_readings.hpp).
nlohmann::json make_sample(const SampleInfo& info, const Sample& sample, bool with_spans = true);
// Per-phase medians over the non-warm-up samples (sample lines as written).
nlohmann::json make_summary(const std::vector<nlohmann::json>& samples, uint64_t elapsed_ns);
// A "gpu_counters" line: `body` (suite, case, parameters, variant, method, chip, passes, metrics,
// phases) with the schema fields (docs/results-format.md).
nlohmann::json make_gpu_counters_line(const nlohmann::json& body);

// ---- writing ----
class ResultsWriter {
 public:
  enum class Mode { kCreateNew, kOverwrite };
  // Opens (creates) the file now: an unwritable path fails here, before any work runs.
  // kCreateNew refuses an existing file; kOverwrite truncates it. The file is claimed with an
  // exclusive flock until destruction: a file another process writes is refused (ResultsError
  // naming its pid) and left as it was (harness/measure/output_lock.hpp).
  ResultsWriter(const std::string& path, Mode mode = Mode::kCreateNew);
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // One line: a single write(2) of dump + '\n', then fsync. On a failed or short write (a full
  // disk) ResultsError names the file and the errno text; a partial line is cut off (ftruncate
  // back to the last complete line), or, where that fails too, overwritten in place with a
  // marker line {"schema":"cuzk.results","version":1,"type":"torn",...} padded to the torn
  // length (readers report it at its line), so no torn line is left unmarked. Thread-safe.
  // $CUZK_INJECT_FAULT write_* entries simulate these failures (prover/engine/fault.hpp).
  void write(const nlohmann::json& line);
  const std::string& path() const { return path_; }
  size_t lines() const;
  // At destruction, remove the file when it holds at most its header line: a run that failed
  // before its first sample leaves nothing behind that would make --out refuse the path later.
  void drop_if_header_only() { drop_header_only_ = true; }

 private:
  // Cuts a partial line of `torn` bytes at offset_ off, or marks it; returns what was done.
  std::string repair_torn(size_t torn, bool truncate_fails);
  std::string path_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  size_t lines_ = 0;
  bool drop_header_only_ = false;
  mutable std::mutex mu_;
};

// One line as ResultsWriter writes it, without its newline: compact JSON with "schema", "version"
// and "type" first (easier to read with head/grep). For a whole file written at once
// (write_output_file), such as merged rounds.
std::string results_line(const nlohmann::json& line);

// ---- reading ----
struct ResultsLine {
  size_t line = 0;  // 1-based line number in the file
  nlohmann::json value;
};
struct ResultsFile {
  std::string path;
  ResultsLine header;
  std::vector<ResultsLine> samples;
  std::optional<ResultsLine> summary;  // absent when the run did not finish
  std::vector<ResultsLine> gpu_counters;  // "gpu_counters" lines (a counters pass per case)
};

// Limits of the reader (docs/fuzzing.md): a line holds at most kMaxResultsLineBytes and nests
// at most limits::kMaxJsonDepth (64) arrays/objects; the writer's lines are far below both.
constexpr size_t kMaxResultsLineBytes = size_t(16) << 20;

// Validates the whole file; throws ResultsError("path:line: ...") on the first problem. Only
// a regular file is read (prover/interop/input_file.hpp), one line at a time.
ResultsFile read_results(const std::string& path);
// The same from a file already open (read from its first byte).
ResultsFile read_results(InputFile& in);
// The same over text already in memory (`name` is used in messages).
ResultsFile parse_results(const std::string& text, const std::string& name);

}  // namespace cuzk
