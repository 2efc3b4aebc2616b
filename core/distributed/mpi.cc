#include "core/distributed/mpi.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/device/device.h"
#include "core/distributed/mpi_internal.h"
#include "core/distributed/world.h"
#include "core/error.h"

namespace graft::distributed {
namespace {

// Messages are cut into pieces MPI's int counts can hold.
constexpr size_t kChunk = size_t{1} << 30;

struct State {
  bool initialized = false;
  MPI_Comm data = MPI_COMM_NULL;  // collectives of programs (device threads)
  MPI_Comm sync = MPI_COMM_NULL;  // barriers (any one thread, e.g. the checkpoint writer)
  MPI_Comm agree = MPI_COMM_NULL;  // allgather (agreement checks), one call at a time
  std::mutex agree_mu;
  int rank = 0;
  int size = 1;
  double timeout_s = 300;
  std::atomic<bool> broken{false};  // an exchange gave up: its messages may still arrive
};

State& state() {
  static auto* s = new State();
  return *s;
}
std::mutex init_mu;

void finalize_at_exit() {
  // After an exchange gave up, a partner may be hung: MPI_Finalize would wait for it forever.
  // Exiting without it makes mpirun end the job, the hung processes included.
  if (state().broken) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

namespace mpi_internal {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

std::string wait_all(std::vector<MPI_Request>& reqs, const std::vector<int>& peer,
                     const std::function<bool()>& stop, const std::vector<int>& others) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> done_at(reqs.size());
  for (int spin = 0;; ++spin) {
    int count = 0;
    const int rc = MPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &count,
                                done_at.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(rc);
    if (std::all_of(reqs.begin(), reqs.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; })) {
      return "";
    }
    std::string why;
    if (stop && stop()) why = "stopped: another device of the shard_map failed";
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (why.empty() && waited > state().timeout_s) {
      std::vector<int> silent;
      for (size_t k = 0; k < reqs.size(); ++k) {
        if (reqs[k] != MPI_REQUEST_NULL &&
            std::find(silent.begin(), silent.end(), peer[k]) == silent.end()) {
          silent.push_back(peer[k]);
        }
      }
      if (silent == std::vector<int>{-1}) silent = others;  // a collective: one of them
      std::sort(silent.begin(), silent.end());
      std::string who;
      for (int p : silent) absl::StrAppend(&who, who.empty() ? "" : " or ", p);
      why = absl::StrCat("no answer from ", who.empty() ? "the other processes" : "process " + who,
                         " in ", state().timeout_s, " s (GRAFT_DISTRIBUTED_TIMEOUT_S)");
    }
    if (!why.empty()) {
      for (size_t k = 0; k < reqs.size(); ++k) {  // a collective's request cannot be cancelled
        if (reqs[k] != MPI_REQUEST_NULL && peer[k] >= 0) MPI_Cancel(&reqs[k]);
      }
      state().broken = true;
      return why;
    }
    // Each test call also moves MPI's transfers along (a large message goes in pieces), so
    // poll without sleeping for a while, then back off (a partner that is still computing).
    if (waited < 0.05) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(spin % 64 == 0 ? 200 : 20));
    }
  }
}

[[noreturn]] void fail_exchange(const char* op, const std::string& why) {
  throw DistributedError(str_cat("[", op, "] ", why));
}

MPI_Comm data_comm(const char* op) {
  State& s = state();
  if (!s.initialized) fail(op, "internal: an exchange between processes before initialize");
  if (s.broken) fail_exchange(op, "an earlier exchange between processes failed");
  return s.data;
}

}  // namespace mpi_internal

namespace {

using mpi_internal::fail_exchange;
using mpi_internal::mpi_error;
using mpi_internal::wait_all;

// mpi::send_receive on communicator `comm`.
void send_receive_on(MPI_Comm comm, const char* op, int tag, const std::vector<int>& procs,
                     const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                     const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes,
                     const std::function<bool()>& stop, bool skip_empty) {
  mpi_internal::data_comm(op);  // initialized, not broken
  State& s = state();
  if (tag < 0 || tag >= mpi::kMaxTag) fail(op, "internal: tag ", tag, " out of range");
  const auto self = std::find(procs.begin(), procs.end(), s.rank);
  if (self == procs.end()) fail(op, "internal: this process is not in the exchange");
  const size_t me = static_cast<size_t>(self - procs.begin());
  std::vector<MPI_Request> reqs;
  std::vector<int> peer_of;
  auto post = [&](bool to, int peer, char* data, size_t n) {
    if (n == 0 && skip_empty) return;
    for (size_t off = 0; off == 0 || off < n; off += kChunk) {
      const int count = static_cast<int>(std::min(kChunk, n - off));
      MPI_Request r;
      const int rc = to ? MPI_Isend(data + off, count, MPI_BYTE, peer, tag, comm, &r)
                        : MPI_Irecv(data + off, count, MPI_BYTE, peer, tag, comm, &r);
      if (rc != MPI_SUCCESS) {
        fail_exchange(op, str_cat("MPI ", to ? "send to" : "receive from", " process ", peer,
                                  ": ", mpi_error(rc)));
      }
      reqs.push_back(r);
      peer_of.push_back(peer);
      if (n == 0) break;
    }
  };
  for (size_t j = 0; j < procs.size(); ++j) {
    if (j == me) continue;
    post(false, procs[j], recv[j], recv_bytes[j]);
    post(true, procs[j], const_cast<char*>(send[j]), send_bytes[j]);
  }
  const std::string why = wait_all(reqs, peer_of, stop);
  if (!why.empty()) fail_exchange(op, why);
}

// mpi::exchange on communicator `comm`: the same bytes to every process.
void exchange_on(MPI_Comm comm, const char* op, int tag, const std::vector<int>& procs,
                 const void* mine, const std::vector<size_t>& bytes, const std::vector<char*>& out,
                 const std::function<bool()>& stop) {
  const auto self = std::find(procs.begin(), procs.end(), state().rank);
  const size_t me = static_cast<size_t>(self - procs.begin());
  const size_t n = me < bytes.size() ? bytes[me] : 0;
  send_receive_on(comm, op, tag, procs,
                  std::vector<const char*>(procs.size(), static_cast<const char*>(mine)),
                  std::vector<size_t>(procs.size(), n), out, bytes, stop, /*skip_empty=*/false);
}

}  // namespace

absl::Status initialize() {
  std::lock_guard<std::mutex> lock(init_mu);
  State& s = state();
  if (s.initialized) return absl::OkStatus();
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      return absl::UnavailableError("distributed::initialize: MPI_Init_thread failed");
    }
    std::atexit(finalize_at_exit);
    if (provided < MPI_THREAD_MULTIPLE) {
      return absl::UnavailableError(
          "distributed::initialize: this MPI does not support MPI_THREAD_MULTIPLE (device "
          "threads of a process exchange concurrently)");
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  void* ub = nullptr;
  int has_ub = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &has_ub);
  if (has_ub && *static_cast<int*>(ub) < mpi::kMaxTag) {
    return absl::UnavailableError(absl::StrCat("distributed::initialize: MPI's largest tag is ",
                                               *static_cast<int*>(ub), ", graft needs ",
                                               mpi::kMaxTag));
  }
  if (const char* t = std::getenv("GRAFT_DISTRIBUTED_TIMEOUT_S"); t != nullptr && *t != '\0') {
    const double v = std::atof(t);
    if (!(v > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "distributed::initialize: GRAFT_DISTRIBUTED_TIMEOUT_S=", t, " is not a positive number"));
    }
    s.timeout_s = v;
  }
  absl::StatusOr<int> mine = cpu_device_count_from_env(std::getenv("GRAFT_CPU_DEVICES"));
  // Every process takes part in the count exchange, even one with a bad value, so the others
  // do not wait for it; 0 marks the bad one.
  int local = mine.ok() ? *mine : 0;
  std::vector<int> counts(static_cast<size_t>(s.size));
  int rc = MPI_Allgather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return absl::UnavailableError("distributed::initialize: " + mpi_error(rc));
  if (!mine.ok()) return mine.status();
  for (int p = 0; p < s.size; ++p) {
    if (counts[p] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("distributed::initialize: process ", p, " has a bad GRAFT_CPU_DEVICES"));
    }
  }
  if (absl::Status st = detail::set_process_world(s.rank, counts); !st.ok()) {
    return absl::FailedPreconditionError("distributed::initialize: " + std::string(st.message()));
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &s.data);
  MPI_Comm_dup(MPI_COMM_WORLD, &s.sync);
  MPI_Comm_dup(MPI_COMM_WORLD, &s.agree);
  for (MPI_Comm c : {s.data, s.sync, s.agree}) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  s.initialized = true;
  return absl::OkStatus();
}

bool initialized() {
  std::lock_guard<std::mutex> lock(init_mu);
  return state().initialized;
}

absl::Status barrier(const char* name) {
  if (process_count() == 1) return absl::OkStatus();
  State& s = state();
  if (s.broken) {
    return absl::UnavailableError(absl::StrCat("barrier '", name,
                                               "': an earlier exchange between processes failed"));
  }
  std::vector<MPI_Request> req(1);
  int rc = MPI_Ibarrier(s.sync, req.data());
  if (rc != MPI_SUCCESS) return absl::UnavailableError(absl::StrCat("barrier '", name, "': ",
                                                                     mpi_error(rc)));
  std::vector<int> others;
  for (int p = 0; p < s.size; ++p) {
    if (p != s.rank) others.push_back(p);
  }
  std::string why = wait_all(req, {-1}, nullptr, others);
  if (!why.empty()) return absl::UnavailableError(absl::StrCat("barrier '", name, "': ", why));
  return absl::OkStatus();
}

namespace mpi {

std::vector<std::string> allgather(const char* op, const std::string& mine) {
  State& s = state();
  if (!s.initialized) return {mine};
  std::lock_guard<std::mutex> lock(s.agree_mu);
  // Point to point rather than MPI_Iallgather: a timeout then names the processes that did
  // not answer.
  std::vector<int> all(static_cast<size_t>(s.size));
  for (int p = 0; p < s.size; ++p) all[p] = p;
  std::vector<uint64_t> sizes(static_cast<size_t>(s.size));
  sizes[s.rank] = mine.size();
  std::vector<char*> at;
  for (uint64_t& n : sizes) at.push_back(reinterpret_cast<char*>(&n));
  exchange_on(s.agree, op, /*tag=*/0, all, &sizes[s.rank],
              std::vector<size_t>(sizes.size(), sizeof(uint64_t)), at, nullptr);
  std::vector<std::string> out(static_cast<size_t>(s.size));
  std::vector<size_t> bytes;
  at.clear();
  for (int p = 0; p < s.size; ++p) {
    out[p] = p == s.rank ? mine : std::string(sizes[p], '\0');
    bytes.push_back(sizes[p]);
    at.push_back(out[p].data());
  }
  exchange_on(s.agree, op, /*tag=*/1, all, mine.data(), bytes, at, nullptr);
  return out;
}

void exchange(const char* op, int tag, const std::vector<int>& procs, const void* mine,
              const std::vector<size_t>& bytes, const std::vector<char*>& out,
              const std::function<bool()>& stop) {
  exchange_on(state().data, op, tag, procs, mine, bytes, out, stop);
}

void send_receive(const char* op, int tag, const std::vector<int>& procs,
                  const std::vector<const char*>& send, const std::vector<size_t>& send_bytes,
                  const std::vector<char*>& recv, const std::vector<size_t>& recv_bytes,
                  const std::function<bool()>& stop) {
  send_receive_on(state().data, op, tag, procs, send, send_bytes, recv, recv_bytes, stop,
                  /*skip_empty=*/true);
}

}  // namespace mpi
}  // namespace graft::distributed
