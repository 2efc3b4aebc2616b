// The in-process communicator: the devices of one shard_map, each a virtual device's thread in
// this process, exchanging buffers through shared memory.
//
// Every member makes the same collective calls in the same order (the body is one program,
// SPMD). exchange publishes a member's buffer and returns once every member has published
// theirs; done waits until every member has finished reading, so a buffer published is valid
// until its owner returns from done. If a member fails, abort makes every waiting and later
// call throw graft::Error instead of waiting forever.
//
// Threads: groups are made per shard_map call, used by its devices' threads only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/sharding/axis.h"

namespace graft::distributed {

class InProcessGroup {
 public:
  explicit InProcessGroup(int size);
  int size() const { return size_; }
  // Member `rank` publishes `mine`; returns every member's, by rank. `op` names errors.
  const std::vector<const void*>& exchange(const char* op, int rank, const void* mine);
  void done(const char* op);
  void abort(const std::string& why);
  bool aborted();

 private:
  void barrier(const char* op, std::unique_lock<std::mutex>& lock);

  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<const void*> slots_;
  bool aborted_ = false;
  std::string why_;
};

// A group whose members are on several processes (multi-process runs, core/distributed/mpi.h):
// where each member rank lives. The members of this process meet in an InProcessGroup of their
// own (ranks `here`, in that order); its first member exchanges with the other processes.
struct GroupLayout {
  std::vector<int> process;  // per member rank: the process of its device
  std::vector<int> local;    // per member rank: its index in `here`, or -1 on another process
  std::vector<int> here;     // this process's member ranks, ascending
  std::vector<int> procs;    // the processes with members, ascending
  // The members' inputs packed by process (procs order), then by rank: per process its count
  // of members and where its first one starts, per rank its position (in members).
  std::vector<int> count_of, first_of, slot;
  int self = 0;              // this process's index in procs
  int tag = 0;               // tells this group's messages apart (mpi::exchange)
  int size() const { return static_cast<int>(process.size()); }
};

// What a collective kernel running on a device of a shard_map (or pmap) sees: for a set of
// mesh axes, the group of devices that share their coordinates on the other axes, and its
// rank there. layout is null when every member is in this process (group ranks are then
// member ranks).
struct Membership {
  AxisMask axes = 0;
  InProcessGroup* group = nullptr;
  int rank = 0;
  const GroupLayout* layout = nullptr;
  int size() const { return layout != nullptr ? layout->size() : group->size(); }
  int local_rank() const { return layout != nullptr ? layout->local[rank] : rank; }
};

// Makes this thread member `rank` of `group` for the set `axes` while it lives.
class MemberScope {
 public:
  MemberScope(AxisMask axes, InProcessGroup* group, int rank,
              const GroupLayout* layout = nullptr);
  ~MemberScope();
  MemberScope(const MemberScope&) = delete;
  MemberScope& operator=(const MemberScope&) = delete;
};

// This thread's membership for exactly the axes of `mask`; "[op] ..." if there is none (a
// collective run outside its shard_map).
const Membership& membership(const char* op, AxisMask mask);

}  // namespace graft::distributed
