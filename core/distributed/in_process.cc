#include "core/distributed/in_process.h"

#include "core/error.h"

namespace graft::distributed {

namespace {
thread_local std::vector<Membership> memberships;
}  // namespace

InProcessGroup::InProcessGroup(int size) : size_(size), slots_(static_cast<size_t>(size)) {}

void InProcessGroup::barrier(const char* op, std::unique_lock<std::mutex>& lock) {
  if (aborted_) fail(op, "another device of the shard_map failed: ", why_);
  const uint64_t gen = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
  if (generation_ == gen) fail(op, "another device of the shard_map failed: ", why_);
}

const std::vector<const void*>& InProcessGroup::exchange(const char* op, int rank,
                                                         const void* mine) {
  std::unique_lock<std::mutex> lock(mu_);
  slots_[static_cast<size_t>(rank)] = mine;
  barrier(op, lock);
  return slots_;  // not written again before every member passed done()
}

void InProcessGroup::done(const char* op) {
  std::unique_lock<std::mutex> lock(mu_);
  barrier(op, lock);
}

void InProcessGroup::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_) why_ = why;
  aborted_ = true;
  cv_.notify_all();
}

bool InProcessGroup::aborted() {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

MemberScope::MemberScope(AxisMask axes, InProcessGroup* group, int rank,
                         const GroupLayout* layout) {
  memberships.push_back({axes, group, rank, layout});
}

MemberScope::~MemberScope() { memberships.pop_back(); }

const Membership& membership(const char* op, AxisMask mask) {
  for (size_t i = memberships.size(); i-- > 0;) {
    if (memberships[i].axes == mask) return memberships[i];
  }
  fail(op, "axes ", vma_str(mask), " are not axes of a running shard_map on this device");
}

}  // namespace graft::distributed
