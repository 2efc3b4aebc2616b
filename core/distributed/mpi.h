// Processes joined through MPI, like jax.distributed.initialize:
//
//   // mpirun -np 2 -x GRAFT_CPU_DEVICES=2 ./prog     (as root: --allow-run-as-root)
//   int main() {
//     if (absl::Status s = graft::distributed::initialize(); !s.ok()) { print s; return 1; }
//     // devices() lists all 4 devices; process_index() is 0 or 1; a Mesh({4}, {"data"}) spans
//     // both processes and shard_map / pmap / jit with shardings run over it.
//   }
//
// Each process presents its own GRAFT_CPU_DEVICES devices, numbered after those of the
// processes before it. A program over a mesh runs, in each process, the members on that
// process's devices; collectives between members of one process go through memory, between
// processes over MPI (core/backend/cpu/collective_kernels.cc). Every process holds the whole
// value of every array, as the virtual devices of one process share its memory: after a
// shard_map (so a jit with shardings, or a pmap) the blocks of its outputs that were computed
// on other processes' devices are fetched (replicated outputs need nothing), so reading an
// array, eager ops and checkpoints work the same on every process. Processes must run the same
// programs in the same order (SPMD), as JAX requires: a shard_map runs when called (bind), not
// when read, and before it exchanges anything the processes check that they run the same one
// (program_agreement.h).
//
// Errors: initialize returns a Status (no MPI with thread support, devices already read, a bad
// GRAFT_CPU_DEVICES). A collective whose partner does not answer within
// GRAFT_DISTRIBUTED_TIMEOUT_S seconds (default 300) throws "[op] no answer from process p".
// The library never aborts the MPI job (errors are returned, not fatal).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace graft::distributed {

// Joins the processes started together (mpirun; a process started alone is a world of one).
// Call it first, before the devices are used. Calling it again is a no-op. MPI is finalized
// at exit.
absl::Status initialize();

// Whether initialize() joined this process into an MPI world.
bool initialized();

namespace mpi {

inline constexpr int kMaxTag = 1 << 20;

// Every process calls it (in the same order as the others' calls); returns every process's
// `mine`, by rank ({mine} in a one-process run). Throws graft::DistributedError "[op] ..." on a
// timeout or an MPI error.
std::vector<std::string> allgather(const char* op, const std::string& mine);

// Every process in `procs` (ascending world ranks, this process among them) sends its `mine`
// to every other and receives process procs[j]'s into out[j], bytes[j] long (out of this
// process's own position is not written). Concurrent exchanges use distinct tags in
// [0, kMaxTag); one tag's exchanges arrive in the order they were made. While waiting it polls
// `stop` (may be empty): true gives up with "[op] ... stopped". Throws graft::DistributedError
// "[op] ..." on a timeout or an MPI error.
void exchange(const char* op, int tag, const std::vector<int>& procs, const void* mine,
              const std::vector<size_t>& bytes, const std::vector<char*>& out,
              const std::function<bool()>& stop = nullptr);

// Every process in `procs` sends send[j] (send_bytes[j] long) to process procs[j] and
// receives recv_bytes[j] from it into recv[j] (its own position is skipped, and so is a
// direction of 0 bytes: both sides must agree on every size). Point to point on the tag, as
// exchange; errors as exchange's.
void send_receive(const char* op, int tag, const std::vector<int>& procs,
                  const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                  const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes,
                  const std::function<bool()>& stop = nullptr);

}  // namespace mpi
}  // namespace graft::distributed
