// The training program as a user stops it: the real examples/llama binary gets SIGTERM (or
// SIGINT) mid-run, finishes the step it is in, commits a checkpoint of it, says where, and
// exits with 128 + signal; started again it resumes from that step. A second signal exits
// at once, without a checkpoint. And a model far too big for memory fails with a message
// naming the size after printing the config and the estimate, instead of std::bad_alloc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/examples/llama/process_util.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> command_line(const std::string& dump, const std::string& data,
                                      int64_t steps, int64_t dim) {
  std::vector<std::string> args = tiny_command_line(dump, data, steps, dim);
  args.insert(args.end(), {"--metrics.enable_tensorboard=false",
                           "--checkpoint.enable=true",
                           // only the signal's checkpoint (and a run's end)
                           "--checkpoint.interval=100000", "--checkpoint.keep_latest_k=2"});
  return args;
}

// The highest step of the progress lines ("step     12/100000 | ..."), 0 if none.
int last_step(const std::string& log) {
  int last = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) == 0) last = std::max(last, std::atoi(line.c_str() + 5));
  }
  return last;
}

// Polls the log until it has a progress line of step >= `step` (true), or the process exits
// or two minutes pass (false).
bool wait_for_step(pid_t pid, const std::string& log, int step, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, status, WNOHANG) == pid) return false;
    if (last_step(read_file(log)) >= step) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  wait_for(pid);
  return false;
}

// The step of "stopped by <name> after step N", or -1.
int stopped_step(const std::string& log, const std::string& name) {
  const std::string key = "stopped by " + name + " after step ";
  const size_t at = log.find(key);
  return at == std::string::npos ? -1 : std::atoi(log.c_str() + at + key.size());
}

void expect_graceful_stop(int sig, const std::string& name) {
  const std::string data = fresh_test_dir("signal_data");
  const std::string dump = fresh_test_dir("signal_" + name);
  fs::create_directories(dump);
  const std::string log = dump + "/stdout.txt";
  const pid_t pid = start_process(command_line(dump, data, 100000, 32), log, dump + "/err.txt");
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_TRUE(wait_for_step(pid, log, 3, &status))
      << read_file(log) << read_file(dump + "/err.txt");
  ::kill(pid, sig);
  status = wait_for(pid);
  const std::string out = read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status) << "\n" << out;
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << out << read_file(dump + "/err.txt");
  const int step = stopped_step(out, name);
  ASSERT_GE(step, 3) << out;
  // The step it stopped at is committed, the message says where, and it was the last step run.
  const fs::path ckpt = fs::path(dump) / "checkpoint";
  EXPECT_TRUE(fs::exists(ckpt / std::to_string(step) / "_COMMITTED")) << out;
  EXPECT_NE(out.find("committed in " + ckpt.string()), std::string::npos) << out;
  EXPECT_EQ(last_step(out), step) << out;

  // Started again (to two steps further), it resumes from there.
  const std::string log2 = dump + "/stdout_resumed.txt";
  ASSERT_EQ(wait_for(start_process(command_line(dump, data, step + 2, 32), log2)), 0)
      << read_file(log2);
  const std::string out2 = read_file(log2);
  EXPECT_NE(out2.find("checkpoint: resumed from step " + std::to_string(step) + " "),
            std::string::npos)
      << out2;
  EXPECT_EQ(last_step(out2), step + 2) << out2;
}

TEST(ProcessSignalTest, SigtermFinishesTheStepCheckpointsItAndExits143) {
  expect_graceful_stop(SIGTERM, "SIGTERM");
}

TEST(ProcessSignalTest, SigintLikewiseExits130) { expect_graceful_stop(SIGINT, "SIGINT"); }

TEST(ProcessSignalTest, SecondSignalExitsAtOnceWithoutACheckpoint) {
  // Wide enough (dim 512) that one step takes far longer than the gap between the signals.
  const std::string data = fresh_test_dir("signal_data");
  const std::string dump = fresh_test_dir("signal_twice");
  fs::create_directories(dump);
  const std::string log = dump + "/stdout.txt", err = dump + "/err.txt";
  const pid_t pid = start_process(command_line(dump, data, 100000, 512), log, err);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_TRUE(wait_for_step(pid, log, 2, &status)) << read_file(log) << read_file(err);
  ::kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto second = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  status = wait_for(pid);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - second).count();
  const std::string out = read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 130) << out;
  EXPECT_NE(read_file(err).find("second signal: exiting now"), std::string::npos) << read_file(err);
  EXPECT_EQ(stopped_step(out, "SIGINT"), -1) << out;  // it did not wait for the step
  EXPECT_LT(seconds, 1.0);
  bool any_step = false;
  for (const auto& e : fs::directory_iterator(fs::path(dump) / "checkpoint")) {
    any_step |= fs::exists(e.path() / "_COMMITTED");
  }
  EXPECT_FALSE(any_step);
}

struct Finished {
  int status;
  std::string out, err;
};

Finished run_to_end(const std::vector<std::string>& args, const std::string& dump,
                    const std::vector<std::pair<std::string, std::string>>& env = {},
                    rlim_t address_space = 0) {
  fs::create_directories(dump);
  const std::string log = dump + "/stdout.txt", err = dump + "/err.txt";
  const int status = wait_for(start_process(args, log, err, env, address_space));
  return {status, read_file(log), read_file(err)};
}

// Runs the program where an allocation above 2 GiB of address space fails (under ASan, whose
// shadow memory needs more: allocations above 1 GiB fail, returning null).
Finished run_with_little_memory(const std::vector<std::string>& args, const std::string& dump) {
#if defined(__SANITIZE_ADDRESS__)
  const char* asan = std::getenv("ASAN_OPTIONS");
  return run_to_end(args, dump,
                    {{"ASAN_OPTIONS", std::string(asan ? asan : "") + (asan ? ":" : "") +
                                          "allocator_may_return_null=1:"
                                          "max_allocation_size_mb=1024"}});
#else
  return run_to_end(args, dump, {}, rlim_t{2} << 30);
#endif
}

TEST(ProcessSignalTest, ModelBiggerThanTheMachineIsRefusedBeforeAllocating) {
  // dim 1e9: 83 EiB of params, grads and moments. Before, its small tensors (the norms, 20 GB)
  // were allocated and touched before a big one threw std::bad_alloc, printing nothing.
  const std::string data = fresh_test_dir("signal_data");
  Finished f = run_to_end(command_line(fresh_test_dir("huge_model"), data, 3, 1000000000),
                          fresh_test_dir("huge_model"));
  ASSERT_TRUE(WIFEXITED(f.status)) << "died of signal " << WTERMSIG(f.status) << "\n" << f.err;
  EXPECT_EQ(WEXITSTATUS(f.status), 1) << f.out << f.err;
  EXPECT_NE(f.out.find("# effective config"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("dim = 1000000000"), std::string::npos) << f.out;
  // Per layer 2 D^2 (wq, wo) + 2 D^2 / 2 (wk, wv: 2 of 4 heads) + 3 x 64 D (ffn); two 257 x D
  // tables; 5 norms of D. 16 bytes each with adamw: param, grad, two moments.
  const double D = 1e9, params = 2 * (3 * D * D + 3 * 64 * D) + 2 * 257 * D + 5 * D;
  std::ostringstream want;
  want.precision(15);
  want << "memory: " << params
       << " parameters; params + grads + 2 adamw state arrays (f32) = " << params * 16
       << " bytes (83.3 EiB)";
  EXPECT_NE(f.out.find(want.str()), std::string::npos) << want.str() << "\n" << f.out;
  EXPECT_NE(f.err.find("error: RESOURCE_EXHAUSTED: the model is too big for this machine"),
            std::string::npos)
      << f.err;
  EXPECT_NE(f.err.find("need an estimated 83.3 EiB"), std::string::npos) << f.err;
  EXPECT_EQ(last_step(f.out), 0) << f.out;
}

TEST(ProcessSignalTest, FailedAllocationIsAMessageNamingTheSize) {
  // A tied 20M x 32 embedding: one 2.56 GB table, 10.2 GB estimated in all (below this
  // machine's memory, so it is tried), in a process with little memory.
  const std::string data = fresh_test_dir("signal_data");
  const std::string dump = fresh_test_dir("alloc_fails");
  std::vector<std::string> args = command_line(dump, data, 3, 32);
  args.push_back("--model.vocab_size=20000000");
  args.push_back("--model.tied_embeddings=true");
  Finished f = run_with_little_memory(args, dump);
  ASSERT_TRUE(WIFEXITED(f.status)) << "died of signal " << WTERMSIG(f.status) << "\n" << f.err;
  EXPECT_EQ(WEXITSTATUS(f.status), 1) << f.out << f.err;
  EXPECT_NE(f.out.find("vocab_size = 20000000"), std::string::npos) << f.out;
  // Per layer 3 D^2 (attention) + 3 x 64 D (ffn), the one table, 5 norms; 16 bytes each.
  const int64_t D = 32, params = 2 * (3 * D * D + 3 * 64 * D) + 20000000 * D + 5 * D;
  EXPECT_NE(f.out.find("memory: " + std::to_string(params) + " parameters"), std::string::npos)
      << f.out;
  EXPECT_NE(f.err.find("need an estimated 9.5 GiB (" + std::to_string(params * 16) + " bytes)"),
            std::string::npos)
      << f.err;
  EXPECT_EQ(last_step(f.out), 0) << f.out;
}

// Activations that do not fit: a small model (1.6M parameters) on micro-batches of
// 64 x 8192 tokens, whose FFN activations alone are 2 GiB per layer. The error is
// RESOURCE_EXHAUSTED naming the tokens and the keys that shrink them, not INTERNAL.
TEST(ProcessSignalTest, ActivationsThatDoNotFitNameTheMicroBatchTokens) {
  const std::string data = fresh_test_dir("signal_data");
  const std::string dump = fresh_test_dir("activations_oom");
  std::vector<std::string> args = command_line(dump, data, 3, 256);
  args.insert(args.end(), {"--model.ffn_dim=1024", "--training.batch_size=64",
                           "--training.seq_len=8192", "--checkpoint.enable=false"});
  Finished f = run_with_little_memory(args, dump);
  ASSERT_TRUE(WIFEXITED(f.status)) << "died of signal " << WTERMSIG(f.status) << "\n" << f.err;
  EXPECT_EQ(WEXITSTATUS(f.status), 1) << f.out << f.err;
  EXPECT_NE(f.err.find("error: RESOURCE_EXHAUSTED: [alloc] cannot allocate"), std::string::npos)
      << f.err;
  EXPECT_NE(f.err.find("a micro-batch holds the activations of training.batch_size / "
                       "training.gradient_accumulation_steps x training.seq_len = 64 x 8192 = "
                       "524288 tokens"),
            std::string::npos)
      << f.err;
  EXPECT_EQ(last_step(f.out), 0) << f.out;
}

// A checkpoint folder the run cannot write is refused before training, naming it (it was a
// warning, "opening unlocked", and the run failed at its first save). Root writes whatever
// the permissions say, so for root the folder is a read-only bind mount in a private mount
// namespace (unshare, as CI hides the CUDA toolkit); for other users it loses its write
// permission.
TEST(ProcessSignalTest, UnwritableCheckpointFolderIsRefusedBeforeTraining) {
  const std::string data = fresh_test_dir("signal_data");
  const std::string dump = fresh_test_dir("read_only_checkpoint");
  const std::string ckpt = dump + "/checkpoint";
  fs::create_directories(ckpt);
  std::vector<std::string> args = command_line(dump, data, 3, 32);
  if (::geteuid() == 0) {
    args.insert(args.begin(), {"/usr/bin/unshare", "--mount", "--propagation", "private",
                               "/bin/sh", "-c",
                               "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && "
                               "exec \"$@\"",
                               ckpt});
  } else {
    fs::permissions(ckpt, fs::perms::owner_read | fs::perms::owner_exec);
  }
  Finished f = run_to_end(args, dump);
  ASSERT_TRUE(WIFEXITED(f.status)) << "died of signal " << WTERMSIG(f.status) << "\n" << f.err;
  EXPECT_EQ(WEXITSTATUS(f.status), 1) << f.out << f.err;
  const std::string why = ::geteuid() == 0 ? "Read-only file system" : "Permission denied";
  EXPECT_NE(f.err.find("error: PERMISSION_DENIED: checkpoint directory " + ckpt +
                       " cannot be written (" + why),
            std::string::npos)
      << f.err;
  EXPECT_EQ(last_step(f.out), 0) << f.out;
  EXPECT_TRUE(fs::is_empty(ckpt));
}

}  // namespace
}  // namespace graft::llama_train
