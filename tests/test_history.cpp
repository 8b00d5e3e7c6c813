// The results history's store (harness/history/store.hpp, docs/history.md): ingest, idempotence,
// malformed and killed ingests, migrations, and the same series from SQLite and PostgreSQL.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/history/changes.hpp"
#include "harness/history/store.hpp"
#include "harness/measure/results.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
namespace h = cuzk::history;

namespace {

// A results file of `commit` whose phases are `factor` times the synthetic defaults.
void write_commit(const std::string& path, const std::string& commit, double factor, uint64_t seed) {
  cuzk::test::SynthSpec s;
  s.seed = seed;
  s.reps = 8;
  s.slowdown = {{"proof", factor}, {"proof/synth", factor}};
  s.edit_header = [commit](nlohmann::json& hdr) {
    hdr["provenance"]["git_commit"] = commit;
    hdr["provenance"]["git_dirty"] = false;
  };
  cuzk::test::write_synth(path, s);
}

int64_t count(h::Db& db, const std::string& table) {
  return db.query("SELECT count(*) FROM " + table)[0].integer(0);
}

// A PostgreSQL server in a temporary folder, on a unix socket only (no TCP), stopped by the
// destructor. initdb refuses to run as root: then the server runs as the `postgres` user.
class PgServer {
 public:
  PgServer() {
    bin_ = find_bin();
    if (bin_.empty()) {
      why_ = "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): install postgresql";
      return;
    }
    const bool root = geteuid() == 0;
    std::string as;
    if (root) {
      if (cuzk::testing::run_command("id -u postgres").status != 0) {
        why_ = "running as root and there is no postgres user to run the server as";
        return;
      }
      as = "runuser -u postgres -- ";
      cuzk::testing::run_command("chown postgres '" + dir_.path() + "' && chmod 755 '" + dir_.path() + "'");
      user_ = "postgres";
    } else {
      user_ = cuzk::testing::run_command("id -un").output;
      while (!user_.empty() && user_.back() == '\n') user_.pop_back();
    }
    as_ = as;
    port_ = 20000 + static_cast<int>(getpid() % 20000);
    auto init = cuzk::testing::run_command(as + "'" + bin_ + "/initdb' -D '" + dir_.file("data") + "' -A trust -U " + user_ +
                                         " --no-sync");
    if (init.status != 0) {
      why_ = "initdb failed: " + init.output.substr(0, 300);
      return;
    }
    auto start = cuzk::testing::run_command(as + "'" + bin_ + "/pg_ctl' -D '" + dir_.file("data") + "' -l '" +
                                          dir_.file("log") + "' -w -t 60 -o \"-k '" + dir_.path() +
                                          "' -c listen_addresses='' -p " + std::to_string(port_) + " -F\" start");
    if (start.status != 0) {
      why_ = "pg_ctl start failed: " + start.output.substr(0, 300) + cuzk::test::slurp(dir_.file("log")).substr(0, 300);
      return;
    }
    running_ = true;
  }
  ~PgServer() {
    if (running_)
      cuzk::testing::run_command(as_ + "'" + bin_ + "/pg_ctl' -D '" + dir_.file("data") + "' -m immediate -w stop");
  }
  bool running() const { return running_; }
  const std::string& why_not() const { return why_; }
  std::string url() const {
    return "postgresql:///postgres?host=" + dir_.path() + "&port=" + std::to_string(port_) + "&user=" + user_;
  }

 private:
  static std::string find_bin() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec))
      if (std::filesystem::exists(e.path() / "bin" / "initdb")) return (e.path() / "bin").string();
    return {};
  }
  TempDir dir_;
  std::string bin_, why_, user_, as_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace

TEST_CASE("ingest stores every measured sample once; a second ingest adds nothing") {
  TempDir d;
  write_commit(d.file("a.jsonl"), "aaaa", 1.0, 1);
  auto db = h::open_db(d.file("h.sqlite"));
  auto first = h::ingest(*db, {d.file("a.jsonl")}, {});
  REQUIRE(first.size() == 1);
  CHECK(first[0].added);
  CHECK(first[0].samples == 9);  // 8 measured + 1 warm-up
  CHECK(count(*db, "samples") == 9);
  const auto measurements = count(*db, "measurements");
  CHECK(measurements == static_cast<int64_t>(first[0].measurements));
  auto again = h::ingest(*db, {d.file("a.jsonl")}, {});
  CHECK_FALSE(again[0].added);
  CHECK(again[0].why == "already in the history (same content)");
  CHECK(count(*db, "samples") == 9);
  CHECK(count(*db, "measurements") == measurements);
  CHECK(h::schema_version(*db) == h::kSchemaVersion);
}

TEST_CASE("a GPU phase's kernel, copy and idle times are kept beside its event time") {
  TempDir d;
  cuzk::test::SynthSpec s;
  s.reps = 4;
  s.edit_sample = [](nlohmann::json& sample, int rep) {
    auto& m = sample["phases"]["proof/prove/msm_h"];
    m["gpu_kernel_ns"] = 15'000'000 + rep;
    m["gpu_copy_ns"] = 100;
    m["gpu_idle_ns"] = 900;
  };
  s.edit_header = [](nlohmann::json& hdr) {
    hdr["provenance"]["git_commit"] = "kkkk";
    hdr["provenance"]["git_dirty"] = false;
  };
  cuzk::test::write_synth(d.file("k.jsonl"), s);
  auto db = h::open_db(d.file("h.sqlite"));
  (void)h::ingest(*db, {d.file("k.jsonl")}, {.branch = "main", .repo = ""});
  h::SeriesFilter f;
  f.phase = "proof/prove/msm_h";
  for (const char* m : {"gpu_kernel_ns", "gpu_copy_ns", "gpu_idle_ns"}) {
    INFO(m);
    f.metric = m;
    const auto series = h::read_series(*db, f);
    REQUIRE(series.size() == 1);
    REQUIRE(series[0].points.size() == 1);
    CHECK(series[0].points[0].samples == 4);  // the measured samples; the warm-up has none
  }
  f.metric = "gpu_kernel_ns";
  CHECK(h::read_series(*db, f)[0].points[0].median == Approx(15'000'001.5));
  // A phase without them has none.
  f.phase = "proof";
  CHECK(h::read_series(*db, f).empty());
}

TEST_CASE("a malformed file is refused with its line, and nothing of it is stored") {
  TempDir d;
  write_commit(d.file("good.jsonl"), "aaaa", 1.0, 1);
  write_commit(d.file("bad.jsonl"), "bbbb", 1.0, 2);
  auto lines = cuzk::test::lines_of(cuzk::test::slurp(d.file("bad.jsonl")));
  lines[4] = lines[4].substr(0, lines[4].size() / 2);  // a torn sample in the middle
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  cuzk::test::spit(d.file("bad.jsonl"), text);
  auto db = h::open_db(d.file("h.sqlite"));
  try {
    (void)h::ingest(*db, {d.file("good.jsonl"), d.file("bad.jsonl")}, {});
    FAIL("a torn line was ingested");
  } catch (const cuzk::ResultsError& e) {
    CHECK(std::string(e.what()).find(d.file("bad.jsonl") + ":5:") == 0);
  }
  CHECK(count(*db, "files") == 1);  // good.jsonl, whole; bad.jsonl, nothing
  CHECK(count(*db, "samples") == 9);
  // The CLI says the same in one line, exit 2.
  auto r = cuzk::test::run_bench("history ingest --db h2.sqlite bad.jsonl", d.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.jsonl:5:") != std::string::npos);
  CHECK(r.err.find("nothing of that file was stored") != std::string::npos);
}

TEST_CASE("an ingest killed midway leaves a consistent store that the next ingest completes") {
  TempDir d;
  cuzk::test::SynthSpec big;
  big.reps = 3000;
  big.edit_header = [](nlohmann::json& hdr) { hdr["provenance"]["git_commit"] = "cccc"; };
  cuzk::test::write_synth(d.file("big.jsonl"), big);
  const std::string cmd =
      "cd '" + d.path() + "' && exec '" + cuzk::test::bench() + "' history ingest --db h.sqlite big.jsonl >/dev/null 2>&1";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once the store exists (the ingest is under way) or after 20 s at most.
  for (int i = 0; i < 2000 && !cuzk::test::exists(d.file("h.sqlite-wal")); ++i) usleep(10000);
  usleep(50000);
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  auto db = h::open_db(d.file("h.sqlite"));
  CHECK(db->query("PRAGMA integrity_check")[0].text(0) == "ok");
  const auto files = count(*db, "files");
  CHECK(files <= 1);
  // Either the whole file or nothing of it: no sample without its file.
  CHECK(count(*db, "samples") == files * 3001);
  auto r = cuzk::test::run_bench("history ingest --db h.sqlite big.jsonl", d.path());
  CHECK(r.code == 0);
  CHECK(count(*db, "files") == 1);
  CHECK(count(*db, "samples") == 3001);
}

TEST_CASE("an older store is migrated, its rows kept") {
  TempDir d;
  write_commit(d.file("a.jsonl"), "aaaa", 1.0, 1);
  auto db = h::open_db(d.file("h.sqlite"));
  h::migrate(*db, 1);
  CHECK(h::schema_version(*db) == 1);
  CHECK(db->query("SELECT name FROM sqlite_master WHERE name = 'change_points'").empty());
  // A version-1 store with data: ingest's own migrate() runs first, so fill it by hand.
  db->query("INSERT INTO files (content_hash, path, kind, samples, ingested_utc) VALUES ('x', 'p', 'results', 0, 't')");
  h::migrate(*db, 2);
  CHECK(h::schema_version(*db) == 2);
  CHECK(db->query("SELECT name FROM sqlite_master WHERE name = 'commit_failures'").empty());
  h::migrate(*db);
  CHECK(h::schema_version(*db) == h::kSchemaVersion);
  CHECK(count(*db, "files") == 1);
  CHECK(count(*db, "change_points") == 0);
  CHECK(count(*db, "commit_failures") == 0);
  // A store newer than this build is refused, not damaged.
  db->query("INSERT INTO schema_version (version) VALUES (?)", {int64_t(h::kSchemaVersion + 1)});
  CHECK_THROWS_AS(h::migrate(*db), h::DbError);
}

TEST_CASE("show: one point per commit in commit order, its median and CI") {
  TempDir d;
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    files.push_back(d.file("c" + std::to_string(i) + ".jsonl"));
    write_commit(files.back(), "commit" + std::to_string(i), i >= 2 ? 1.10 : 1.0, 10 + i);
  }
  auto db = h::open_db(d.file("h.sqlite"));
  (void)h::ingest(*db, files, {.branch = "main", .repo = ""});
  h::SeriesFilter f;
  f.phase = "proof";
  auto series = h::read_series(*db, f);
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points.size() == 4);
  CHECK(series[0].points[0].commit == "commit0");
  CHECK(series[0].points[3].commit == "commit3");
  CHECK(series[0].points[3].samples == 8);  // warm-ups left out
  CHECK(series[0].points[3].median / series[0].points[0].median == Approx(1.10).epsilon(0.03));
  CHECK(series[0].points[0].ci_low <= series[0].points[0].median);
  CHECK(series[0].points[0].ci_high >= series[0].points[0].median);
  f.since = "commit2";
  CHECK(h::read_series(*db, f)[0].points.size() == 2);
  f.branch = "other";
  f.since.clear();
  CHECK(h::read_series(*db, f).empty());
  auto r = cuzk::test::run_bench("history show --db h.sqlite --phase proof --csv", d.path());
  CHECK(r.code == 0);
  CHECK(cuzk::test::lines_of(r.out).size() == 5);  // header + 4 points
}

TEST_CASE("commits that share a committer date are ordered by their place in the history") {
  TempDir d;
  // Four commits made in one second (as a rebase or a script makes them), ingested newest first,
  // then the store read back: the points follow the history, not the sha or the ingestion.
  const std::string repo = d.file("repo");
  std::filesystem::create_directories(repo);
  auto git = [&](const std::string& cmd) {
    auto r = cuzk::testing::run_command("cd '" + repo + "' && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
                                        "GIT_COMMITTER_EMAIL=t@t GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' "
                                        "GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' " + cmd);
    REQUIRE(r.status == 0);
    return r.output.substr(0, 40);
  };
  git("git init -q .");
  std::vector<std::string> shas;
  for (int i = 0; i < 4; ++i) shas.push_back(git("git commit -q --allow-empty -m c" + std::to_string(i) + " && git rev-parse HEAD"));
  std::vector<std::string> files;
  for (int i = 3; i >= 0; --i) {
    files.push_back(d.file("c" + std::to_string(i) + ".jsonl"));
    write_commit(files.back(), shas[static_cast<size_t>(i)], 1.0, 40 + static_cast<uint64_t>(i));
  }
  auto db = h::open_db(d.file("h.sqlite"));
  SECTION("the checkout is known at ingestion") { (void)h::ingest(*db, files, {.branch = "", .repo = repo}); }
  SECTION("a store ingested without it learns the order at a later ingestion") {
    (void)h::ingest(*db, files, {.branch = "", .repo = ""});
    write_commit(d.file("again.jsonl"), shas[3], 1.0, 99);
    (void)h::ingest(*db, {d.file("again.jsonl")}, {.branch = "", .repo = repo});
  }
  h::SeriesFilter f;
  f.phase = "proof";
  const auto series = h::read_series(*db, f);
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].points.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    INFO(i);
    CHECK(series[0].points[i].commit == shas[i]);
    CHECK(series[0].points[i].commit_seq == static_cast<int64_t>(i + 1));
  }
}

TEST_CASE("the median's CI holds the order statistics the binomial gives") {
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  // n = 20: P(Bin(20, 1/2) <= 5) = 0.0207 <= 0.025 < P(<= 6): ranks 6 and 15.
  auto [lo, hi] = h::median_ci(v);
  CHECK(lo == 6);
  CHECK(hi == 15);
  CHECK(std::isnan(h::median_ci({1, 2, 3}).first));
}

TEST_CASE("the same history read from SQLite and PostgreSQL gives identical series and change points") {
  PgServer pg;
  if (!pg.running()) {
    WARN("SKIPPED: PostgreSQL part of the history tests: " << pg.why_not());
    return;
  }
  TempDir d;
  // 20 commits, proof and proof/synth 8% slower from the 10th on: a change point to compare.
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) {
    files.push_back(d.file(fmt::format("c{:02}.jsonl", i)));
    write_commit(files.back(), fmt::format("commit{:02}", i), i >= 10 ? 1.08 : 1.0, 20 + static_cast<uint64_t>(i));
  }
  auto lite = h::open_db(d.file("h.sqlite"));
  auto post = h::open_db(pg.url());
  for (auto* db : {lite.get(), post.get()}) {
    auto r = h::ingest(*db, files, {});
    CHECK(r.size() == 20);
    CHECK_FALSE(h::ingest(*db, files, {})[0].added);
  }
  h::SeriesFilter f;
  const auto a = h::read_series(*lite, f), b = h::read_series(*post, f);
  REQUIRE(a.size() == b.size());
  REQUIRE_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].phase == b[i].phase);
    REQUIRE(a[i].points.size() == b[i].points.size());
    for (size_t k = 0; k < a[i].points.size(); ++k) {
      CHECK(a[i].points[k].commit == b[i].points[k].commit);
      CHECK(a[i].points[k].median == b[i].points[k].median);
      CHECK(a[i].points[k].values == b[i].points[k].values);
    }
  }
  // The same change points, ids, segments, ratios and statuses, recorded in each store.
  const auto ca = h::analyse_history(*lite, f, h::ChangePointOptions{}, true);
  const auto cb = h::analyse_history(*post, f, h::ChangePointOptions{}, true);
  REQUIRE(ca.size() == cb.size());
  size_t changes = 0;
  for (size_t i = 0; i < ca.size(); ++i) {
    REQUIRE(ca[i].changes.size() == cb[i].changes.size());
    for (size_t k = 0; k < ca[i].changes.size(); ++k) {
      const auto &x = ca[i].changes[k], &y = cb[i].changes[k];
      CHECK(x.change.id == y.change.id);
      CHECK(x.change.index == y.change.index);
      CHECK(x.change.ratio == y.change.ratio);
      CHECK(x.change.p_value == y.change.p_value);
      CHECK(x.status == y.status);
      ++changes;
    }
  }
  CHECK(changes >= 2);  // proof and proof/synth at commit10
  // The CLI reaches the server too.
  auto r = cuzk::test::run_bench("history show --db '" + pg.url() + "' --phase proof --json", d.path());
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).size() == 1);
}

namespace {

// 20 commits of `case c1`, proof 8% slower from commit 10 on (or no shift), ingested into h.sqlite.
void planted_history(const TempDir& d, double shift, int commits = 20, int first = 0) {
  std::vector<std::string> files;
  for (int i = first; i < first + commits; ++i) {
    files.push_back(d.file(fmt::format("c{:02}.jsonl", i)));
    write_commit(files.back(), fmt::format("commit{:02}", i), i >= 10 ? shift : 1.0, 100 + i);
  }
  auto db = h::open_db(d.file("h.sqlite"));
  (void)h::ingest(*db, files, {});
}

}  // namespace

TEST_CASE("history changes: a planted regression is new once, exit 1, until acknowledged") {
  TempDir d;
  planted_history(d, 1.08);
  auto r = cuzk::test::run_bench("history changes --db h.sqlite --phase proof --json", d.path());
  INFO(r.err);
  CHECK(r.code == 1);
  const auto js = nlohmann::json::parse(r.out);
  REQUIRE(js.size() == 1);
  CHECK(js[0]["after"] == "commit10");
  CHECK(js[0]["status"] == "new");
  CHECK(js[0]["ratio"].get<double>() == Approx(1.08).epsilon(0.02));
  CHECK(js[0]["ratio_low"].get<double>() < js[0]["ratio"].get<double>());
  const std::string id = js[0]["id"];
  // More points: the same change, the same id, still one alert.
  planted_history(d, 1.08, 5, 20);
  auto again = cuzk::test::run_bench("history changes --db h.sqlite --phase proof --json", d.path());
  const auto js2 = nlohmann::json::parse(again.out);
  REQUIRE(js2.size() == 1);
  CHECK(js2[0]["id"] == id);
  // --since after the change: not newer, exit 0.
  CHECK(cuzk::test::run_bench("history changes --db h.sqlite --phase proof --since commit15", d.path()).code == 0);
  CHECK(cuzk::test::run_bench("history changes --db h.sqlite --ack " + id, d.path()).code == 0);
  auto acked = cuzk::test::run_bench("history changes --db h.sqlite --phase proof --json", d.path());
  CHECK(acked.code == 0);
  CHECK(nlohmann::json::parse(acked.out)[0]["status"] == "acknowledged");
  auto unknown = cuzk::test::run_bench("history changes --db h.sqlite --ack cp-0000", d.path());
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("no change point cp-0000") != std::string::npos);
}

TEST_CASE("the dashboard renders in a headless browser with its charts and the planted change") {
  TempDir d;
  planted_history(d, 1.08);
  auto r = cuzk::test::run_bench("history dashboard --db h.sqlite -o dash --commit-url 'https://example.org/c/{sha}'",
                                 d.path());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string html = cuzk::test::slurp(d.file("dash/index.html"));
  CHECK(html.find("<svg class=\"trend\"") != std::string::npos);
  CHECK(html.find("https://example.org/c/commit10") != std::string::npos);
  CHECK(html.find("git checkout commit10") != std::string::npos);  // the reproduce command
  if (cuzk::testing::run_command("command -v chromium").status != 0) {
    WARN("SKIPPED: the headless-browser part of the dashboard test: no chromium (install chromium)");
    return;
  }
  const std::string browser = "timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr "
                              "--v=0 --user-data-dir='" + d.file("profile") + "' ";
  auto dom = cuzk::testing::run_command(browser + "--dump-dom 'file://" + d.file("dash/index.html") + "' 2>'" +
                                        d.file("browser.err") + "'");
  REQUIRE(dom.status == 0);
  const std::string err = cuzk::test::slurp(d.file("browser.err"));
  INFO(err);
  CHECK(err.find("CONSOLE") == std::string::npos);  // no console message, no uncaught error
  // Rendered: one chart per series, the change marked as a regression in the proof series.
  size_t charts = 0;
  for (size_t at = dom.output.find("<svg class=\"trend\""); at != std::string::npos;
       at = dom.output.find("<svg class=\"trend\"", at + 1))
    ++charts;
  CHECK(charts >= 4);
  CHECK(dom.output.find("class=\"change regression\"") != std::string::npos);
  CHECK(dom.output.find("<table id=\"changes\">") != std::string::npos);
  auto shot = cuzk::testing::run_command(browser + "--window-size=1100,1400 --screenshot='" + d.file("shot.png") +
                                         "' 'file://" + d.file("dash/index.html") + "' 2>/dev/null");
  CHECK(shot.status == 0);
  CHECK(std::filesystem::file_size(d.file("shot.png")) > 10000);
  // docs/history.md shows this screenshot: CUZK_DASHBOARD_SCREENSHOT=docs/img/history-dashboard.png refreshes it.
  if (const char* keep = std::getenv("CUZK_DASHBOARD_SCREENSHOT"))
    std::filesystem::copy_file(d.file("shot.png"), keep, std::filesystem::copy_options::overwrite_existing);
}
