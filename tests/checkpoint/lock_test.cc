// Two processes on one checkpoint folder: while crash_child (a real second process) saves in
// a loop, open() here fails with a message naming it, and never disturbs its saves; once it
// is killed, the kernel drops its lock and open() works. The other way round, the child
// fails to open a folder this process holds and names this process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "checkpoint/manager.h"
#include "tests/checkpoint/crash_common.h"

namespace graft::checkpoint {
namespace {

namespace fs = std::filesystem;

struct Child {
  pid_t pid = -1;
  int out = -1;  // the child's stdout ("R" once its manager is open)
  int err = -1;  // its stderr
};

Child spawn(const std::string& dir) {
  const std::string child = testing::crash_child_path();
  int out[2], err[2];
  Child c;
  if (::pipe(out) != 0 || ::pipe(err) != 0) return c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    ::execl(child.c_str(), child.c_str(), dir.c_str(), "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  c.out = out[0];
  c.err = err[0];
  return c;
}

std::string read_all(int fd) {
  std::string s;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

std::string hostname() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

TEST(Lock, SecondProcessIsRefusedAndTheFirstKeepsSaving) {
  ASSERT_TRUE(fs::exists(testing::crash_child_path())) << testing::crash_child_path();
  const std::string dir = testing::fresh_dir("lock_proc");
  Child c = spawn(dir);
  ASSERT_GT(c.pid, 0);
  char r = 0;
  ASSERT_EQ(::read(c.out, &r, 1), 1) << "child did not start: " << read_all(c.err);
  // The child saves steps back to back (async, each through a temporary directory); open here
  // again and again, as a second run started by mistake would.
  for (int i = 0; i < 50; ++i) {
    auto m = CheckpointManager::open(dir, {.enable_async = false});
    ASSERT_FALSE(m.ok()) << "attempt " << i << " opened a folder another process writes";
    EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string msg(m.status().message());
    EXPECT_NE(msg.find("pid " + std::to_string(c.pid)), std::string::npos) << msg;
    EXPECT_NE(msg.find(hostname()), std::string::npos) << msg;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int status = 0;
  EXPECT_EQ(::waitpid(c.pid, &status, WNOHANG), 0)
      << "the saving child died: " << read_all(c.err);  // its saves were not disturbed
  ::kill(c.pid, SIGKILL);
  ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
  ::close(c.out);
  ::close(c.err);

  auto m = CheckpointManager::open(dir, {.enable_async = false});
  ASSERT_TRUE(m.ok()) << m.status();  // a killed holder's lock is gone with it
  std::optional<int64_t> latest = (*m)->latest_step();
  ASSERT_TRUE(latest.has_value());
  testing::CrashState want = testing::crash_state(*latest);
  auto got = (*m)->restore(*latest, {{"params", Item::tree(want.params)},
                                     {"opt", Item::tree(want.opt)},
                                     {"loader", Item::json(nullptr)}});
  ASSERT_TRUE(got.ok()) << got.status();
  auto params = got->at("params").as<std::vector<Array>>();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(testing::same_bytes(params[i], want.params[i]));
  }
}

TEST(Lock, ChildIsRefusedAFolderThisProcessHolds) {
  ASSERT_TRUE(fs::exists(testing::crash_child_path())) << testing::crash_child_path();
  const std::string dir = testing::fresh_dir("lock_parent");
  auto m = CheckpointManager::open(dir, {.enable_async = false});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*m)->save(1, testing::crash_items(1)).ok());
  Child c = spawn(dir);
  ASSERT_GT(c.pid, 0);
  int status = 0;
  bool exited = false;  // before the lock, the child opened the folder and saved forever
  for (int i = 0; i < 3000 && !exited; ++i) {
    exited = ::waitpid(c.pid, &status, WNOHANG) == c.pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    ::kill(c.pid, SIGKILL);
    ::waitpid(c.pid, &status, 0);
  }
  const std::string out = read_all(c.out);
  const std::string err = read_all(c.err);
  ::close(c.out);
  ::close(c.err);
  ASSERT_TRUE(exited) << "the child opened the folder and kept saving";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_EQ(out, "") << "the child opened the folder";
  EXPECT_NE(err.find("pid " + std::to_string(::getpid())), std::string::npos) << err;
  EXPECT_NE(err.find(hostname()), std::string::npos) << err;
  EXPECT_EQ((*m)->all_steps(), std::vector<int64_t>{1});
  EXPECT_TRUE(fs::exists(dir + "/1/_COMMITTED"));
}

}  // namespace
}  // namespace graft::checkpoint
