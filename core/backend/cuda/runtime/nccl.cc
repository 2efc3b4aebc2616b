#include "core/backend/cuda/runtime/nccl.h"

#include <mpi.h>

#include <string>

#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda {

void check(ncclResult_t result, std::string_view call, ncclComm_t comm) {
  if (result == ncclSuccess) return;
  std::string message = ncclGetErrorString(result);
  if (comm != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
  }
  fail("NCCL", call, static_cast<long>(result), message);
}

ncclDataType_t nccl_data_type(DType dtype) {
  switch (dtype) {
    case DType::kU8:
      return ncclUint8;
    case DType::kI8:
      return ncclInt8;
    case DType::kU64:
      return ncclUint64;
    case DType::kU32:
      return ncclUint32;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kF16:
      return ncclFloat16;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
    default:
      graft::fail("cuda", "NCCL takes no ", dtype_name(dtype), " buffers");
  }
}

namespace {

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
  }
  return ncclSum;
}

const char* at(const void* p, size_t elements, DType dtype) {
  return static_cast<const char*>(p) + elements * dtype_size(dtype);
}
char* at(void* p, size_t elements, DType dtype) {
  return static_cast<char*>(p) + elements * dtype_size(dtype);
}

}  // namespace

NcclGroup::NcclGroup() { check(ncclGroupStart(), "ncclGroupStart"); }

NcclGroup::~NcclGroup() {
  if (open_) ncclGroupEnd();  // unwinding from an error: nothing more to report
}

void NcclGroup::end() {
  open_ = false;
  check(ncclGroupEnd(), "ncclGroupEnd");
}

NcclCommunicator::NcclCommunicator(ncclComm_t comm, int device) noexcept
    : comm_(comm), device_(device) {}

void NcclCommunicator::read_rank() {
  check(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank", comm_);
  check(ncclCommCount(comm_, &size_), "ncclCommCount", comm_);
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

NcclCommunicator::NcclCommunicator(NcclCommunicator&& o) noexcept
    : comm_(o.comm_), rank_(o.rank_), size_(o.size_), device_(o.device_) {
  o.comm_ = nullptr;
}

NcclCommunicator& NcclCommunicator::operator=(NcclCommunicator&& o) noexcept {
  if (this != &o) {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    comm_ = o.comm_;
    rank_ = o.rank_;
    size_ = o.size_;
    device_ = o.device_;
    o.comm_ = nullptr;
  }
  return *this;
}

std::vector<NcclCommunicator> NcclCommunicator::init_all(const std::vector<int>& devices) {
  if (devices.empty()) graft::fail("cuda", "NcclCommunicator::init_all needs devices");
  for (int d : devices) check_device(d);
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  std::vector<NcclCommunicator> out;
  out.reserve(devices.size());  // so wrapping the comms below cannot throw and leak them
  check(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()),
        "ncclCommInitAll");
  for (size_t i = 0; i < devices.size(); ++i) out.push_back(NcclCommunicator(comms[i], devices[i]));
  for (NcclCommunicator& c : out) c.read_rank();
  return out;
}

ncclUniqueId NcclCommunicator::unique_id() {
  ncclUniqueId id{};
  check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  return id;
}

std::vector<NcclCommunicator> NcclCommunicator::init_ranks(const ncclUniqueId& id, int size,
                                                           const std::vector<int>& ranks,
                                                           const std::vector<int>& devices) {
  if (ranks.empty() || ranks.size() != devices.size()) {
    graft::fail("cuda", "NcclCommunicator::init_ranks needs one device per rank");
  }
  for (int d : devices) check_device(d);
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  std::vector<NcclCommunicator> out;
  out.reserve(devices.size());
  {
    DeviceGuard guard(devices[0]);  // gives the caller its device back
    NcclGroup group;  // one thread makes several ranks: NCCL needs them in one group call
    for (size_t i = 0; i < devices.size(); ++i) {
      check(cudaSetDevice(devices[i]), "cudaSetDevice");
      check(ncclCommInitRank(&comms[i], size, id, ranks[i]), "ncclCommInitRank");
    }
    group.end();
  }
  for (size_t i = 0; i < devices.size(); ++i) out.push_back(NcclCommunicator(comms[i], devices[i]));
  for (NcclCommunicator& c : out) c.read_rank();
  return out;
}

NcclCommunicator NcclCommunicator::init_mpi(int device) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    graft::fail("cuda", "NCCL over MPI needs MPI initialized first (graft::distributed::initialize)");
  }
  int rank = 0, size = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) {
    graft::fail("cuda", "NCCL over MPI: cannot read the MPI world's rank and size");
  }
  ncclUniqueId id{};
  if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  // If rank 0 threw above, the others wait in MPI_Bcast until the job is ended: as with any
  // MPI failure, nothing better can be done from here.
  if (MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    graft::fail("cuda", "NCCL over MPI: MPI_Bcast of the NCCL unique id failed");
  }
  DeviceGuard guard(device);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
  NcclCommunicator out(comm, device);
  out.read_rank();
  return out;
}

void NcclCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype,
                                  ReduceOp op, cudaStream_t stream) {
  check(ncclAllReduce(send, recv, count, nccl_data_type(dtype), nccl_op(op), comm_, stream),
        "ncclAllReduce", comm_);
}

void NcclCommunicator::all_gather(const void* send, void* recv, size_t count, DType dtype,
                                  cudaStream_t stream) {
  check(ncclAllGather(send, recv, count, nccl_data_type(dtype), comm_, stream), "ncclAllGather",
        comm_);
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType dtype,
                                      ReduceOp op, cudaStream_t stream) {
  check(ncclReduceScatter(send, recv, count, nccl_data_type(dtype), nccl_op(op), comm_, stream),
        "ncclReduceScatter", comm_);
}

void NcclCommunicator::all_to_all(const void* send, void* recv, size_t count, DType dtype,
                                  cudaStream_t stream) {
  const ncclDataType_t t = nccl_data_type(dtype);
  // NCCL has no all-to-all collective: one send and one receive per peer, grouped so they
  // progress together instead of deadlocking on each other.
  NcclGroup group;
  for (int p = 0; p < size_; ++p) {
    check(ncclSend(at(send, p * count, dtype), count, t, p, comm_, stream), "ncclSend", comm_);
    check(ncclRecv(at(recv, p * count, dtype), count, t, p, comm_, stream), "ncclRecv", comm_);
  }
  group.end();
}

void NcclCommunicator::ppermute(const void* send, void* recv, size_t count, DType dtype,
                                const std::vector<std::pair<int, int>>& pairs,
                                cudaStream_t stream) {
  const ncclDataType_t t = nccl_data_type(dtype);
  std::vector<char> is_source(size_, 0), is_target(size_, 0);
  int send_to = -1, recv_from = -1;
  for (const auto& [src, dst] : pairs) {
    if (src < 0 || src >= size_ || dst < 0 || dst >= size_ || is_source[src] || is_target[dst]) {
      graft::fail("cuda", "ppermute: pairs must map distinct ranks to distinct ranks in [0, ",
                  size_, "), got (", src, ", ", dst, ")");
    }
    is_source[src] = is_target[dst] = 1;
    if (src == rank_) send_to = dst;
    if (dst == rank_) recv_from = src;
  }
  const size_t bytes = count * dtype_size(dtype);
  DeviceGuard guard(device_);
  if (recv_from < 0) check(cudaMemsetAsync(recv, 0, bytes, stream), "cudaMemsetAsync");
  if (send_to == rank_) {
    check(cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    return;
  }
  NcclGroup group;
  if (send_to >= 0) check(ncclSend(send, count, t, send_to, comm_, stream), "ncclSend", comm_);
  if (recv_from >= 0) check(ncclRecv(recv, count, t, recv_from, comm_, stream), "ncclRecv", comm_);
  group.end();
}

void NcclCommunicator::broadcast(const void* send, void* recv, size_t count, DType dtype,
                                 int root, cudaStream_t stream) {
  if (root < 0 || root >= size_) {
    graft::fail("cuda", "broadcast: root ", root, " is not a rank of ", size_);
  }
  check(ncclBroadcast(send, recv, count, nccl_data_type(dtype), root, comm_, stream),
        "ncclBroadcast", comm_);
}

}  // namespace graft::cuda
