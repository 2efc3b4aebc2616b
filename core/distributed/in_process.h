// The in-process communicator: the members of one pmap, each a virtual device's thread in
// this process, exchanging buffers through shared memory.
//
// Every member makes the same collective calls in the same order (the body is one program,
// SPMD). exchange publishes a member's buffer and returns once every member has published
// theirs; done waits until every member has finished reading, so a buffer published is valid
// until its owner returns from done. If a member fails, abort makes every waiting and later
// call throw graft::Error instead of waiting forever.
//
// Threads: one group per pmap call, used by its members' threads only.
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

// What a collective kernel running as a pmap member sees: its group and rank for an axis.
struct Membership {
  int axis_bit = -1;
  InProcessGroup* group = nullptr;
  int rank = 0;
};

// Makes this thread member `rank` of `group` for `axis_bit` while it lives.
class MemberScope {
 public:
  MemberScope(int axis_bit, InProcessGroup* group, int rank);
  ~MemberScope();
  MemberScope(const MemberScope&) = delete;
  MemberScope& operator=(const MemberScope&) = delete;
};

// This thread's membership for the one axis of `mask`; "[op] ..." if the mask names several
// axes or none this thread is a member for (a collective run outside its pmap).
const Membership& membership(const char* op, AxisMask mask);

}  // namespace graft::distributed
