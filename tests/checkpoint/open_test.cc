// What open() may touch in a checkpoint folder: it removes only what graft itself made (its
// temporary directories, uncommitted step directories holding graft's metadata) and says so;
// it never follows a symlink; and it locks the folder so that a second manager fails clearly.
// (lock_test checks the lock against a second process.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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

void touch(const std::string& path, const std::string& text = "x") { std::ofstream(path) << text; }

TEST(Open, RemovesOnlyWhatGraftMadeAndSaysSo) {
  const std::string dir = fresh_dir("foreign");
  {
    auto mgr = open_or_die(dir, {.enable_async = false});
    ASSERT_TRUE(mgr->save(1, small(1)).ok());
    ASSERT_TRUE(mgr->save(2, small(2)).ok());
  }
  // The user's own directories with step-like names: no graft metadata, or not graft's format.
  fs::create_directory(dir + "/2024");
  touch(dir + "/2024/photo.jpg");
  fs::create_directory(dir + "/7");
  touch(dir + "/7/_CHECKPOINT_METADATA", "{\"not\": \"graft's\"}");
  fs::create_directory(dir + "/2025");  // committed-looking, but no metadata: not a step
  touch(dir + "/2025/_COMMITTED", "");
  fs::copy(dir + "/2", dir + "/0042");  // a graft step under a non-canonical name: not step 42
  fs::create_directory(dir + "/backup.orbax-checkpoint-tmp-1");  // not graft's temporary name
  touch(dir + "/backup.orbax-checkpoint-tmp-1/keep");
  // What graft leaves when a save is interrupted: a temporary directory (before the rename)
  // and a step directory with graft's metadata but no _COMMITTED (after it).
  fs::copy(dir + "/2", dir + "/3.orbax-checkpoint-tmp-0123456789abcdef");
  fs::copy(dir + "/2", dir + "/4");
  fs::remove(dir + "/4/_COMMITTED");

  ::testing::internal::CaptureStderr();
  auto mgr = open_or_die(dir, {.enable_async = false});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(mgr, nullptr);
  EXPECT_EQ(mgr->all_steps(), (Steps{1, 2}));
  std::vector<std::string> removed = mgr->removed_on_open();
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{dir + "/3.orbax-checkpoint-tmp-0123456789abcdef",
                                               dir + "/4"}));
  for (const std::string& p : removed) {
    EXPECT_FALSE(fs::exists(p)) << p;
    EXPECT_NE(err.find(p), std::string::npos) << "stderr does not name " << p << ":\n" << err;
  }
  EXPECT_TRUE(fs::exists(dir + "/2024/photo.jpg"));
  EXPECT_TRUE(fs::exists(dir + "/7/_CHECKPOINT_METADATA"));
  EXPECT_TRUE(fs::exists(dir + "/2025/_COMMITTED"));
  EXPECT_TRUE(fs::exists(dir + "/0042/_COMMITTED"));
  EXPECT_TRUE(fs::exists(dir + "/backup.orbax-checkpoint-tmp-1/keep"));
  EXPECT_EQ(mgr->restore(42).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(mgr->restore(2025).status().code(), absl::StatusCode::kNotFound);
  // Saving over a foreign directory is refused, not a rename onto it.
  EXPECT_EQ(mgr->save(2024, small(2024)).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(fs::exists(dir + "/2024/photo.jpg"));

  // Retention and later opens leave the foreign entries alone as well; a clean folder reports
  // nothing.
  mgr.reset();
  ::testing::internal::CaptureStderr();
  mgr = open_or_die(dir, {.max_to_keep = 1, .enable_async = false});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(mgr->removed_on_open().empty());
  ASSERT_TRUE(mgr->save(3, small(3)).ok());
  EXPECT_EQ(mgr->all_steps(), (Steps{3}));
  EXPECT_TRUE(fs::exists(dir + "/2024/photo.jpg"));
  EXPECT_TRUE(fs::exists(dir + "/0042/_COMMITTED"));
  EXPECT_TRUE(fs::exists(dir + "/2025/_COMMITTED"));
}

TEST(Open, SymlinksAreNeverFollowed) {
  // Another run's folder, whose committed step 3 is linked into ours.
  const std::string other = fresh_dir("link_target");
  {
    auto mgr = open_or_die(other, {.enable_async = false});
    ASSERT_TRUE(mgr->save(3, small(3)).ok());
    ASSERT_TRUE(mgr->save(5, small(5)).ok());
  }
  fs::create_directory(other + "/stuff");
  touch(other + "/stuff/data");
  const std::string dir = fresh_dir("links");
  fs::create_directory_symlink(other + "/3", dir + "/3");
  // A link with graft's temporary name, and one to an uncommitted step: not graft's either.
  fs::create_directory_symlink(other + "/stuff", dir + "/6.orbax-checkpoint-tmp-00000000000000ab");
  fs::create_directory_symlink(other + "/5", dir + "/8");
  fs::remove(other + "/5/_COMMITTED");
  {
    auto mgr = open_or_die(dir, {.max_to_keep = 1, .enable_async = false});
    EXPECT_TRUE(mgr->all_steps().empty());  // a link is not a step
    EXPECT_TRUE(mgr->removed_on_open().empty());
    ASSERT_TRUE(mgr->save(10, small(10)).ok());
    ASSERT_TRUE(mgr->save(11, small(11)).ok());  // retention runs
    EXPECT_EQ(mgr->all_steps(), (Steps{11}));
  }
  EXPECT_TRUE(fs::is_symlink(dir + "/3"));
  EXPECT_TRUE(fs::exists(other + "/3/_COMMITTED"));
  EXPECT_TRUE(fs::exists(other + "/stuff/data"));
  EXPECT_TRUE(fs::exists(other + "/5/_CHECKPOINT_METADATA"));

  // A link inside one of graft's temporary directories: the directory goes, the target stays.
  fs::create_directory(dir + "/12.orbax-checkpoint-tmp-00000000000000cd");
  fs::create_directory_symlink(other + "/stuff",
                               dir + "/12.orbax-checkpoint-tmp-00000000000000cd/link");
  {
    auto mgr = open_or_die(dir);
    EXPECT_FALSE(fs::exists(dir + "/12.orbax-checkpoint-tmp-00000000000000cd"));
  }
  EXPECT_TRUE(fs::exists(other + "/stuff/data"));
  auto again = open_or_die(other, {.enable_async = false});
  EXPECT_EQ(again->all_steps(), (Steps{3}));  // the other run still has its step
  auto got = again->restore(3, {{"x", Item::tree(zeros({2}))}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("x").as<Array>().to_vector<float>(), (std::vector<float>{3, 3}));
}

TEST(Open, SecondManagerOnTheSameFolderFailsClearly) {
  const std::string dir = fresh_dir("lock");
  auto first = open_or_die(dir);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->save(1, small(1)).ok());
  auto second = CheckpointManager::open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(second.status().message());
  EXPECT_NE(msg.find(dir), std::string::npos) << msg;
  EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_NE(msg.find(host), std::string::npos) << msg;
  ASSERT_TRUE(first->wait_until_finished().ok());
  EXPECT_EQ(first->all_steps(), (Steps{1}));
  first.reset();  // releases the lock
  auto third = open_or_die(dir);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->all_steps(), (Steps{1}));
}

// read_only (Orbax's): a reader beside the writer that holds the lock; it lists and restores
// the steps, creates and removes nothing, and refuses to save or delete.
TEST(Open, ReadOnlyRestoresAndRefusesToWrite) {
  const std::string dir = fresh_dir("read_only");
  auto writer = open_or_die(dir, {.enable_async = false});
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->save(1, small(1)).ok());
  fs::create_directory(dir + "/3.orbax-checkpoint-tmp-0123abcd");  // a writer's open() removes it
  auto reader = CheckpointManager::open(dir, {.read_only = true});
  ASSERT_TRUE(reader.ok()) << reader.status();  // no lock taken: the writer holds it
  EXPECT_EQ((*reader)->all_steps(), (Steps{1}));
  auto got = (*reader)->restore(1, small(0));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->at("x").as<Array>().to_vector<double>(), (std::vector<double>{1, 1}));
  absl::Status saved = (*reader)->save(2, small(2));
  EXPECT_EQ(saved.code(), absl::StatusCode::kFailedPrecondition) << saved;
  EXPECT_NE(saved.message().find("cannot save step 2: " + dir + " was opened read_only"),
            std::string::npos)
      << saved;
  EXPECT_EQ((*reader)->delete_step(1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(fs::exists(dir + "/1"));
  EXPECT_TRUE(fs::exists(dir + "/3.orbax-checkpoint-tmp-0123abcd"));
  // A folder that is not there is not made.
  auto missing = CheckpointManager::open(dir + "/absent", {.read_only = true});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  EXPECT_FALSE(fs::exists(dir + "/absent"));
}

}  // namespace
}  // namespace graft::checkpoint
