// A full disk while writing data files: the error names the cause (strerror) and no
// temporary is left behind. The full disk is a file size limit (RLIMIT_FSIZE) in a forked
// child with SIGXFSZ ignored, so write(2) fails with EFBIG partway through a file, as it
// would with ENOSPC; no root or special mount needed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "data/prepare.h"
#include "data/token_file.h"

namespace graft::data {
namespace {
namespace fs = std::filesystem;

std::string tmp_dir(const std::string& name) {
  const auto dir = fs::path(testing::TempDir()) / "disk_full_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

struct Outcome {
  int code = -1;  // absl::StatusCode, -1 when the child did not report
  std::string message;
};

// Runs f in a child process whose files may not grow past limit_bytes.
Outcome with_file_size_limit(rlim_t limit_bytes, const std::function<absl::Status()>& f) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{limit_bytes, limit_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(3);
    const absl::Status s = f();
    const std::string report =
        std::to_string(static_cast<int>(s.code())) + " " + std::string(s.message());
    (void)!::write(pipe_fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string report;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) {
    report.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Outcome o;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || report.empty()) return o;
  const size_t space = report.find(' ');
  o.code = std::stoi(report.substr(0, space));
  o.message = space == std::string::npos ? "" : report.substr(space + 1);
  return o;
}

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp") != std::string::npos) out.push_back(name);
  }
  return out;
}

const std::string kFileTooLarge = std::strerror(EFBIG);

TEST(DiskFull, TokenFileKeepsTheOldFileAndLeavesNoTemporary) {
  const std::string dir = tmp_dir("token_file");
  const std::string path = dir + "/train.tokens";
  ASSERT_TRUE(write_token_file(path, {1, 2, 3}, 300).ok());
  const std::vector<int32_t> big(10000, 7);  // 20,032 bytes: over the limit below
  const Outcome o = with_file_size_limit(4096, [&] { return write_token_file(path, big, 300); });
  ASSERT_NE(o.code, -1) << "the child did not report";
  EXPECT_EQ(o.code, static_cast<int>(absl::StatusCode::kResourceExhausted)) << o.message;
  EXPECT_NE(o.message.find(kFileTooLarge), std::string::npos) << o.message;
  EXPECT_NE(o.message.find(path), std::string::npos) << o.message;
  EXPECT_EQ(temporaries(dir), std::vector<std::string>{});
  auto old = TokenFile::open(path);  // the previous content is intact
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ((*old)->read_all(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(DiskFull, PrepareNamesTheCauseAndLeavesNoTemporary) {
  const std::string dir = tmp_dir("prepare");
  const std::string corpus = dir + "/corpus.txt";
  {
    std::ofstream out(corpus);
    for (int i = 0; i < 400; ++i) out << "Paragraph " << i << " of a corpus that fills a disk.\n\n";
  }
  PrepareOptions o;
  o.input = corpus;
  o.out_dir = dir + "/out";
  o.tokenizer = "byte";
  o.val_fraction = 0.1;
  // 16 bytes: the tokenizer file fails; 4096: the tokenizer fits, train.tokens (~40 KB) fails.
  for (rlim_t limit : {rlim_t{16}, rlim_t{4096}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    const Outcome got = with_file_size_limit(limit, [&] { return prepare(o).status(); });
    ASSERT_NE(got.code, -1) << "the child did not report";
    EXPECT_EQ(got.code, static_cast<int>(absl::StatusCode::kResourceExhausted)) << got.message;
    EXPECT_NE(got.message.find(kFileTooLarge), std::string::npos) << got.message;
    EXPECT_NE(got.message.find(limit == 16 ? "tokenizer.txt" : "train.tokens"), std::string::npos)
        << got.message;
    EXPECT_EQ(temporaries(o.out_dir), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(o.out_dir + "/meta.json"));  // never looks complete
  }
  auto r = prepare(o);  // with room again, it completes
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->reused);
  EXPECT_GT(r->train_tokens, 4096);
  EXPECT_EQ(temporaries(o.out_dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace graft::data
