// The training program under mpirun: 2 processes x 2 virtual devices train llama (HSDP:
// dp_replicate 2 x dp_shard 2 over the 4 devices of both processes, checkpoints on) and print
// the losses of one process with 4 devices, step for step; only process 0 prints; both
// processes write their blocks of the sharded checkpoint. Processes started with different
// flags stop before training naming the key; a process that hangs makes the other stop with
// UNAVAILABLE; a signal to one process stops all at the same step with one checkpoint.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/examples/llama/process_util.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

namespace fs = std::filesystem;

// Everything after the program: HSDP 2 x 2 over 4 devices, checkpoints every 3 steps.
std::vector<std::string> flags(const std::string& dump, const std::string& data) {
  std::vector<std::string> args = tiny_command_line(dump, data, /*steps=*/6);
  args.erase(args.begin());
  args.insert(args.end(), {"--parallelism.data_parallel_replicate_degree=2",
                           "--parallelism.data_parallel_shard_degree=2",
                           "--checkpoint.enable=true", "--checkpoint.interval=3"});
  return args;
}

// "step k/6 | loss x.xxxx" of every progress line.
std::vector<std::string> losses(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) != 0) continue;
    out.push_back(line.substr(0, line.find('|', line.find('|') + 1)));
  }
  return out;
}

// mpirun with 2 processes of 2 devices: one command line for both, or one per process
// (mpirun's "-np 1 a : -np 1 b").
std::vector<std::string> mpirun(const std::vector<std::pair<std::string, std::vector<std::string>>>&
                                    per_process,
                                const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {"/usr/bin/mpirun", "--oversubscribe"};
  if (::geteuid() == 0) args.push_back("--allow-run-as-root");
  args.insert(args.end(), {"-x", "GRAFT_CPU_DEVICES=2"});
  for (const std::string& e : env) args.insert(args.end(), {"-x", e});
  // Under the ASan config: OpenMPI's own allocations are still live at exit, which
  // LeakSanitizer would report (graft's leaks are caught by the other tests).
  std::string asan = std::getenv("ASAN_OPTIONS") != nullptr ? std::getenv("ASAN_OPTIONS") : "";
  if (!asan.empty()) args.insert(args.end(), {"-x", "ASAN_OPTIONS=" + asan + ":detect_leaks=0"});
  for (size_t p = 0; p < per_process.size(); ++p) {
    if (p > 0) args.push_back(":");
    args.insert(args.end(), {"-np", per_process.size() == 1 ? "2" : "1", per_process[p].first});
    args.insert(args.end(), per_process[p].second.begin(), per_process[p].second.end());
  }
  return args;
}

// Starts mpirun over loopback, its output in `dir`/stdout.txt and stderr.txt.
pid_t start_mpirun(const std::vector<std::string>& args, const std::string& dir) {
  return start_process(args, dir + "/stdout.txt", dir + "/stderr.txt",
                       {{"OMPI_MCA_btl", "self,vader,tcp"},
                        {"OMPI_MCA_btl_tcp_if_include", "lo"},
                        {"OMPI_MCA_oob_tcp_if_include", "lo"},
                        {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}});
}

// The block files (one per process that wrote blocks) in a step folder.
int block_files(const fs::path& step) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(step)) {
    n += e.path().filename().string().find(".process-") != std::string::npos;
  }
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A flag given to one process only (another model width, which used to corrupt the heap,
// or another seed, which used to train on with other losses): both processes stop before
// training with an error naming the key and both values.
TEST(ProcessMpiTest, ProcessesStartedWithDifferentFlagsStopNamingTheKey) {
  const std::string program = llama_program();
  const std::string data = fresh_test_dir("mpi_data");
  for (const auto& [flag, want] :
       std::vector<std::pair<std::string, std::string>>{
           {"--model.dim=48", "processes disagree on model.dim: process 0 has 32, process 1 has 48"},
           {"--training.seed=7",
            "processes disagree on training.seed: process 0 has 0, process 1 has 7"}}) {
    const std::string dir = fresh_test_dir("mpi_disagree");
    fs::create_directories(dir);
    std::vector<std::string> other = flags(dir, data);
    other.push_back(flag);
    const int status = wait_for(start_mpirun(mpirun({{program, flags(dir, data)}, {program, other}}), dir));
    const std::string out = read_file(dir + "/stdout.txt"), err = read_file(dir + "/stderr.txt");
    EXPECT_NE(status, 0) << out << err;
    // Both processes find it at once; mpirun may end the second before it prints (the
    // library's check on every process is mpi_world_test's).
    EXPECT_GE(count(err, "INVALID_ARGUMENT: " + want), 1u) << flag << "\n" << err;
    EXPECT_EQ(out.find("\nstep "), std::string::npos) << out;  // no progress line
  }
}

// The pid of the process of world rank `rank` that mpirun `parent` started, or -1.
pid_t rank_pid(pid_t parent, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_file(e.path() / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::string env = read_file(e.path() / "environ");
    for (char& c : env) c = c == '\0' ? '\n' : c;
    if (env.find("\nOMPI_COMM_WORLD_RANK=" + std::to_string(rank) + "\n") != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  return -1;
}

// How a run that process 1 was signalled in ended.
struct Ended {
  bool in_time = false;  // the job ended within the limit (else it was killed)
  int status = 0;
  std::string out, err;
};

// Starts a long run under mpirun in `dir` (the test's flags plus `extra`, `env` for mpirun's
// -x), waits for its third progress line, sends `sig` to process 1 only, and waits at most
// `limit` for the whole job to end.
Ended signal_process_one(const std::string& dir, int sig, std::chrono::seconds limit,
                         const std::vector<std::string>& extra,
                         const std::vector<std::string>& env = {}) {
  const std::string data = fresh_test_dir("mpi_data");
  fs::create_directories(dir);
  std::vector<std::string> f = flags(dir, data);
  f.push_back("--training.steps=100000");
  f.insert(f.end(), extra.begin(), extra.end());
  const pid_t job = start_mpirun(mpirun({{llama_program(), f}}, env), dir);
  Ended e;
  const auto started = std::chrono::steady_clock::now();
  while (count(read_file(dir + "/stdout.txt"), "\nstep ") < 3 &&
         std::chrono::steady_clock::now() - started < std::chrono::minutes(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const pid_t second = rank_pid(job, 1);
  if (second <= 0 || ::kill(second, sig) != 0) {
    ADD_FAILURE() << "process 1 not found or not signalled: " << read_file(dir + "/stderr.txt");
  }
  const auto signalled = std::chrono::steady_clock::now();
  e.in_time = true;
  while (::waitpid(job, &e.status, WNOHANG) != job) {
    if (std::chrono::steady_clock::now() - signalled > limit) {
      if (second > 0) ::kill(second, SIGKILL);
      ::kill(job, SIGKILL);
      e.status = wait_for(job);
      e.in_time = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  e.out = read_file(dir + "/stdout.txt");
  e.err = read_file(dir + "/stderr.txt");
  return e;
}

// A process that stops answering (SIGSTOP: hung, not dead, so mpirun does not notice): the
// other gives up after GRAFT_DISTRIBUTED_TIMEOUT_S with UNAVAILABLE naming it, not INTERNAL
// with a hint to shrink the model, and the job ends instead of hanging.
TEST(ProcessMpiTest, AProcessThatStopsAnsweringIsUnavailableOnTheOther) {
  const Ended e = signal_process_one(fresh_test_dir("mpi_hung"), SIGSTOP, std::chrono::seconds(60),
                                     {"--checkpoint.enable=false"},
                                     {"GRAFT_DISTRIBUTED_TIMEOUT_S=5"});
  ASSERT_TRUE(e.in_time) << "the job hangs: " << e.err;
  EXPECT_NE(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("error: UNAVAILABLE: ["), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("no answer from process 1 in 5 s (GRAFT_DISTRIBUTED_TIMEOUT_S)"),
            std::string::npos)
      << e.err;
  EXPECT_EQ(e.err.find("make the model smaller"), std::string::npos) << e.err;
}

// SIGTERM to one process only: every process stops after the same step, whose checkpoint is
// committed with a block file from each (it used to end the job after the 300 s timeout with
// nothing saved).
TEST(ProcessMpiTest, ASignalToOneProcessStopsEveryProcessAtTheSameStep) {
  const std::string dir = fresh_test_dir("mpi_sigterm");
  const Ended e = signal_process_one(dir, SIGTERM, std::chrono::seconds(60),
                                     {"--checkpoint.interval=100000"});
  ASSERT_TRUE(e.in_time) << "the job does not stop: " << e.err;
  const std::string key = "stopped by SIGTERM after step ";
  const size_t at = e.out.find(key);
  ASSERT_NE(at, std::string::npos) << e.out << e.err;  // printed by process 0: no signal there
  const int step = std::atoi(e.out.c_str() + at + key.size());
  EXPECT_NE(e.out.find("checkpoint of step " + std::to_string(step) + " committed"),
            std::string::npos)
      << e.out;
  const fs::path saved = fs::path(dir) / "checkpoint" / std::to_string(step);
  EXPECT_TRUE(fs::exists(saved / "_COMMITTED")) << saved;
  EXPECT_GE(block_files(saved), 2) << "each process wrote its blocks of the same step";
  EXPECT_EQ(e.err.find("no answer"), std::string::npos) << e.err;
}

// SIGKILL to one process mid-run: the job ends within 10 s (mpirun ends the others) with a
// message naming the process, not after the exchange timeout.
TEST(ProcessMpiTest, AKilledProcessEndsTheJobWithinSeconds) {
  const Ended e = signal_process_one(fresh_test_dir("mpi_killed"), SIGKILL,
                                     std::chrono::seconds(10), {"--checkpoint.enable=false"});
  ASSERT_TRUE(e.in_time) << "the job still runs 10 s after a process was killed";
  EXPECT_NE(e.status, 0);
  EXPECT_NE(e.err.find("rank 1"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("signal 9"), std::string::npos) << e.err;
}

// Every progress line's MFU is 100 x FLOPs/token x (tokens/s / processes) / peak: each
// process's own peak (here metrics.peak_flops = 1e11) against its share of the tokens.
void expect_mfu_per_process(const std::string& log, int processes) {
  const std::string key = "; MFU = ";
  const size_t at = log.find(key);
  ASSERT_NE(at, std::string::npos) << log;
  const double flops_per_token = std::atof(log.c_str() + at + key.size());
  ASSERT_GT(flops_per_token, 0) << log;
  std::istringstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) != 0) continue;
    const size_t tok = line.find(" tok/s"), mfu = line.find("mfu ");
    ASSERT_NE(tok, std::string::npos) << line;
    ASSERT_NE(mfu, std::string::npos) << line;
    std::string digits = line.substr(line.rfind("| ", tok) + 2, tok - line.rfind("| ", tok) - 2);
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    const double tps = std::atof(digits.c_str()), printed = std::atof(line.c_str() + mfu + 4);
    const double want = 100 * flops_per_token * tps / processes / 1e11;
    EXPECT_NEAR(printed, want, 0.01 + 0.02 * want) << line;
    ++lines;
  }
  EXPECT_GT(lines, 0) << log;
}

TEST(ProcessMpiTest, TwoProcessesTrainAsOneWithFourDevices) {
  const std::string program = llama_program();
  ASSERT_TRUE(fs::exists(program)) << program;
  const std::string data = fresh_test_dir("mpi_data");
  const std::string one = fresh_test_dir("mpi_one"), two = fresh_test_dir("mpi_two");
  fs::create_directories(one);
  fs::create_directories(two);

  std::vector<std::string> args = {program};
  for (const std::string& f : flags(one, data)) args.push_back(f);
  const pid_t single = start_process(args, one + "/stdout.txt", one + "/stderr.txt",
                                     {{"GRAFT_CPU_DEVICES", "4"}});
  ASSERT_EQ(wait_for(single), 0) << read_file(one + "/stderr.txt");

  args = mpirun({{program, flags(two, data)}});
  ASSERT_EQ(wait_for(start_mpirun(args, two)), 0) << read_file(two + "/stderr.txt");

  const std::string log = read_file(two + "/stdout.txt");
  const std::vector<std::string> want = losses(read_file(one + "/stdout.txt")), got = losses(log);
  ASSERT_EQ(want.size(), 6u);
  // Only process 0 prints: one line per step, the same losses as one process of 4 devices.
  EXPECT_EQ(got, want) << log;
  expect_mfu_per_process(read_file(one + "/stdout.txt"), 1);
  expect_mfu_per_process(log, 2);
  EXPECT_NE(log.find("FSDP over 4 devices"), std::string::npos) << log;
  // The interval checkpoint of step 3 and the final one of step 6: committed, each with a
  // block file from each process.
  for (const char* saved : {"3", "6"}) {
    const fs::path step = fs::path(two) / "checkpoint" / saved;
    EXPECT_TRUE(fs::exists(step / "_COMMITTED")) << step;
    EXPECT_GE(block_files(step), 2) << "each process writes its blocks of step " << saved;
  }
}

}  // namespace
}  // namespace graft::llama_train
