// The training program under mpirun: 2 processes x 2 virtual devices train llama (HSDP:
// dp_replicate 2 x dp_shard 2 over the 4 devices of both processes, checkpoints on) and print
// the losses of one process with 4 devices, step for step; only process 0 prints; both
// processes write their blocks of the sharded checkpoint.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
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

  args = {"/usr/bin/mpirun", "--oversubscribe", "-np", "2", "-x", "GRAFT_CPU_DEVICES=2"};
  if (::geteuid() == 0) args.insert(args.begin() + 1, "--allow-run-as-root");
  // Under the ASan config: OpenMPI's own allocations are still live at exit, which
  // LeakSanitizer would report (graft's leaks are caught by the other tests).
  std::string asan = std::getenv("ASAN_OPTIONS") != nullptr ? std::getenv("ASAN_OPTIONS") : "";
  if (!asan.empty()) {
    asan += ":detect_leaks=0";
    args.insert(args.end(), {"-x", "ASAN_OPTIONS=" + asan});
  }
  args.push_back(program);
  for (const std::string& f : flags(two, data)) args.push_back(f);
  const pid_t multi = start_process(args, two + "/stdout.txt", two + "/stderr.txt",
                                    {{"OMPI_MCA_btl", "self,vader,tcp"},
                                     {"OMPI_MCA_btl_tcp_if_include", "lo"},
                                     {"OMPI_MCA_oob_tcp_if_include", "lo"},
                                     {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}});
  ASSERT_EQ(wait_for(multi), 0) << read_file(two + "/stderr.txt");

  const std::string log = read_file(two + "/stdout.txt");
  const std::vector<std::string> want = losses(read_file(one + "/stdout.txt")), got = losses(log);
  ASSERT_EQ(want.size(), 6u);
  // Only process 0 prints: one line per step, the same losses as one process of 4 devices.
  EXPECT_EQ(got, want) << log;
  EXPECT_NE(log.find("FSDP over 4 devices"), std::string::npos) << log;
  // Step 6's checkpoint: committed, with a block file from each process.
  const fs::path step = fs::path(two) / "checkpoint" / "6";
  EXPECT_TRUE(fs::exists(step / "_COMMITTED")) << step;
  int block_files = 0;
  for (const auto& e : fs::directory_iterator(step)) {
    block_files += e.path().filename().string().find(".process-") != std::string::npos;
  }
  EXPECT_GE(block_files, 2) << "each process writes its blocks";
}

}  // namespace
}  // namespace graft::llama_train
