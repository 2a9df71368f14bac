// The probe's parsers and its /proc reader, on text captured from the real servers' formats and
// on a /proc tree made in a temp dir. The SQL sources against real servers are covered by
// tests/integration/probe_test.cc.
#include "coordinator/db_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/harness/scratch_dir.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

double ValueOf(const std::vector<ProbeValue>& values, const std::string& name) {
  for (const ProbeValue& value : values) {
    if (value.name == name) return value.value;
  }
  ADD_FAILURE() << "no value named " << name;
  return -1;
}

const ProbeValue* Find(const std::vector<ProbeValue>& values, const std::string& name) {
  for (const ProbeValue& value : values) {
    if (value.name == name) return &value;
  }
  return nullptr;
}

TEST(ParseNameValueRowsTest, ReadsCountersAndGaugesOfPostgres) {
  std::vector<ProbeValue> out;
  ASSERT_TRUE(ParseNameValueRows({"xact_commit=41", "connections=3", "database_size_bytes=7.5e6"},
                                 "postgresql", out)
                  .ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].source, "postgresql");
  EXPECT_FALSE(out[0].gauge);
  EXPECT_EQ(out[0].value, 41);
  EXPECT_TRUE(out[1].gauge);
  EXPECT_TRUE(out[2].gauge);
  EXPECT_EQ(out[2].value, 7.5e6);
}

TEST(ParseNameValueRowsTest, SpellsMySqlNamesAsDocumented) {
  // information_schema.GLOBAL_STATUS answers in capitals.
  std::vector<ProbeValue> out;
  ASSERT_TRUE(ParseNameValueRows({"COM_SELECT=10", "THREADS_RUNNING=2"}, "mysql", out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "Com_select");
  EXPECT_FALSE(out[0].gauge);
  EXPECT_EQ(out[1].name, "Threads_running");
  EXPECT_TRUE(out[1].gauge);
}

TEST(ParseNameValueRowsTest, RefusesMalformedRowsAndKeepsNothing) {
  std::vector<ProbeValue> out;
  absl::Status status = ParseNameValueRows({"a=1", "b=x"}, "postgresql", out);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("\"b=x\""));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(ParseNameValueRows({"=1"}, "postgresql", out).ok());
  EXPECT_FALSE(ParseNameValueRows({"novalue"}, "postgresql", out).ok());
}

// The header and rows as HAProxy 2.6 prints them (columns trimmed after the ones used).
constexpr char kShowStat[] =
    "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,"
    "wredis,status\n"
    "postgres,FRONTEND,,,3,5,2000,120,1,2,0,0,4,,,,,OPEN\n"
    "postgres,pg1,0,0,3,5,,120,1,2,,0,,1,2,0,0,UP\n"
    "postgres,BACKEND,2,0,3,5,200,120,1,2,0,0,,1,2,0,0,UP\n"
    "mariadb,FRONTEND,,,1,1,2000,7,1,2,0,0,0,,,,,OPEN\n"
    "mariadb,my1,0,0,1,1,,7,1,2,,0,,0,0,0,0,DOWN\n"
    "mariadb,BACKEND,0,0,1,1,200,7,1,2,0,0,,5,0,0,0,UP\n"
    "\n";

TEST(ParseHaproxyStatTest, SumsFrontendsBackendsAndServers) {
  std::vector<ProbeValue> out;
  ASSERT_TRUE(ParseHaproxyStat(kShowStat, out).ok());
  EXPECT_EQ(ValueOf(out, "sessions"), 127);
  EXPECT_EQ(ValueOf(out, "current_sessions"), 4);
  EXPECT_EQ(ValueOf(out, "request_errors"), 4);
  EXPECT_EQ(ValueOf(out, "queue"), 2);
  EXPECT_EQ(ValueOf(out, "connection_errors"), 6);
  EXPECT_EQ(ValueOf(out, "response_errors"), 2);
  EXPECT_EQ(ValueOf(out, "servers_up"), 1);
  EXPECT_TRUE(Find(out, "queue")->gauge);
  EXPECT_FALSE(Find(out, "sessions")->gauge);
}

TEST(ParseHaproxyStatTest, RefusesWhatIsNotShowStat) {
  std::vector<ProbeValue> out;
  EXPECT_FALSE(ParseHaproxyStat("Unknown command\n", out).ok());
  EXPECT_FALSE(ParseHaproxyStat("# pxname,svname\npg,FRONTEND\n", out).ok());
  EXPECT_FALSE(ParseHaproxyStat(
                   "# pxname,svname,qcur,scur,stot,ereq,econ,eresp,status\npg,FRONTEND,1\n", out)
                   .ok());
  EXPECT_TRUE(out.empty());
}

TEST(ParseProcStatTest, CountsFieldsAfterTheCommandName) {
  // A command name with spaces and a parenthesis must not shift the fields.
  absl::StatusOr<ProcStat> stat = ParseProcStat(
      "4242 (postgres: bench (x)) S 4200 4200 4200 0 -1 4194560 1 0 0 0 170 30 12 8 20 0 1 0 "
      "100 1000 10 18446744073709551615\n");
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->ppid, 4200);
  EXPECT_EQ(stat->own_ticks, 200u);
  EXPECT_EQ(stat->children_ticks, 20u);
  EXPECT_FALSE(ParseProcStat("garbage").ok());
  EXPECT_FALSE(ParseProcStat("1 (x) S 1 2").ok());
}

// A /proc of made-up processes.
class FakeProc {
 public:
  void Add(int pid, int ppid, int own_ticks, int children_ticks, int pss_kb) {
    const std::string dir = std::to_string(pid);
    dir_.Write(dir + "/stat", absl::StrCat(pid, " (postgres) S ", ppid, " 1 1 0 -1 0 0 0 0 0 ",
                                           own_ticks, " 0 ", children_ticks, " 0 20 0 1 0\n"));
    dir_.Write(dir + "/smaps_rollup",
               absl::StrCat("00400000-ffffffff ---p 00000000 00:00 0 [rollup]\nRss: 99999 kB\nPss: ",
                            pss_kb, " kB\n"));
  }
  const std::string& root() const { return dir_.path(); }

 private:
  testing::ScratchDir dir_{"dbload-proc"};
};

TEST(ProcessProbeSourceTest, SumsTheServerAndItsChildrenOnly) {
  FakeProc proc;
  proc.Add(100, 1, 50, 30, 1000);  // the postmaster; 30 ticks of reaped backends
  proc.Add(101, 100, 10, 0, 200);  // a backend
  proc.Add(102, 100, 5, 0, 300);   // another
  proc.Add(200, 1, 999, 0, 5000);  // someone else's process
  proc.Add(103, 101, 7, 0, 400);   // a grandchild: not the server's (PostgreSQL has none)
  ProcessProbeSource source(100, proc.root());
  std::vector<ProbeValue> out;
  ASSERT_TRUE(source.Read(out).ok());
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(ValueOf(out, "cpu_seconds"), (50 + 30 + 10 + 5) * tick);
  EXPECT_EQ(ValueOf(out, "rss_bytes"), (1000 + 200 + 300) * 1024.0);
  EXPECT_EQ(ValueOf(out, "processes"), 3);
  EXPECT_TRUE(Find(out, "rss_bytes")->gauge);
  EXPECT_FALSE(Find(out, "cpu_seconds")->gauge);
}

TEST(ProcessProbeSourceTest, FailsWhenTheServerIsGone) {
  FakeProc proc;
  ProcessProbeSource source(100, proc.root());
  std::vector<ProbeValue> out;
  EXPECT_FALSE(source.Read(out).ok());
  EXPECT_TRUE(out.empty());
}

// A clock that moves on by `step` each time it is read: a memory read then takes one step.
class TickingClock final : public Clock {
 public:
  explicit TickingClock(Nanos step) : step_(step) {}
  Nanos Now() override { return now_ += step_; }
  void SleepUntil(Nanos deadline) override { now_ = std::max(now_, deadline); }

 private:
  Nanos step_;
  Nanos now_ = 0;
};

// Pss costs a page-table walk per process (seconds under load): it is read only while that
// stays within kMemoryShare of the time, and a reading without it lacks rss_bytes rather than
// repeating an old value. CPU time is in every reading.
TEST(ProcessProbeSourceTest, ReadsMemoryOnlyWithinItsShareOfTheTime) {
  ASSERT_EQ(ProcessProbeSource::kMemoryShare, 0.01);
  FakeProc proc;
  proc.Add(100, 1, 50, 0, 1000);
  proc.Add(101, 100, 10, 0, 200);
  TickingClock clock(100 * kMillisecond);
  ProcessProbeSource source(100, proc.root(), &clock);
  std::vector<int> readings_with_memory;
  for (int i = 0; i < 120; ++i) {
    std::vector<ProbeValue> out;
    ASSERT_TRUE(source.Read(out).ok());
    EXPECT_NE(Find(out, "cpu_seconds"), nullptr) << "reading " << i;
    const ProbeValue* rss = Find(out, "rss_bytes");
    if (rss != nullptr) {
      EXPECT_EQ(rss->value, 1200 * 1024.0);
      readings_with_memory.push_back(i);
    }
  }
  // The first read starts at 0.1 s and takes 0.1 s: the next one no sooner than 10.1 s, the
  // clock's 101st reading (the reads without memory read it once each, at 0.3 s … 10.0 s).
  EXPECT_EQ(readings_with_memory, std::vector<int>({0, 99}));
}

// The probe stamps a reading when its first source (the database's) answered: a slow source
// after it must not move the time the database's counters are attributed to.
TEST(DatabaseProbeTest, AReadingIsStampedWhenTheDatabaseAnswered) {
  SimulatedClock clock(7 * kSecond);
  class Answering final : public ProbeSource {
   public:
    explicit Answering(SimulatedClock& clock, Nanos takes) : clock_(clock), takes_(takes) {}
    std::string name() const override { return "postgresql"; }
    absl::Status Read(std::vector<ProbeValue>& out) override {
      clock_.SleepUntil(clock_.Now() + takes_);  // no thread attached: time just moves on
      out.push_back({.source = name(), .name = "xact_commit", .value = 1, .gauge = false});
      return absl::OkStatus();
    }

   private:
    SimulatedClock& clock_;
    Nanos takes_;
  };
  std::mutex mu;
  std::condition_variable read;
  bool got = false;
  DatabaseProbe probe(
      clock,
      [&]() -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
        std::vector<std::unique_ptr<ProbeSource>> sources;
        sources.push_back(std::make_unique<Answering>(clock, 20 * kMillisecond));
        sources.push_back(std::make_unique<Answering>(clock, 30 * kSecond));  // /proc, slow
        return sources;
      },
      {.interval = kSecond,
       .on_reading =
           [&] {
             std::lock_guard lock(mu);
             got = true;
             read.notify_all();
           },
       .thread_start = {},
       .thread_end = {}});
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(read.wait_for(lock, std::chrono::seconds(10), [&] { return got; }));
  }
  probe.Stop();
  const std::vector<ProbeReading> readings = probe.TakeReadings();
  ASSERT_FALSE(readings.empty());
  EXPECT_EQ(readings[0].at, 7 * kSecond + 20 * kMillisecond);
  EXPECT_EQ(readings[0].values.size(), 2u);
}

TEST(HaproxyProbeSourceTest, NamesTheSocketItCannotReach) {
  HaproxyProbeSource source("/nonexistent/haproxy.sock");
  std::vector<ProbeValue> out;
  absl::Status status = source.Read(out);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/haproxy.sock"));
}

// A source that reads a counter, as a server that may be down would.
class FlakySource final : public ProbeSource {
 public:
  explicit FlakySource(std::atomic<bool>& down) : down_(down) {}
  std::string name() const override { return "mysql"; }
  absl::Status Read(std::vector<ProbeValue>& out) override {
    if (down_.load()) return absl::UnavailableError("cannot connect");
    out.push_back({.source = "mysql", .name = "Questions", .value = 1, .gauge = false});
    return absl::OkStatus();
  }

 private:
  std::atomic<bool>& down_;
};

// A reading asked for `after` some time comes no sooner (the run rereads while its sessions
// leave the database), and of two requests pending the earlier stands: a later one neither
// postpones it nor is lost behind the hour-long interval.
TEST(DatabaseProbeTest, ARequestedReadingComesWhenAskedAndTheEarlierRequestStands) {
  SteadyClock clock;
  std::mutex mu;
  std::condition_variable read;
  int readings = 0;
  std::atomic<bool> down = false;
  DatabaseProbe probe(clock,
                      [&]() -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
                        std::vector<std::unique_ptr<ProbeSource>> sources;
                        sources.push_back(std::make_unique<FlakySource>(down));
                        return sources;
                      },
                      {.interval = 3600 * kSecond,
                       .on_reading =
                           [&] {
                             std::lock_guard lock(mu);
                             ++readings;
                             read.notify_all();
                           },
                       .thread_start = {},
                       .thread_end = {}});
  auto wait_readings = [&](int count) {
    std::unique_lock lock(mu);
    return read.wait_for(lock, std::chrono::seconds(10), [&] { return readings >= count; });
  };
  ASSERT_TRUE(wait_readings(1));  // the first, at once
  const auto asked = std::chrono::steady_clock::now();
  probe.RequestReading(std::chrono::milliseconds(200));
  probe.RequestReading(std::chrono::hours(1));
  ASSERT_TRUE(wait_readings(2));
  EXPECT_GE(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(200));
  probe.RequestReading(std::chrono::hours(1));
  probe.RequestReading();
  ASSERT_TRUE(wait_readings(3));
  probe.Stop();
}

// The coordinator reports the probe's error as the probe has it now: after a server restart the
// first successful reading clears "cannot connect" (the probe opens its sources again).
TEST(DatabaseProbeTest, ASuccessfulReadingAfterAnOutageClearsTheError) {
  std::atomic<bool> down = false;
  std::atomic<int> opened = 0;
  SteadyClock clock;
  DatabaseProbe probe(
      clock,
      [&]() -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
        ++opened;
        if (down.load()) return absl::UnavailableError("cannot connect to the server");
        std::vector<std::unique_ptr<ProbeSource>> sources;
        sources.push_back(std::make_unique<FlakySource>(down));
        return sources;
      },
      {.interval = 5 * kMillisecond, .on_reading = {}, .thread_start = {}, .thread_end = {}});
  auto wait_for = [&](auto condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return condition();
  };
  ASSERT_TRUE(wait_for([&] { return probe.up(); }));
  down = true;
  ASSERT_TRUE(wait_for([&] { return !probe.up() && !probe.error().empty(); }));
  EXPECT_THAT(probe.error(), HasSubstr("cannot connect"));
  const int opened_while_down = opened.load();
  down = false;
  ASSERT_TRUE(wait_for([&] { return probe.up(); }));
  EXPECT_EQ(probe.error(), "");
  EXPECT_GT(opened.load(), opened_while_down) << "the sources were not opened again";
  probe.Stop();
  EXPECT_FALSE(probe.TakeReadings().empty());
}

}  // namespace
}  // namespace dbload
