#include "harness/measure/session.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <fstream>

#include "harness/measure/clock.hpp"
#include "harness/measure/gpu_activity.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/process.hpp"

namespace cuzk {

std::vector<std::string> own_command_line() {
  std::vector<std::string> args;
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string a;
  while (std::getline(f, a, '\0')) args.push_back(a);
  return args;
}

std::string default_results_path(const std::string& prefix) {
  ::mkdir("results", 0755);
  ::mkdir("results/local", 0755);
  return fmt::format("results/local/{}-{}-{}.jsonl", prefix, utc_stamp(), ::getpid());
}

Session::Session(const SessionOptions& o) {
  // A duet member (duet.hpp) says so in its header: side, round, the CPUs it had.
  duet_ = duet::Member::from_env();
  nlohmann::json header_extra = o.header_extra;
  if (duet_) header_extra["duet"] = duet_->header();
  RecorderOptions ro;
  ro.counters = counters_from(o.counters, o.default_counters);
  ro.spans = o.spans;
  recorder_ = std::make_unique<Recorder>(ro);
  gpu_activity_ = o.gpu_activity;
  // Sim counters (under callgrind) describe the simulation: caches, arithmetic paths.
  nlohmann::json sim_header = recorder_->sim_header();
  // Built before the file is created, so that bad header_extra leaves no empty file behind.
  nlohmann::json header = make_header({o.suite, own_command_line(), recorder_->counter_status(), header_extra});
  if (!sim_header.is_null()) merge_line_fields(header, {{"sim", sim_header}}, "header");
  writer_ = std::make_unique<ResultsWriter>(o.out.empty() ? default_results_path(o.suite) : o.out,
                                            o.overwrite ? ResultsWriter::Mode::kOverwrite : ResultsWriter::Mode::kCreateNew);
  writer_->drop_if_header_only();
  t0_ = now_ns();
  writer_->write(header);
  if (interrupt::installed())
    interrupt::set_last_words([this](int sig) { finish_interrupted(sig, measuring_ ? "discarded" : "none"); });
}

Session::~Session() {
  if (interrupt::installed()) interrupt::set_last_words({});
  recorder_->uninstall();
}

void Session::write_sample(const nlohmann::json& line) {
  std::lock_guard lk(mu_);
  if (finished_) throw ResultsError(fmt::format("{}: a sample after the summary line", writer_->path()));
  writer_->write(line);
  samples_.push_back(line);
}

nlohmann::json Session::measure(const SampleInfo& info, const std::function<void()>& fn) {
  interrupt::check();  // a stop requested between samples: nothing is in flight
  // Both sides of a duet start each sample together; the wait is outside the sample.
  if (duet_) duet_->arrive_and_wait();
  measuring_ = true;
  struct Done {
    std::atomic<bool>& f;
    ~Done() { f = false; }
  } done{measuring_};
  recorder_->install();
  if (gpu_activity_) gpu_activity_->attach();  // wraps the recorder: install order matters
  // The probe's own readings stay outside the sample's wall time (take_sample starts it).
  env_.begin();
  recorder_->take_sample();  // drop anything recorded between samples
  const uint64_t start_ns = now_ns();
  try {
    fn();
  } catch (...) {
    if (gpu_activity_) gpu_activity_->detach();
    recorder_->uninstall();
    throw;
  }
  Sample s = recorder_->take_sample();
  const uint64_t end_ns = now_ns();
  nlohmann::json env = env_.end();
  // After the sample's times were taken: the flush and the attribution are not measured.
  if (gpu_activity_) {
    gpu_activity_->detach();
    const std::string warning = apply_gpu_activity(s, gpu_activity_->take());
    if (!warning.empty()) fmt::print(stderr, "[{}] {}\n", info.case_name, warning);
  }
  recorder_->uninstall();
  nlohmann::json line = make_sample(info, s, recorder_->options().spans);
  line["env"] = std::move(env);
  merge_line_fields(line, sample_fields_, "sample");
  if (duet_) line["duet"] = duet_->sample_fields(start_ns, end_ns);
  write_sample(line);
  // A stop requested while this sample ran: it is complete and kept; the run ends here.
  interrupt::check();
  return line;
}

nlohmann::json Session::record(const SampleInfo& info, const Sample& sample, const nlohmann::json& extra) {
  nlohmann::json line = make_sample(info, sample, recorder_->options().spans);
  line["env"] = EnvProbe::point_in_time();
  for (auto& [k, v] : extra.items()) line[k] = v;
  merge_line_fields(line, sample_fields_, "sample");
  write_sample(line);
  return line;
}

void Session::write_gpu_counters(const nlohmann::json& body) { writer_->write(make_gpu_counters_line(body)); }

nlohmann::json Session::finish(const nlohmann::json& extra) {
  std::lock_guard lk(mu_);
  nlohmann::json summary = make_summary(samples_, now_ns() - t0_);
  merge_line_fields(summary, extra, "summary");
  if (!finished_) writer_->write(summary);
  finished_ = true;
  return summary;
}

nlohmann::json Session::finish_interrupted(int sig, const std::string& in_flight, nlohmann::json extra) {
  extra["interrupted"] = {{"signal", interrupt::signal_name(sig)}, {"exit_code", interrupt::exit_code(sig)},
                          {"in_flight", in_flight}};
  return finish(extra);
}

void print_summary_table(const nlohmann::json& summary, const std::vector<CounterStatus>& counters) {
  std::vector<std::string> shown;
  for (const auto& c : counters)
    if (c.available) shown.push_back(c.name);
  std::string head = fmt::format("{:<34} {:>3} {:>11} {:>11} {:>11}", "phase", "n", "median ms", "min ms", "max ms");
  for (const auto& n : shown) head += fmt::format(" {:>18}", n);
  fmt::print("{}\n", head);
  if (!summary.contains("phases")) return;
  for (auto& [path, p] : summary["phases"].items()) {
    std::string row = fmt::format("{:<34} {:>3} {:>11.3f} {:>11.3f} {:>11.3f}", path, p.value("n", uint64_t(0)),
                                  p.value("median_wall_ns", uint64_t(0)) / 1e6, p.value("min_wall_ns", uint64_t(0)) / 1e6,
                                  p.value("max_wall_ns", uint64_t(0)) / 1e6);
    for (const auto& n : shown) {
      const nlohmann::json v = p.contains("median_counters") ? p["median_counters"].value(n, nlohmann::json(nullptr))
                                                             : nlohmann::json(nullptr);
      row += v.is_null() ? fmt::format(" {:>18}", "null") : fmt::format(" {:>18}", v.get<int64_t>());
    }
    fmt::print("{}\n", row);
  }
  for (const auto& c : counters)
    if (!c.available) fmt::print("counter {}: null ({})\n", c.name, c.reason);
}

}  // namespace cuzk
