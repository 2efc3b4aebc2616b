// What the MPI files of core/distributed share (not part of graft's API): the communicator
// programs exchange on, the wait that polls the timeout, and the errors.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace graft::distributed::mpi_internal {

// The communicator of programs' exchanges (mpi::exchange and the group communicators come
// from it). Throws graft::Error "[op] ..." before initialize, DistributedError after an
// exchange gave up.
MPI_Comm data_comm(const char* op);

// Waits for `reqs` (peer[k]: the process request k talks to, -1 for a collective over the
// processes `others`), polling `stop` and GRAFT_DISTRIBUTED_TIMEOUT_S. Returns an empty
// string when all completed, else why not, naming the processes that did not answer ("process
// 1", or for a collective "process 1 or 3": one of them); the world is then broken (later
// exchanges fail at once, and the process exits without MPI_Finalize).
std::string wait_all(std::vector<MPI_Request>& reqs, const std::vector<int>& peer,
                     const std::function<bool()>& stop, const std::vector<int>& others = {});

std::string mpi_error(int code);
[[noreturn]] void fail_exchange(const char* op, const std::string& why);

}  // namespace graft::distributed::mpi_internal
