// The in-process group: every member sees every member's buffer, rounds do not mix, and a
// failing member releases the others with an error instead of leaving them waiting.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/distributed/in_process.h"
#include "core/error.h"
#include "gtest/gtest.h"

namespace graft::distributed {
namespace {

TEST(InProcessGroupTest, EveryMemberSeesEveryBufferRoundAfterRound) {
  constexpr int kMembers = 4, kRounds = 200;
  InProcessGroup group(kMembers);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kMembers; ++r) {
    threads.emplace_back([&, r] {
      for (int round = 0; round < kRounds; ++round) {
        int mine = round * 100 + r;
        const std::vector<const void*>& all = group.exchange("test", r, &mine);
        for (int q = 0; q < kMembers; ++q) {
          if (*static_cast<const int*>(all[q]) != round * 100 + q) ++wrong;
        }
        group.done("test");  // `mine` stays valid until every member has read it
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(InProcessGroupTest, AbortReleasesWaitingMembersWithTheReason) {
  InProcessGroup group(3);
  std::vector<std::string> errors(2);
  std::vector<std::thread> waiting;
  for (int r = 0; r < 2; ++r) {
    waiting.emplace_back([&, r] {
      int mine = r;
      try {
        group.exchange("psum", r, &mine);
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  }
  // Member 2 fails before it reaches the collective.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  group.abort("device 2: out of memory");
  for (std::thread& t : waiting) t.join();
  for (const std::string& e : errors) {
    EXPECT_EQ(e, "[psum] another device of the shard_map failed: device 2: out of memory");
  }
  // Later calls fail at once too.
  int x = 0;
  EXPECT_THROW(group.exchange("psum", 2, &x), Error);
}

TEST(MembershipTest, ACollectiveOutsideItsShardMapIsAnError) {
  try {
    membership("psum", AxisMask{1} << axis_bit("nowhere"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[psum] axes {nowhere} are not axes of a running shard_map on this device");
  }
  InProcessGroup g(1);
  MemberScope scope(AxisMask{1} << axis_bit("here"), &g, 0);
  EXPECT_EQ(membership("psum", AxisMask{1} << axis_bit("here")).group, &g);
}

}  // namespace
}  // namespace graft::distributed
