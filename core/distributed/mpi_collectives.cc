#include "core/distributed/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/distributed/mpi_internal.h"
#include "core/error.h"

namespace graft::distributed::mpi {
namespace {

using mpi_internal::fail_exchange;
using mpi_internal::mpi_error;

MPI_Datatype type_of(Elem e) {
  switch (e) {
    case Elem::kF32: return MPI_FLOAT;
    case Elem::kF64: return MPI_DOUBLE;
    case Elem::kI8: return MPI_INT8_T;
    case Elem::kI16: return MPI_INT16_T;
    case Elem::kI32: return MPI_INT32_T;
    case Elem::kI64: return MPI_INT64_T;
    case Elem::kU8: return MPI_UINT8_T;
    case Elem::kU16: return MPI_UINT16_T;
    case Elem::kU32: return MPI_UINT32_T;
    case Elem::kU64: return MPI_UINT64_T;
  }
  return MPI_BYTE;
}

// inout = in op inout, where a NaN wins (MPI_MAX / MPI_MIN leave NaN to the implementation).
template <typename T, bool kMax>
void nan_extreme(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (std::isnan(b[i])) continue;
    if (std::isnan(a[i])) {
      b[i] = a[i];
    } else {
      b[i] = kMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    }
  }
}

MPI_Op op_of(Elem e, Reduction r) {
  if (r == Reduction::kSum) return MPI_SUM;
  if (e != Elem::kF32 && e != Elem::kF64) return r == Reduction::kMax ? MPI_MAX : MPI_MIN;
  static const MPI_Op* ops = [] {
    auto* o = new MPI_Op[4];
    MPI_Op_create(&nan_extreme<float, true>, /*commute=*/1, &o[0]);
    MPI_Op_create(&nan_extreme<float, false>, 1, &o[1]);
    MPI_Op_create(&nan_extreme<double, true>, 1, &o[2]);
    MPI_Op_create(&nan_extreme<double, false>, 1, &o[3]);
    return o;
  }();
  return ops[(e == Elem::kF64 ? 2 : 0) + (r == Reduction::kMax ? 0 : 1)];
}

// The communicator of group `tag` over `procs`, made on first use.
MPI_Comm comm_of(const char* op, int tag, const std::vector<int>& procs) {
  static std::mutex mu;
  static auto* comms = new std::map<std::pair<int, std::vector<int>>, MPI_Comm>();
  MPI_Comm parent = mpi_internal::data_comm(op);
  const auto key = std::make_pair(tag, procs);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = comms->find(key);
    if (it != comms->end()) return it->second;
  }
  // Only the group's processes take part; groups made at once are told apart by their tags.
  MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  int rc = MPI_Comm_group(parent, &all);
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(all, static_cast<int>(procs.size()), procs.data(), &some);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(parent, some, tag, &c);
  if (some != MPI_GROUP_NULL) MPI_Group_free(&some);
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  if (rc != MPI_SUCCESS) fail_exchange(op, "MPI_Comm_create_group: " + mpi_error(rc));
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  std::lock_guard<std::mutex> lock(mu);
  comms->emplace(key, c);
  return c;
}

// Posts one non-blocking collective over `procs` (`post` returns MPI's code) and waits for it.
template <typename Post>
void run(const char* op, const std::vector<int>& procs, Post post,
         const std::function<bool()>& stop) {
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  if (const int rc = post(&req[0]); rc != MPI_SUCCESS) fail_exchange(op, "MPI: " + mpi_error(rc));
  std::vector<int> others;
  for (int p : procs) {
    if (p != process_index()) others.push_back(p);
  }
  const std::string why = mpi_internal::wait_all(req, {-1}, stop, others);
  if (!why.empty()) fail_exchange(op, why);
}

// MPI counts are ints: the largest piece, in elements.
constexpr size_t kMaxCount = size_t{1} << 30;

}  // namespace

size_t elem_size(Elem e) {
  switch (e) {
    case Elem::kF64: case Elem::kI64: case Elem::kU64: return 8;
    case Elem::kF32: case Elem::kI32: case Elem::kU32: return 4;
    case Elem::kI16: case Elem::kU16: return 2;
    case Elem::kI8: case Elem::kU8: return 1;
  }
  return 1;
}

void all_reduce(const char* op, int tag, const std::vector<int>& procs, void* data, size_t count,
                Elem e, Reduction r, const std::function<bool()>& stop) {
  MPI_Comm comm = comm_of(op, tag, procs);
  auto* at = static_cast<char*>(data);
  for (size_t done = 0; done < count; done += kMaxCount) {
    const int n = static_cast<int>(std::min(kMaxCount, count - done));
    run(op, procs, [&](MPI_Request* req) {
      return MPI_Iallreduce(MPI_IN_PLACE, at + done * elem_size(e), n, type_of(e), op_of(e, r),
                            comm, req);
    }, stop);
  }
}

void all_gather(const char* op, int tag, const std::vector<int>& procs, const void* mine,
                const std::vector<size_t>& bytes, void* out, const std::function<bool()>& stop) {
  size_t total = 0;
  std::vector<int> counts, displs;
  for (size_t b : bytes) {
    counts.push_back(static_cast<int>(b));
    displs.push_back(static_cast<int>(total));
    total += b;
  }
  const size_t self = static_cast<size_t>(std::find(procs.begin(), procs.end(), process_index()) -
                                          procs.begin());
  if (total > INT_MAX) {  // past MPI's int displacements: point to point, in pieces
    std::vector<char*> at;
    for (size_t j = 0, off = 0; j < bytes.size(); off += bytes[j++]) {
      at.push_back(static_cast<char*>(out) + off);
    }
    exchange(op, tag, procs, mine, bytes, at, stop);
    if (at[self] != mine) std::memcpy(at[self], mine, bytes[self]);
    return;
  }
  // `mine` may already sit at its place in `out` (MPI forbids the two to overlap otherwise).
  const bool in_place = static_cast<const char*>(out) + displs[self] == mine;
  MPI_Comm comm = comm_of(op, tag, procs);
  run(op, procs, [&](MPI_Request* req) {
    return MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, counts[self], MPI_BYTE, out,
                           counts.data(), displs.data(), MPI_BYTE, comm, req);
  }, stop);
}

void reduce_scatter(const char* op, int tag, const std::vector<int>& procs, const void* in,
                    void* out, const std::vector<size_t>& counts, Elem e, Reduction r,
                    const std::function<bool()>& stop) {
  std::vector<int> n;
  for (size_t c : counts) {
    if (c > kMaxCount) fail(op, "internal: a reduce-scatter share of ", c, " elements");
    n.push_back(static_cast<int>(c));
  }
  MPI_Comm comm = comm_of(op, tag, procs);
  run(op, procs, [&](MPI_Request* req) {
    return MPI_Ireduce_scatter(in, out, n.data(), type_of(e), op_of(e, r), comm, req);
  }, stop);
}

}  // namespace graft::distributed::mpi
