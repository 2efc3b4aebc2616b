// examples/llama: pretrains a Llama-style language model from the command line.
//
//   bazel run //examples/llama -- --config=examples/llama/configs/fortunes.toml
//   bazel run //examples/llama -- --training.steps=100 --model.dim=128
//
// The config is torchtitan-style TOML ([job] [model] [optimizer] [lr_scheduler] [training]
// [checkpoint] [metrics] [sample]); every key can be overridden as --section.key=value.
// --help lists them all.
//
// Under mpirun (mpirun -np 2 -x GRAFT_CPU_DEVICES=2 .../llama --config=...) the processes join
// into one device world (core/distributed/mpi.h) and train together.
//
// Exit status: 0 done; 1 the run failed (divergence, I/O, out of memory: the message says);
// 2 a bad command line or config; 128 + signal when SIGINT / SIGTERM stopped it after
// checkpointing the step it was in (a second signal exits at once, without a checkpoint).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <new>

#include "core/backend/cpu/openmp_policy.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "examples/llama/hf_config.h"
#include "examples/llama/stop_signal.h"
#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"

int main(int argc, char** argv) {
  namespace train = graft::train;
  graft::cpu::reexec_with_passive_openmp(argv);
  // `bazel run` starts us inside the runfiles tree: work where the user typed the command, so
  // relative config paths and the outputs folder mean what they say.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr) {
    if (chdir(dir) != 0) std::cerr << "warning: cannot chdir to " << dir << "\n";
  }
  // Started by mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE): join the other processes before
  // anything reads the devices. Each process presents GRAFT_CPU_DEVICES devices; the
  // [parallelism] degrees then count the devices of all processes.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    if (absl::Status s = graft::distributed::initialize(); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      return 1;
    }
  }
  auto command_line = train::parse_command_line(argc, argv);
  if (!command_line.ok()) {
    std::cerr << "error: " << command_line.status().message() << "\n(--help lists the keys)\n";
    return 2;
  }
  if (command_line->help) {
    std::cout << train::usage(argv[0]);
    return 0;
  }
  auto config = train::load_train_config(*command_line);
  if (config.ok()) {  // model.from_hf_config: [model] from the HF folder's config.json
    if (absl::Status s = graft::llama_train::apply_from_hf_config(*config); !s.ok()) config = s;
  }
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 2;
  }
  // Every process trains (SPMD) with the same config; process 0 alone prints, writes
  // TensorBoard events and exports (the trainer), checkpoints are written by all
  // (checkpoint/manager.h).
  std::ostream null_out(nullptr);
  std::ostream& out = graft::process_index() == 0 ? std::cout : null_out;
  // Flushed: whatever happens next (an allocation that fails, a kill), the config is out.
  out << "# effective config\n" << train::to_toml(*config) << std::endl;
  graft::llama_train::install_stop_handlers();
  try {
    auto result = graft::llama_train::run_training(
        *config, out, {.stop_signal = &graft::llama_train::stop_signal()});
    std::cout.flush();
    if (!result.ok()) {
      std::cerr << "error: " << result.status() << "\n";
      return 1;
    }
    if (result->stop_signal != 0) return 128 + result->stop_signal;
  } catch (const std::bad_alloc&) {  // run_training catches its own; this is the last resort
    std::cout.flush();
    std::cerr << "error: out of memory (std::bad_alloc)\n";
    return 1;
  }
  return 0;
}
