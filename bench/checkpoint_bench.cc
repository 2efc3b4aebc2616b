// Checkpoint throughput: CheckpointManager save / restore of a ~200 MB pytree against plain
// sequential write (+fsync) / read of the same bytes in the same run, and how long save()
// blocks in async mode against a synchronous save.
//
//   bazel run -c opt //bench:checkpoint_bench -- [dir, default /tmp/graft_ckpt_bench] [MB]
//
// Reads are warm (the files were just written, so they come from the page cache) for both
// graft and the baseline; writes end with fsync for both.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "checkpoint/manager.h"

using namespace graft;
using namespace graft::checkpoint;
using Clock = std::chrono::steady_clock;

namespace {

double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
void check(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp/graft_ckpt_bench";
  int64_t mb = argc > 2 ? std::atoll(argv[2]) : 200;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  // 50 leaves (a Llama-like mix of big matrices and small vectors), about `mb` MB in all.
  const int kLeaves = 50;
  const int64_t per_leaf = mb * (1 << 20) / 4 / kLeaves;
  std::vector<Array> tree;
  size_t total = 0;
  for (int i = 0; i < kLeaves; ++i) {
    int64_t n = i % 5 == 4 ? 4096 : per_leaf * 5 / 4;
    auto buf = Buffer::make(static_cast<size_t>(n * 4));
    auto* p = static_cast<float*>(buf->data());
    for (int64_t k = 0; k < n; ++k) p[k] = static_cast<float>(k % 1000) * 0.001f + i;
    tree.push_back(Array::from_buffer(buf, {n}, DType::kF32));
    total += static_cast<size_t>(n * 4);
  }
  const double total_mb = total / 1e6;
  std::printf("pytree: %d leaves, %.1f MB, directory %s\n", kLeaves, total_mb, dir.c_str());

  // Baseline: the same bytes, one file, write() + fsync; then read() back.
  const int kReps = 3;
  std::vector<double> base_w, base_r;
  for (int r = 0; r < kReps; ++r) {
    std::string path = dir + "/plain.bin";
    auto t0 = Clock::now();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (const Array& a : tree) {
      const char* p = static_cast<const char*>(a.raw_data());
      size_t left = static_cast<size_t>(a.nbytes());
      while (left) {
        ssize_t w = ::write(fd, p, left);
        if (w <= 0) return 1;
        p += w;
        left -= static_cast<size_t>(w);
      }
    }
    ::fsync(fd);
    ::close(fd);
    auto t1 = Clock::now();
    // Into fresh allocations, as a restore must (page faults included).
    fd = ::open(path.c_str(), O_RDONLY);
    std::vector<std::unique_ptr<char[]>> sink;
    for (const Array& a : tree) {
      size_t n = static_cast<size_t>(a.nbytes()), got = 0;
      sink.emplace_back(new char[n]);
      while (got < n) got += static_cast<size_t>(::read(fd, sink.back().get() + got, n - got));
    }
    ::close(fd);
    auto t2 = Clock::now();
    base_w.push_back(secs(t0, t1));
    base_r.push_back(secs(t1, t2));
  }
  std::filesystem::remove(dir + "/plain.bin");

  // graft, synchronous saves and restores.
  std::vector<double> sync_save, restore_t;
  int64_t step = 0;
  {
    auto mgr = CheckpointManager::open(dir + "/sync", {.max_to_keep = 1, .enable_async = false});
    check(mgr.status());
    for (int r = 0; r < kReps; ++r) {
      auto t0 = Clock::now();
      check((*mgr)->save(++step, {{"params", Item::tree(tree)}}));
      auto t1 = Clock::now();
      auto got = (*mgr)->restore(step, {{"params", Item::tree(tree)}});
      check(got.status());
      auto t2 = Clock::now();
      sync_save.push_back(secs(t0, t1));
      restore_t.push_back(secs(t1, t2));
    }
  }
  std::filesystem::remove_all(dir + "/sync");

  auto mbps = [&](double s) { return total_mb / s; };
  std::printf("medians of %d runs                     seconds      MB/s\n", kReps);
  std::printf("plain write + fsync                     %8.3f  %8.0f\n", median(base_w),
              mbps(median(base_w)));
  std::printf("graft save (sync)                       %8.3f  %8.0f   (%.0f%% of plain)\n",
              median(sync_save), mbps(median(sync_save)), 100 * median(base_w) / median(sync_save));
  std::printf("plain read (warm, into fresh buffers)   %8.3f  %8.0f\n", median(base_r),
              mbps(median(base_r)));
  std::printf("graft restore (warm, crc32c checked)    %8.3f  %8.0f   (%.0f%% of plain)\n",
              median(restore_t), mbps(median(restore_t)), 100 * median(base_r) / median(restore_t));

  // graft, async: time inside save() and until the write is durable, for both snapshots.
  for (AsyncSnapshot snap : {AsyncSnapshot::kReference, AsyncSnapshot::kCopy}) {
    std::vector<double> blocked, async_total;
    double first_blocked = 0;
    {
      auto mgr = CheckpointManager::open(
          dir + "/async", {.max_to_keep = 1, .enable_async = true, .snapshot = snap});
      check(mgr.status());
      for (int r = 0; r < kReps + 1; ++r) {
        auto t0 = Clock::now();
        check((*mgr)->save(++step, {{"params", Item::tree(tree)}}));
        auto t1 = Clock::now();
        check((*mgr)->wait_until_finished());
        auto t2 = Clock::now();
        if (r == 0) {
          first_blocked = secs(t0, t1);  // includes first-touch of the staging buffer
          continue;
        }
        blocked.push_back(secs(t0, t1));
        async_total.push_back(secs(t0, t2));
      }
    }
    std::filesystem::remove_all(dir + "/async");
    const char* name = snap == AsyncSnapshot::kCopy ? "kCopy" : "kReference";
    std::printf("async %-10s save, until durable     %8.3f  %8.0f\n", name, median(async_total),
                total_mb / median(async_total));
    std::printf(
        "async %-10s save() blocks           %8.4f            %.1f%% of a sync save (first: "
        "%.4f s, %.1f%%)\n",
        name, median(blocked), 100 * median(blocked) / median(sync_save), first_blocked,
        100 * first_blocked / median(sync_save));
  }
  std::filesystem::remove_all(dir);

  return 0;
}
