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

#include "core/axis.h"

namespace graft::distributed {

class InProcessGroup {
 public:
  explicit InProcessGroup(int size);
  int size() const { return size_; }
  // Member `rank` publishes `mine`; returns every member's, by rank. `op` names errors.
  const std::vector<const void*>& exchange(const char* op, int rank, const void* mine);
  void done(const char* op);
  void abort(const std::string& why);

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

// What a collective kernel running on a device of a shard_map (or pmap) sees: for a set of
// mesh axes, the group of devices that share their coordinates on the other axes, and its
// rank there.
struct Membership {
  AxisMask axes = 0;
  InProcessGroup* group = nullptr;
  int rank = 0;
};

// Makes this thread member `rank` of `group` for the set `axes` while it lives.
class MemberScope {
 public:
  MemberScope(AxisMask axes, InProcessGroup* group, int rank);
  ~MemberScope();
  MemberScope(const MemberScope&) = delete;
  MemberScope& operator=(const MemberScope&) = delete;
};

// This thread's membership for exactly the axes of `mask`; "[op] ..." if there is none (a
// collective run outside its shard_map).
const Membership& membership(const char* op, AxisMask mask);

}  // namespace graft::distributed
