// Token files and loaders: header round trips and errors, batches = windows of the file with
// targets shifted by one, per-epoch permutations of non-overlapping windows, determinism,
// resume from a saved LoaderState, the sequential validation loader.
#include "data/loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/ops.h"
#include "data/rng.h"
#include "data/token_file.h"

namespace graft::data {
namespace {

std::string tmp_path(const std::string& name) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "loader_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// tokens[i] = (i * 7 + 3) % vocab: every window is recognisable from its first token.
std::vector<int32_t> pattern(int64_t n, int64_t vocab) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>((i * 7 + 3) % vocab);
  return v;
}

// A file where token i == i (vocab > n), so a window's first input is its start offset.
std::string identity_file(const std::string& name, int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i);
  const std::string p = tmp_path(name);
  EXPECT_TRUE(write_token_file(p, v, n).ok());
  return p;
}

TEST(TokenFile, RoundTripsBothWidthsWithTheDocumentedHeader) {
  for (int64_t vocab : {300, 65535, 65536, 100000}) {
    const auto tokens = pattern(1000, vocab);
    auto with_max = tokens;
    with_max.push_back(static_cast<int32_t>(vocab - 1));
    const std::string p = tmp_path("w" + std::to_string(vocab) + ".tokens");
    ASSERT_TRUE(write_token_file(p, with_max, vocab).ok());
    const int width = vocab <= 65535 ? 2 : 4;
    const std::string bytes = read(p);
    ASSERT_EQ(bytes.size(), 32 + with_max.size() * width);
    EXPECT_EQ(bytes.substr(0, 8), "GRAFTTOK");
    EXPECT_EQ(static_cast<unsigned char>(bytes[12]), width);
    // First token little-endian right after the header.
    EXPECT_EQ(static_cast<unsigned char>(bytes[32]), with_max[0] & 0xFF);
    auto f = TokenFile::open(p);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ((*f)->width(), width);
    EXPECT_EQ((*f)->vocab_size(), vocab);
    EXPECT_EQ((*f)->read_all(), with_max);
  }
  EXPECT_EQ(write_token_file(tmp_path("bad.tokens"), {0, 5}, 5).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TokenFile, OpenErrors) {
  const std::string good = tmp_path("good.tokens");
  ASSERT_TRUE(write_token_file(good, pattern(100, 50), 50).ok());
  const std::string bytes = read(good);
  const std::string p = tmp_path("broken.tokens");
  EXPECT_EQ(TokenFile::open(tmp_path("missing.tokens")).status().code(),
            absl::StatusCode::kNotFound);
  auto expect = [&](const std::string& content, absl::StatusCode code, const std::string& why) {
    write(p, content);
    auto f = TokenFile::open(p);
    ASSERT_FALSE(f.ok()) << why;
    EXPECT_EQ(f.status().code(), code) << f.status();
    EXPECT_NE(f.status().message().find(why), std::string::npos) << f.status();
  };
  expect("", absl::StatusCode::kDataLoss, "truncated header");
  expect(bytes.substr(0, 20), absl::StatusCode::kDataLoss, "truncated header");
  std::string magic = bytes;
  magic[0] = 'X';
  expect(magic, absl::StatusCode::kDataLoss, "bad magic");
  expect(bytes.substr(0, bytes.size() - 1), absl::StatusCode::kDataLoss, "truncated");
  expect(bytes.substr(0, bytes.size() - 2), absl::StatusCode::kDataLoss, "truncated");
  expect(bytes + "xx", absl::StatusCode::kDataLoss, "header says");
  std::string width = bytes;
  width[12] = 3;
  expect(width, absl::StatusCode::kInvalidArgument, "width 3");
  std::string narrow = bytes;  // u16 elements claiming a vocab that needs u32
  narrow[24] = 0;
  narrow[25] = 0;
  narrow[26] = 1;  // vocab_size 65536
  expect(narrow, absl::StatusCode::kInvalidArgument, "cannot hold");
  std::string version = bytes;
  version[8] = 9;
  expect(version, absl::StatusCode::kInvalidArgument, "version");
  std::string id = bytes;  // token 0 := 60 >= vocab 50
  id[32] = 60;
  id[33] = 0;
  expect(id, absl::StatusCode::kDataLoss, ">= vocab_size");
}

TEST(TokenLoader, TargetsAreInputsShiftedAndWindowsComeFromTheFile) {
  const int64_t n = 1000, vocab = 97;
  const auto tokens = pattern(n, vocab);
  const std::string p = tmp_path("pattern.tokens");
  ASSERT_TRUE(write_token_file(p, tokens, vocab).ok());
  auto l = TokenLoader::open(p, 4, 16, 7);
  ASSERT_TRUE(l.ok()) << l.status();
  for (int step = 0; step < 30; ++step) {
    Batch b = l->next();
    EXPECT_EQ(b.inputs.shape(), (Shape{4, 16}));
    EXPECT_EQ(b.targets.dtype(), DType::kI32);
    const auto in = b.inputs.to_vector<int32_t>();
    const auto tg = b.targets.to_vector<int32_t>();
    for (int r = 0; r < 4; ++r) {
      // Locate the window: the pattern has period 97 > 16, so the start is recoverable mod 97.
      const int32_t first = in[r * 16];
      bool found = false;
      for (int64_t s = 0; s + 17 <= n && !found; ++s) {
        if (tokens[s] != first) continue;
        bool all = true;
        for (int t = 0; t < 16; ++t) {
          all = all && in[r * 16 + t] == tokens[s + t] && tg[r * 16 + t] == tokens[s + t + 1];
        }
        found = all;
      }
      EXPECT_TRUE(found) << "row " << r << " of step " << step << " is not a file window";
    }
  }
}

TEST(TokenLoader, EachEpochIsAPermutationOfNonOverlappingWindows) {
  const int64_t n = 1001, T = 10, B = 3;
  auto l = TokenLoader::open(identity_file("id.tokens", n), B, T, 5);
  ASSERT_TRUE(l.ok()) << l.status();
  std::set<int64_t> offsets;
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    ASSERT_EQ(l->state().epoch, epoch);
    const int64_t windows = l->windows_in_epoch(epoch);
    std::set<int64_t> starts;
    std::vector<int64_t> order;
    for (int64_t k = 0; k < windows / B; ++k) {
      auto hb = l->next_host();
      for (int64_t r = 0; r < B; ++r) {
        const int64_t s = hb.inputs[r * T];
        for (int64_t t = 0; t < T; ++t) {
          ASSERT_EQ(hb.inputs[r * T + t], s + t);
          ASSERT_EQ(hb.targets[r * T + t], s + t + 1);
        }
        EXPECT_TRUE(starts.insert(s).second) << "window " << s << " twice in epoch " << epoch;
        order.push_back(s);
      }
    }
    // Starts share one offset in [0, T), are T apart (non-overlapping), and the epoch used
    // all but fewer than B of the W_e = (n - 1 - offset) / T windows.
    const int64_t offset = *starts.begin() % T;
    offsets.insert(offset);
    for (int64_t s : starts) EXPECT_EQ(s % T, offset);
    EXPECT_EQ(windows, (n - 1 - offset) / T);
    EXPECT_EQ(static_cast<int64_t>(starts.size()), windows / B * B);
    EXPECT_FALSE(std::is_sorted(order.begin(), order.end())) << "epoch not shuffled";
  }
  EXPECT_EQ(l->state().epoch, 4);
  EXPECT_EQ(l->state().position, 0);
  EXPECT_GT(offsets.size(), 1u) << "window boundaries never moved between epochs";
}

std::vector<int32_t> take(TokenLoader& l, int steps) {
  std::vector<int32_t> all;
  for (int i = 0; i < steps; ++i) {
    auto hb = l.next_host();
    all.insert(all.end(), hb.inputs.begin(), hb.inputs.end());
  }
  return all;
}

TEST(TokenLoader, DeterministicPerSeedAndResumesFromState) {
  const std::string p = identity_file("id2.tokens", 3000);
  auto a = TokenLoader::open(p, 4, 32, 11);
  auto b = TokenLoader::open(p, 4, 32, 11);
  auto c = TokenLoader::open(p, 4, 32, 12);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const auto xa = take(*a, 50), xb = take(*b, 50), xc = take(*c, 50);
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);

  // Run 37 steps (crosses an epoch: 3000 / 32 / 4 ~ 23 batches per epoch), save the state
  // both ways, keep going; fresh loaders restored from the saved state must read the same.
  auto run = TokenLoader::open(p, 4, 32, 11);
  take(*run, 37);
  const LoaderState saved = run->state();
  EXPECT_GE(saved.epoch, 1);
  const std::string js = saved.to_json();
  const auto vals = saved.to_values();
  const auto expected = take(*run, 40);

  auto from_json = LoaderState::from_json(js);
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(*from_json, saved);
  auto r1 = TokenLoader::open(p, 4, 32, /*seed ignored after restore*/ 999);
  ASSERT_TRUE(r1->restore(*from_json).ok());
  EXPECT_EQ(take(*r1, 40), expected);

  auto from_vals = LoaderState::from_values({vals[0], vals[1], vals[2]});
  ASSERT_TRUE(from_vals.ok());
  auto r2 = TokenLoader::open(p, 4, 32, 0);
  ASSERT_TRUE(r2->restore(*from_vals).ok());
  EXPECT_EQ(take(*r2, 40), expected);
  EXPECT_EQ(r2->state(), run->state());
}

TEST(TokenLoader, Errors) {
  const std::string p = identity_file("small.tokens", 100);
  EXPECT_EQ(TokenLoader::open(tmp_path("none.tokens"), 2, 8, 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(TokenLoader::open(p, 0, 8, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TokenLoader::open(p, 2, -1, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TokenLoader::open(p, 10, 10, 0).status().code(),
            absl::StatusCode::kFailedPrecondition);  // needs (10 + 1) * 10 = 110 tokens
  EXPECT_TRUE(TokenLoader::open(p, 9, 10, 0).ok());  // needs exactly 100
  auto l = TokenLoader::open(p, 2, 8, 0);
  ASSERT_TRUE(l.ok());
  const LoaderState before = l->state();
  EXPECT_EQ(l->restore({0, 0, 1000}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(l->restore({0, -1, 0}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(l->state(), before);  // a rejected restore changes nothing
  EXPECT_FALSE(LoaderState::from_json("{").ok());
  EXPECT_FALSE(LoaderState::from_json("[1,2,3]").ok());
  EXPECT_FALSE(LoaderState::from_json(R"({"seed":1,"epoch":2})").ok());
  EXPECT_FALSE(LoaderState::from_json(R"({"seed":1,"epoch":2,"position":"3"})").ok());
  EXPECT_FALSE(LoaderState::from_json(R"({"seed":1,"epoch":-2,"position":3})").ok());
  EXPECT_FALSE(LoaderState::from_values({1, 2}).ok());
  EXPECT_FALSE(LoaderState::from_values({1, 2, -3}).ok());
}

TEST(SequentialLoader, FixedBatchesInFileOrder) {
  const std::string p = identity_file("seq.tokens", 500);
  auto v = SequentialLoader::open(p, 3, 20, 0);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->num_batches(), (499 / 20) / 3);  // 24 windows -> 8 batches
  for (int64_t i = 0; i < v->num_batches(); ++i) {
    auto hb = v->host_batch(i);
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t t = 0; t < 20; ++t) {
        const int64_t s = (i * 3 + r) * 20 + t;
        ASSERT_EQ(hb.inputs[r * 20 + t], s);
        ASSERT_EQ(hb.targets[r * 20 + t], s + 1);
      }
    }
  }
  auto capped = SequentialLoader::open(p, 3, 20, 2);
  EXPECT_EQ(capped->num_batches(), 2);
  EXPECT_EQ(capped->batch(1).inputs.to_vector<int32_t>(), v->batch(1).inputs.to_vector<int32_t>());
  EXPECT_THROW(capped->batch(2), Error);
  EXPECT_EQ(SequentialLoader::open(p, 30, 20, 0).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace graft::data
