// Retention policies, should_save, deletion, cleanup of temporaries and surfacing of
// background errors. Expected step lists are worked out by hand from the policy in manager.h.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/manager.h"
#include "core/ops.h"
#include "tests/checkpoint/manager_util.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using Steps = std::vector<int64_t>;

using testing::open_or_die;
using testing::small;

TEST(Retention, MaxToKeepKeepsNewest) {
  std::string dir = fresh_dir("keep");
  auto mgr = open_or_die(dir, {.max_to_keep = 3});
  for (int64_t s = 1; s <= 6; ++s) ASSERT_TRUE(mgr->save(s, small(s)).ok());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{4, 5, 6}));
  EXPECT_FALSE(fs::exists(dir + "/3"));
  EXPECT_TRUE(fs::exists(dir + "/4/_COMMITTED"));
}

TEST(Retention, KeepPeriodIsNeverDeleted) {
  std::string dir = fresh_dir("period");
  auto mgr = open_or_die(dir, {.max_to_keep = 2, .keep_period = 4, .enable_async = false});
  for (int64_t s = 1; s <= 10; ++s) ASSERT_TRUE(mgr->save(s, small(s)).ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{4, 8, 9, 10}));
}

TEST(Retention, BestKByMetric) {
  for (BestMode mode : {BestMode::kMin, BestMode::kMax}) {
    std::string dir = fresh_dir("best");
    CheckpointManagerOptions o{.max_to_keep = 2, .enable_async = mode == BestMode::kMax};
    o.best_fn = [](const nlohmann::json& m) { return m.at("loss").get<double>(); };
    o.best_mode = mode;
    auto mgr = open_or_die(dir, o);
    const double loss[] = {0, 5, 1, 4, 2, 3};  // steps 1..5
    for (int64_t s = 1; s <= 5; ++s) {
      ASSERT_TRUE(mgr->save(s, small(s), {.metrics = {{"loss", loss[s]}}}).ok());
    }
    ASSERT_TRUE(mgr->wait_until_finished().ok());
    // min: losses 1 (step 2) and 2 (step 4) best; max: 5 (step 1), 4 (step 3). Plus latest 5.
    EXPECT_EQ(mgr->all_steps(), mode == BestMode::kMin ? (Steps{2, 4, 5}) : (Steps{1, 3, 5}));
    // The ranking survives a restart (metrics are read back from the metadata).
    mgr.reset();
    auto again = open_or_die(dir, o);
    ASSERT_TRUE(again->save(6, small(6), {.metrics = {{"loss", 10.0}}}).ok());
    ASSERT_TRUE(again->wait_until_finished().ok());
    EXPECT_EQ(again->all_steps(), mode == BestMode::kMin ? (Steps{2, 4, 6}) : (Steps{1, 6}));
  }
}

TEST(Manager, ShouldSaveFollowsIntervalAndLatest) {
  std::string dir = fresh_dir("should");
  auto mgr = open_or_die(dir, {.save_interval_steps = 5, .enable_async = false});
  EXPECT_TRUE(mgr->should_save(0));
  EXPECT_FALSE(mgr->should_save(3));
  EXPECT_TRUE(mgr->should_save(10));
  ASSERT_TRUE(mgr->save(3, small(3)).ok());  // skipped: not a multiple of 5
  EXPECT_TRUE(mgr->all_steps().empty());
  ASSERT_TRUE(mgr->save(10, small(10)).ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{10}));
  EXPECT_FALSE(mgr->should_save(5));  // older than the latest
  EXPECT_FALSE(mgr->should_save(10));
  EXPECT_TRUE(mgr->should_save(15));
  ASSERT_TRUE(mgr->save(7, small(7), {.force = true}).ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{7, 10}));
}

TEST(Manager, DeleteStep) {
  std::string dir = fresh_dir("delete");
  auto mgr = open_or_die(dir);
  ASSERT_TRUE(mgr->save(1, small(1)).ok());
  ASSERT_TRUE(mgr->save(2, small(2)).ok());
  ASSERT_TRUE(mgr->delete_step(1).ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{2}));
  EXPECT_FALSE(fs::exists(dir + "/1"));
  EXPECT_EQ(mgr->delete_step(1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(mgr->restore(1).status().code(), absl::StatusCode::kNotFound);
}

TEST(Manager, TemporaryAndUncommittedDirsAreRemovedAndNeverRestored) {
  std::string dir = fresh_dir("tmpdirs");
  {
    auto mgr = open_or_die(dir, {.enable_async = false});
    ASSERT_TRUE(mgr->save(1, small(1)).ok());
    ASSERT_TRUE(mgr->save(2, small(2)).ok());
  }
  // A crash mid-save leaves a temporary dir; one after the rename leaves a step dir without
  // _COMMITTED. Fake both (copies of a good step, so only the marker tells them apart).
  fs::copy(dir + "/2", dir + "/3.orbax-checkpoint-tmp-1234");
  fs::copy(dir + "/2", dir + "/4");
  fs::remove(dir + "/4/_COMMITTED");
  fs::create_directory(dir + "/5.orbax-checkpoint-tmp-99");
  auto mgr = open_or_die(dir, {.enable_async = false});
  EXPECT_EQ(mgr->all_steps(), (Steps{1, 2}));
  EXPECT_EQ(mgr->latest_step(), 2);
  EXPECT_FALSE(fs::exists(dir + "/3.orbax-checkpoint-tmp-1234"));
  EXPECT_FALSE(fs::exists(dir + "/4"));
  EXPECT_FALSE(fs::exists(dir + "/5.orbax-checkpoint-tmp-99"));
  EXPECT_EQ(mgr->restore(4).status().code(), absl::StatusCode::kNotFound);
  // Unrelated files are left alone.
  std::ofstream(dir + "/notes.txt") << "hi";
  mgr.reset();
  open_or_die(dir);
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
}

TEST(Manager, BackgroundErrorSurfacesAtWait) {
  std::string dir = fresh_dir("bgerr");
  auto mgr = open_or_die(dir);
  ASSERT_TRUE(mgr->save(1, small(1)).ok());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  fs::remove_all(dir);  // the background writer cannot create its temporary directory
  ASSERT_TRUE(mgr->save(2, small(2)).ok());  // returns before writing
  absl::Status s = mgr->wait_until_finished();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir), std::string::npos) << s;
  EXPECT_TRUE(mgr->wait_until_finished().ok());  // reported once
  EXPECT_EQ(mgr->latest_step(), 1);              // the in-memory list is unchanged
}

TEST(Manager, BackgroundErrorSurfacesAtNextSave) {
  std::string dir = fresh_dir("bgerr2");
  auto mgr = open_or_die(dir);
  ASSERT_TRUE(mgr->save(1, small(1)).ok());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  fs::remove_all(dir);
  ASSERT_TRUE(mgr->save(2, small(2)).ok());
  absl::Status s = mgr->save(3, small(3));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("previous async save failed"), std::string::npos) << s;
  fs::create_directories(dir);  // the directory is back: saving works again
  ASSERT_TRUE(mgr->save(3, small(3)).ok());
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{1, 3}));
  auto got = mgr->restore(3, {{"x", Item::tree(zeros({2}))}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("x").as<Array>().to_vector<float>(), (std::vector<float>{3, 3}));
}

TEST(Manager, ConcurrentCallersAreSerialized) {
  std::string dir = fresh_dir("threads");
  auto mgr = open_or_die(dir, {.max_to_keep = 4});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        int64_t step = t * 100 + i;
        EXPECT_TRUE(mgr->save(step, small(step), {.force = true}).ok());
        mgr->latest_step();
        mgr->should_save(step);
      }
    });
  }
  for (auto& t : ts) t.join();
  ASSERT_TRUE(mgr->wait_until_finished().ok());
  EXPECT_EQ(mgr->all_steps().size(), 4u);
  for (int64_t s : mgr->all_steps()) {
    auto got = mgr->restore(s, {{"x", Item::tree(zeros({2}))}});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->at("x").as<Array>().to_vector<float>()[0], float(s));
  }
}

}  // namespace
}  // namespace graft::checkpoint
