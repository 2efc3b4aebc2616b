// The training program as a user runs it: `examples/llama` is started, SIGKILLed at a random
// moment after its first checkpoint, and started again with the same command line. The second
// process resumes from the latest committed step and ends with exactly the uninterrupted run's
// params and optimizer state (the final checkpoint's safetensors files are byte-identical);
// the progress lines of the steps it reran show the uninterrupted run's losses. Sync and async
// checkpoints alternate over the trials.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/examples/llama/process_util.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 30;

std::string program() { return llama_program(); }

std::vector<std::string> command_line(const std::string& dump, const std::string& data,
                                      bool async) {
  std::vector<std::string> args = tiny_command_line(dump, data, kSteps);
  args.insert(args.end(), {"--lr_scheduler.warmup_steps=3", "--metrics.enable_tensorboard=false",
                           "--checkpoint.enable=true", "--checkpoint.interval=2",
                           "--checkpoint.keep_latest_k=2",
                           std::string("--checkpoint.async_mode=") + (async ? "async" : "disabled")});
  return args;
}

pid_t start(const std::vector<std::string>& args, const std::string& log) {
  return start_process(args, log);
}

// "step  k/30 | loss x.xxxx" of every progress line, by step.
std::map<int, std::string> step_losses(const std::string& log) {
  std::map<int, std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) != 0) continue;
    const size_t bar = line.find('|');
    const size_t bar2 = line.find('|', bar + 1);
    out[std::atoi(line.c_str() + 5)] = line.substr(0, bar2);
  }
  return out;
}

bool any_committed(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (fs::exists(e.path() / "_COMMITTED")) return true;
  }
  return false;
}

// Polls until the process's first checkpoint under `ckpt` is committed (true) or the process
// exits first (false; its wait status in *status).
bool wait_for_first_commit(pid_t pid, const fs::path& ckpt, int* status) {
  for (;;) {
    if (::waitpid(pid, status, WNOHANG) == pid) return false;
    if (any_committed(ckpt)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(ProcessResumeTest, KilledRunRestartedWithTheSameCommandEndsBitForBit) {
  ASSERT_TRUE(fs::exists(program())) << program();
  const std::string data = fresh_test_dir("process_data");
  const std::string full = fresh_test_dir("process_full");
  fs::create_directories(full);
  const std::string full_log = full + "/stdout.txt";
  // Kill points are drawn from the first 60% of the time a whole run spends after its first
  // commit, whatever this machine's speed and however long start-up (data preparation, jit
  // and LLVM compiles) takes.
  const pid_t full_pid = start(command_line(full, data, false), full_log);
  ASSERT_GT(full_pid, 0);
  int full_status = 0;
  const bool full_running =
      wait_for_first_commit(full_pid, fs::path(full) / "checkpoint", &full_status);
  const auto first_commit = std::chrono::steady_clock::now();
  if (full_running) full_status = wait_for(full_pid);
  ASSERT_TRUE(WIFEXITED(full_status) && WEXITSTATUS(full_status) == 0) << read_file(full_log);
  const int64_t window_us =
      std::max<int64_t>(1000, std::chrono::duration_cast<std::chrono::microseconds>(
                                  std::chrono::steady_clock::now() - first_commit)
                                      .count() *
                                  6 / 10);
  const auto full_steps = step_losses(read_file(full_log));
  ASSERT_EQ(full_steps.size(), static_cast<size_t>(kSteps)) << read_file(full_log);
  const fs::path full_final = fs::path(full) / "checkpoint" / std::to_string(kSteps);

  std::mt19937 rng(std::random_device{}());
  constexpr int kTrials = 4;
  int resumed_mid_run = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const bool async = trial % 2 == 1;
    const std::string dump = fresh_test_dir("process_trial_" + std::to_string(trial));
    fs::create_directories(dump);
    const auto args = command_line(dump, data, async);
    const pid_t pid = start(args, dump + "/stdout_killed.txt");
    ASSERT_GT(pid, 0);
    // Kill at a random moment after the first checkpoint is committed.
    const fs::path ckpt = fs::path(dump) / "checkpoint";
    int status = 0;
    const bool running = wait_for_first_commit(pid, ckpt, &status);
    const int64_t delay_us = static_cast<int64_t>(rng() % static_cast<uint64_t>(window_us));
    if (running) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      ::kill(pid, SIGKILL);
      status = wait_for(pid);
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + (async ? " async" : " sync") + ", killed " +
                 std::to_string(delay_us) + " us after the first commit");
    ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) != 0)
        << read_file(dump + "/stdout_killed.txt");

    const std::string log_path = dump + "/stdout_resumed.txt";
    ASSERT_EQ(wait_for(start(args, log_path)), 0) << read_file(log_path);
    const std::string log = read_file(log_path);
    const size_t at = log.find("checkpoint: resumed from step ");
    ASSERT_NE(at, std::string::npos) << log;
    const int from = std::atoi(log.c_str() + at + 30);
    EXPECT_GE(from, 2);
    EXPECT_LE(from, kSteps);
    resumed_mid_run += from < kSteps;
    // The steps the second process ran print the uninterrupted run's losses...
    const auto steps = step_losses(log);
    EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps - from));
    for (const auto& [step, text] : steps) {
      EXPECT_GT(step, from);
      EXPECT_EQ(text, full_steps.at(step));
    }
    // ...and it ends with exactly the same params and optimizer state.
    const fs::path final_dir = ckpt / std::to_string(kSteps);
    for (const char* item : {"params.safetensors", "opt_state.safetensors"}) {
      const std::string got = read_file(final_dir / item);
      EXPECT_FALSE(got.empty()) << final_dir / item;
      EXPECT_TRUE(got == read_file(full_final / item)) << item << " differs";
    }
  }
  EXPECT_GE(resumed_mid_run, kTrials / 2);  // most kills land before the run's end
}

}  // namespace
}  // namespace graft::llama_train
