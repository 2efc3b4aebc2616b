// For the tests that run the real examples/llama binary: where it is, starting it with its
// output in files, waiting for it.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace graft::llama_train {

inline std::string llama_program() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/examples/llama/llama";
  return "examples/llama/llama";
}

// The command line of a small run of the real program (a 2-layer byte-level model on the
// default corpus, a progress line every step, no evaluation or sample); tests append theirs.
inline std::vector<std::string> tiny_command_line(const std::string& dump,
                                                  const std::string& data, int64_t steps,
                                                  int64_t dim = 32) {
  return {llama_program(),
          "--job.dump_folder=" + dump,
          "--training.data_dir=" + data,
          "--training.tokenizer=byte",
          "--model.dim=" + std::to_string(dim),
          "--model.n_layers=2",
          "--model.n_heads=4",
          "--model.n_kv_heads=2",
          "--model.ffn_dim=64",
          "--training.batch_size=4",
          "--training.seq_len=32",
          "--training.steps=" + std::to_string(steps),
          "--metrics.log_freq=1",
          "--metrics.eval_freq=0",
          "--metrics.peak_flops=1e11",
          "--sample.max_new_tokens=0"};
}

// Starts args[0] with stdout (and stderr, when `err` is given) in those files, `env` set and
// (when > 0) its address space limited to `address_space` bytes.
inline pid_t start_process(const std::vector<std::string>& args, const std::string& log,
                           const std::string& err = "",
                           const std::vector<std::pair<std::string, std::string>>& env = {},
                           rlim_t address_space = 0) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (address_space > 0) {
      const struct rlimit limit = {address_space, address_space};
      if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(125);
    }
    if (std::freopen(log.c_str(), "w", stdout) == nullptr) ::_exit(126);
    if (!err.empty() && std::freopen(err.c_str(), "w", stderr) == nullptr) ::_exit(126);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// The wait status, or -1.
inline int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace graft::llama_train
