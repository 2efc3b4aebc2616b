// Crash safety: a child process saves steps back to back (crash_child) and is SIGKILLed at a
// random moment; then a fresh manager must find a committed latest step that restores to
// exactly crash_items(step), and no temporary directory may survive the reopen. Repeated over
// many trials on the same directory, alternating sync and async saves.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "checkpoint/manager.h"
#include "tests/checkpoint/crash_common.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;

// Entries a crash left behind: temporary dirs and step dirs without _COMMITTED (the lock
// file stays).
int leftovers(const std::string& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name == kLockFile) continue;
    if (name.find(".orbax-checkpoint-tmp-") != std::string::npos ||
        !fs::exists(e.path() / kCommitFile)) {
      ++n;
    }
  }
  return n;
}

TEST(CrashSafety, KilledSaverLeavesARestorableLatestStep) {
  const std::string child = testing::crash_child_path();
  ASSERT_TRUE(fs::exists(child)) << child;
  const std::string dir = testing::fresh_dir("crash");
  std::mt19937 rng(20261130);
  const int kTrials = 60;
  int committed_trials = 0, interrupted = 0;
  int64_t last_latest = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const char* async = trial % 2 ? "1" : "0";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(ready[1], 1);
      ::close(ready[0]);
      ::execl(child.c_str(), child.c_str(), dir.c_str(), async, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1) << "child did not start";
    ::close(ready[0]);
    // Each save takes a few ms: delays up to 40 ms after the child is ready land inside
    // writes, between rename and commit, inside retention deletes and between saves.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited by itself with " << WEXITSTATUS(status);

    interrupted += leftovers(dir) > 0;
    auto mgr = CheckpointManager::open(dir, {.enable_async = false});
    ASSERT_TRUE(mgr.ok()) << mgr.status();
    EXPECT_EQ(leftovers(dir), 0);
    std::optional<int64_t> latest = (*mgr)->latest_step();
    if (!latest) continue;
    ++committed_trials;
    EXPECT_GE(*latest, last_latest);  // committed steps are never lost
    last_latest = *latest;
    testing::CrashState want = testing::crash_state(*latest);
    auto got = (*mgr)->restore(*latest, {{"params", Item::tree(want.params)},
                                         {"opt", Item::tree(want.opt)},
                                         {"loader", Item::json(nullptr)}});
    ASSERT_TRUE(got.ok()) << "trial " << trial << " step " << *latest << ": " << got.status();
    auto params = got->at("params").as<std::vector<Array>>();
    auto opt = got->at("opt").as<std::map<std::string, Array>>();
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(testing::same_bytes(params[i], want.params[i])) << "step " << *latest;
    }
    EXPECT_TRUE(testing::same_bytes(opt["mu"], want.opt["mu"]));
    EXPECT_TRUE(testing::same_bytes(opt["count"], want.opt["count"]));
    EXPECT_EQ(got->at("loader").json_value()["offset"], *latest * 17);
  }
  std::printf(
      "crash trials: %d, with a committed step: %d, kills that left a partial save: %d, "
      "final latest step: %lld\n",
      kTrials, committed_trials, interrupted, static_cast<long long>(last_latest));
  // Loose bounds (the machine may be loaded): progress was made and kills did land mid-save.
  EXPECT_GE(committed_trials, 10);
  EXPECT_GE(interrupted, 3);
}

}  // namespace
}  // namespace graft::checkpoint
