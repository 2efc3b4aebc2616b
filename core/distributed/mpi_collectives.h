// Collectives between processes through MPI's own algorithms, for the groups of a program's
// collectives that span processes (core/backend/cpu/collective_kernels.cc): the members of
// each process meet in memory first and one thread per process calls these.
//
// Each group gets a communicator of its own, made at the first use of its (tag, processes)
// with MPI_Comm_create_group and kept: groups that run at once (different tags) never share
// one, and every process of a group makes the same calls on it in the same order (SPMD). The
// calls are MPI's non-blocking collectives, polled like mpi::exchange: a partner that does
// not answer within GRAFT_DISTRIBUTED_TIMEOUT_S, or `stop` returning true, throws
// graft::DistributedError "[op] ...".
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace graft::distributed::mpi {

// Element types the reductions take (f16 / bf16 reduce as f32; bool as u8).
enum class Elem { kF32, kF64, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64 };
// Sum, or max / min where a NaN wins (graft's pmax / pmin).
enum class Reduction { kSum, kMax, kMin };

size_t elem_size(Elem e);

// `procs`: the group's processes, ascending world ranks, this one among them.
// data[0, count) becomes the reduction of every process's data.
void all_reduce(const char* op, int tag, const std::vector<int>& procs, void* data, size_t count,
                Elem e, Reduction r, const std::function<bool()>& stop = nullptr);

// Process procs[j]'s bytes[j] bytes land in `out` after those of procs[0..j), this process's
// `mine` among them.
void all_gather(const char* op, int tag, const std::vector<int>& procs, const void* mine,
                const std::vector<size_t>& bytes, void* out,
                const std::function<bool()>& stop = nullptr);

// `in` holds, for each j in order, counts[j] elements meant for process procs[j]; `out` gets
// this process's counts[self] elements, reduced over every process's `in`.
void reduce_scatter(const char* op, int tag, const std::vector<int>& procs, const void* in,
                    void* out, const std::vector<size_t>& counts, Elem e, Reduction r,
                    const std::function<bool()>& stop = nullptr);

}  // namespace graft::distributed::mpi
