// NCCL communicators between GPUs: the local GPUs of one process (ncclCommInitAll), one GPU
// per process across processes joined through MPI (rank 0's ncclUniqueId broadcast with
// MPI_Bcast over MPI_COMM_WORLD; MPI must be initialized first, e.g. by
// graft::distributed::initialize()), or any ranks of a communicator whose id the caller has
// handed to every process taking part (init_ranks: the shard_map groups, collective_kernels.cc).
//
// Each NcclCommunicator is one rank: it owns its ncclComm_t (destroyed with it; move-only).
// Collectives are enqueued on the given stream of the communicator's device and return at
// once; buffers are device memory of that device, counts are in elements of `dtype`. Every
// rank of the communicator must call the same collectives in the same order.
//
// Threading: a communicator is used by one thread at a time. When one thread drives several
// local ranks (init_all), it must enclose their calls to one collective in a NcclGroup, or the
// first rank's call waits forever for the others.
//
// Errors: graft::Error "[cuda] <call>: NCCL error <code>: <message>" (check below), also for a
// dtype NCCL does not take (bool) and for misuse (a bad root or permutation).
// Built only with --config=cuda; compile-checked only (no multi-GPU test has run).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/dtype/dtype.h"

namespace graft::cuda {

// A failed NCCL call; `comm` (may be null) adds NCCL's last error text.
void check(ncclResult_t result, std::string_view call, ncclComm_t comm = nullptr);

// graft's dtypes as NCCL's (all but bool).
ncclDataType_t nccl_data_type(DType dtype);

enum class ReduceOp { kSum, kMax, kMin };

// ncclGroupStart() now, ncclGroupEnd() at end() (or, errors ignored, at destruction).
class NcclGroup {
 public:
  NcclGroup();
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  // Launches the group's operations; throws on failure.
  void end();

 private:
  bool open_ = true;
};

class NcclCommunicator {
 public:
  // One rank per device: result[i] is rank i, on devices[i].
  static std::vector<NcclCommunicator> init_all(const std::vector<int>& devices);
  // A new id naming one communicator; the processes taking part must all use it.
  static ncclUniqueId unique_id();
  // This process's ranks `ranks` (on local devices `devices`, one each) of the communicator
  // `id` of `size` ranks, made in one NCCL group call: returns once every process has made
  // its ranks of it. result[i] is ranks[i].
  static std::vector<NcclCommunicator> init_ranks(const ncclUniqueId& id, int size,
                                                  const std::vector<int>& ranks,
                                                  const std::vector<int>& devices);
  // This process's rank (its MPI_COMM_WORLD rank, of the world's size), on local `device`.
  // Collective over MPI_COMM_WORLD: every process must call it.
  static NcclCommunicator init_mpi(int device);

  ~NcclCommunicator();
  NcclCommunicator(NcclCommunicator&& o) noexcept;
  NcclCommunicator& operator=(NcclCommunicator&& o) noexcept;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  // recv[i] = op over ranks of send[i], count elements (send == recv: in place).
  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                  cudaStream_t stream);
  // recv = the ranks' send blocks (count elements each) in rank order.
  void all_gather(const void* send, void* recv, size_t count, DType dtype, cudaStream_t stream);
  // recv (count elements) = op over ranks of their send block number rank().
  void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                      cudaStream_t stream);
  // send block p (count elements) goes to rank p, arriving as its recv block rank().
  void all_to_all(const void* send, void* recv, size_t count, DType dtype, cudaStream_t stream);
  // For each (source, target) pair: the source's send arrives as the target's recv (count
  // elements). A rank that is no pair's target gets zeros (as jax.lax.ppermute). Sources and
  // targets must each be distinct ranks.
  void ppermute(const void* send, void* recv, size_t count, DType dtype,
                const std::vector<std::pair<int, int>>& pairs, cudaStream_t stream);
  // recv = root's send (send is read on the root only).
  void broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                 cudaStream_t stream);

 private:
  NcclCommunicator(ncclComm_t comm, int device) noexcept;  // owns comm from here on
  void read_rank();
  ncclComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 0, device_ = 0;
};

}  // namespace graft::cuda
