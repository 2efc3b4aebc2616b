// Writing one step (the commit protocol of manager.h) and the retention policy.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string_view>

#include "checkpoint/crc32c.h"
#include "checkpoint/file_util.h"
#include "checkpoint/manager.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/save_job.h"
#include "checkpoint/shards.h"
#include "core/distributed/world.h"
#include "core/error.h"

namespace graft::checkpoint {

namespace fs = std::filesystem;

namespace {

std::string nonce() {
  static std::mutex mu;
  static std::mt19937_64 rng(
      std::random_device{}() ^ static_cast<uint64_t>(::getpid()) ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::lock_guard<std::mutex> lock(mu);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

// What this process writes of the step: its blocks of split leaves, and on process 0 the
// whole leaves (one file per item, as before sharded saves existed).
absl::Status write_own_files(const std::string& tmp, SaveJob& job) {
  for (size_t i = 0; i < job.meta.items.size(); ++i) {
    ItemMeta& im = job.meta.items[i];
    if (im.is_json) continue;
    if (absl::Status s = write_item_shards(tmp, im, job.sources[i], job.process); !s.ok()) {
      return s;
    }
    if (job.process != 0) continue;
    std::vector<TensorView> views;
    for (size_t k = 0; k < im.leaves.size(); ++k) {
      LeafMeta& l = im.leaves[k];
      if (!l.shards.empty()) continue;
      const SaveJob::Source& src = job.sources[i][k];
      l.crc32c = crc32c(src.data, src.nbytes);
      views.push_back({l.tensor, l.dtype, l.shape, src.data});
    }
    absl::Status s = write_safetensors(tmp + "/" + im.file(), views,
                                       {{"format", "graft"}, {"graft_version", kGraftVersion}});
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Process 0, after every process wrote: the other processes' checksums, then the metadata.
absl::Status write_metadata(const std::string& tmp, SaveJob& job) {
  for (ItemMeta& im : job.meta.items) {
    if (im.is_json) continue;
    if (absl::Status s = collect_shard_checksums(tmp, im, job.process); !s.ok()) return s;
  }
  return write_file(tmp + "/" + kMetadataFile, metadata_to_json(job.meta), /*sync=*/true);
}

constexpr std::string_view kTempMarker = ".orbax-checkpoint-tmp-";

// The nonce every process of a save derives alike: the step in hex (temporary names stay in
// the form is_temp_name accepts).
std::string shared_nonce(int64_t step) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(step));
  return buf;
}

}  // namespace

std::string temp_dir_for(const std::string& dir, int64_t step) {
  return dir + "/" + std::to_string(step) + std::string(kTempMarker) + nonce();
}

bool is_step_name(const std::string& name) {
  if (name.empty() || name.size() > 18 || (name.size() > 1 && name[0] == '0')) return false;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool is_temp_name(const std::string& name) {
  const size_t at = name.find(kTempMarker);
  if (at == std::string::npos || at == 0) return false;
  for (size_t i = 0; i < at; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  const std::string_view tail = std::string_view(name).substr(at + kTempMarker.size());
  if (tail.empty()) return false;
  for (char c : tail) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::Status write_step(const std::string& dir, SaveJob& job) {
  const std::string final_dir = dir + "/" + std::to_string(job.meta.step);
  // The processes of one save must name the same temporary directory without talking: there
  // the name comes from the step (a crash's leftover is removed by open() all the same).
  const std::string tmp = job.process_count == 1
                              ? temp_dir_for(dir, job.meta.step)
                              : str_cat(final_dir, kTempMarker, shared_nonce(job.meta.step));
  // Every process reaches every barrier, failed or not, so none waits for one that gave up;
  // process 0 then finds a failed process's file missing and does not commit.
  absl::Status s;
  if (job.process == 0) {
    struct stat st;
    if (::lstat(final_dir.c_str(), &st) == 0) {  // not a step of ours: open() left it alone
      s = absl::AlreadyExistsError(final_dir + " exists and is not a committed checkpoint");
    } else if (::mkdir(tmp.c_str(), 0755) != 0) {
      s = errno_status("mkdir", tmp);
    }
  }
  absl::Status b = distributed::barrier("checkpoint: temporary directory made");
  if (s.ok() && b.ok()) s = write_own_files(tmp, job);
  if (b.ok()) b = distributed::barrier("checkpoint: shards written");
  if (!b.ok()) s.Update(b);
  if (job.process != 0) return s;  // process 0 commits (or cleans up) alone
  if (s.ok()) s = write_metadata(tmp, job);
  if (s.ok()) s = fsync_dir(tmp);
  if (s.ok() && ::rename(tmp.c_str(), final_dir.c_str()) != 0) s = errno_status("rename", tmp);
  if (!s.ok()) {
    std::error_code ec;
    fs::remove_all(tmp, ec);  // best effort; open() removes what is left
    return s;
  }
  if (s = fsync_dir(dir); !s.ok()) return s;
  if (s = write_file(final_dir + "/" + kCommitFile, "", /*sync=*/true); !s.ok()) return s;
  return fsync_dir(final_dir);
}

absl::Status CheckpointManager::run_job(SaveJob& job) {
  absl::Status s = write_step(dir_, job);
  if (job.process_count > 1) {
    // The others learn whether process 0 committed; every process reaches this barrier.
    absl::Status b = distributed::barrier("checkpoint: committed");
    if (s.ok() && !b.ok()) s = b;
    if (s.ok() && job.process != 0 &&
        !fs::exists(step_dir(job.meta.step) + "/" + kCommitFile)) {
      s = absl::AbortedError(str_cat("checkpoint of step ", job.meta.step,
                                     ": process 0 did not commit it (its error is on process 0)"));
    }
  }
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  steps_[job.meta.step] = job.meta.metrics;
  return apply_retention();
}

absl::Status CheckpointManager::apply_retention() {
  if (options_.max_to_keep <= 0 || static_cast<int>(steps_.size()) <= options_.max_to_keep) {
    return absl::OkStatus();
  }
  std::vector<int64_t> order;  // most worth keeping first
  for (const auto& [s, _] : steps_) order.push_back(s);
  if (options_.best_fn) {
    // Rank by metric; steps without one (or whose best_fn throws) rank last, newest first.
    std::vector<std::pair<std::optional<double>, int64_t>> ranked;
    for (const auto& [s, m] : steps_) {
      std::optional<double> v;
      if (!m.is_null()) {
        try {
          v = options_.best_fn(m);
        } catch (...) {
        }
      }
      if (v && options_.best_mode == BestMode::kMin) v = -*v;
      ranked.push_back({v, s});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      if (a.first.has_value() != b.first.has_value()) return a.first.has_value();
      if (a.first && *a.first != *b.first) return *a.first > *b.first;
      return a.second > b.second;
    });
    order.clear();
    for (const auto& [_, s] : ranked) order.push_back(s);
  } else {
    std::reverse(order.begin(), order.end());
  }
  const int64_t latest = steps_.rbegin()->first;
  std::vector<int64_t> doomed;
  for (size_t i = options_.max_to_keep; i < order.size(); ++i) {
    int64_t s = order[i];
    if (s == latest) continue;  // always resumable
    if (options_.keep_period > 0 && s % options_.keep_period == 0) continue;
    doomed.push_back(s);
  }
  for (int64_t s : doomed) {
    if (absl::Status st = delete_step_locked(s); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace graft::checkpoint
