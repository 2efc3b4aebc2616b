// CheckpointManager: opening a directory, the step list, save() (the snapshot), waiting,
// metadata and deletion. Writing a step is in manager_write.cc, restoring in restore.cc.
#include "checkpoint/manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "checkpoint/dir_lock.h"
#include "checkpoint/file_util.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/save_job.h"
#include "checkpoint/shards.h"
#include "core/device/device.h"
#include "core/distributed/world.h"
#include "core/error.h"
#include "core/sharding/device_put.h"

namespace graft::checkpoint {

namespace fs = std::filesystem;

namespace {

bool lstat_is(const std::string& path, mode_t type) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

bool lstat_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// A step directory of graft's: its metadata file is a regular file in graft's format.
bool has_graft_metadata(const std::string& step_dir) {
  const std::string path = step_dir + "/" + kMetadataFile;
  if (!lstat_is(path, S_IFREG)) return false;
  std::string text;
  return read_file(path, text, size_t{1} << 30).ok() && parse_metadata(text).ok();
}

absl::Status read_only_error(const std::string& what, const std::string& dir) {
  return absl::FailedPreconditionError("checkpoint: cannot " + what + ": " + dir +
                                       " was opened read_only");
}

}  // namespace

CheckpointManager::CheckpointManager(std::string dir, CheckpointManagerOptions options,
                                     std::unique_ptr<DirLock> lock)
    : dir_(std::move(dir)), options_(std::move(options)), lock_(std::move(lock)) {}

absl::StatusOr<std::unique_ptr<CheckpointManager>> CheckpointManager::open(
    const std::string& directory, CheckpointManagerOptions options) {
  if (directory.empty()) return absl::InvalidArgumentError("checkpoint directory is empty");
  if (options.save_interval_steps < 1 || options.max_to_keep < 0 || options.keep_period < 0) {
    return absl::InvalidArgumentError(
        "checkpoint options: save_interval_steps >= 1, max_to_keep >= 0, keep_period >= 0");
  }
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    if (!options.create || options.read_only) {
      return absl::NotFoundError("checkpoint directory " + directory);
    }
    fs::create_directories(directory, ec);
    if (ec) {
      return absl::PermissionDeniedError("cannot create " + directory + ": " + ec.message());
    }
  }
  if (options.read_only) {  // every process alike: no lock, nothing removed
    std::unique_ptr<CheckpointManager> m(
        new CheckpointManager(directory, std::move(options), nullptr));
    if (absl::Status s = m->scan(/*clean=*/false); !s.ok()) return s;
    return m;
  }
  // In a multi-process run every process opens the folder; process 0 locks and cleans it,
  // the others list it once it has (they take no lock: they write only their shard files,
  // inside process 0's save; manager.h).
  if (process_index() != 0) {
    absl::Status opened = distributed::barrier("checkpoint: folder opened");
    if (!opened.ok()) return opened;
    std::unique_ptr<CheckpointManager> m(
        new CheckpointManager(directory, std::move(options), nullptr));
    if (absl::Status s = m->scan(/*clean=*/false); !s.ok()) return s;
    return m;
  }
  // Locked before anything is removed: another writer's temporary directory looks exactly
  // like one a crash left.
  absl::StatusOr<std::unique_ptr<CheckpointManager>> out = [&]()
      -> absl::StatusOr<std::unique_ptr<CheckpointManager>> {
    absl::StatusOr<DirLock> lock = DirLock::acquire(directory);
    if (!lock.ok()) return lock.status();
    std::unique_ptr<CheckpointManager> m(new CheckpointManager(
        directory, std::move(options), std::make_unique<DirLock>(std::move(*lock))));
    if (absl::Status s = m->scan(/*clean=*/true); !s.ok()) return s;
    return m;
  }();
  // The others wait for this, failed or not.
  if (absl::Status opened = distributed::barrier("checkpoint: folder opened"); !opened.ok()) {
    return opened;
  }
  return out;
}

CheckpointManager::~CheckpointManager() {
  std::lock_guard<std::mutex> save_lock(save_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  join_locked(lock).IgnoreError();  // a destructor cannot report; call wait_until_finished()
}

absl::Status CheckpointManager::scan(bool clean) {
  std::error_code ec;
  std::vector<std::pair<std::string, const char*>> doomed;  // path, why
  std::vector<int64_t> found;
  std::vector<SkippedStep> skipped;
  for (auto it = fs::directory_iterator(dir_, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string path = it->path().string();
    const bool step_name = is_step_name(name);
    if (!step_name && !is_temp_name(name)) continue;  // not graft's: not looked at
    if (lstat_is(path, S_IFLNK)) {
      std::fprintf(stderr, "checkpoint: ignoring %s: a symlink is never a step nor deleted\n",
                   path.c_str());
      continue;
    }
    if (!lstat_is(path, S_IFDIR)) continue;
    if (!step_name) {
      doomed.push_back({path, "left by an interrupted save or delete"});
    } else if (lstat_is(path + "/" + kCommitFile, S_IFREG)) {
      if (lstat_is(path + "/" + kMetadataFile, S_IFREG)) {
        found.push_back(std::stoll(name));
      } else {
        skipped.push_back({std::stoll(name), path,
                           std::string("committed, but its ") + kMetadataFile + " is missing"});
      }
    } else if (!lstat_exists(path + "/" + kCommitFile) && has_graft_metadata(path)) {
      doomed.push_back({path, "renamed but never committed"});  // a crash after the rename
    } else {
      skipped.push_back({std::stoll(name), path,
                         std::string("not a committed checkpoint (no ") + kCommitFile + ")"});
    }
  }
  if (ec) return absl::InternalError("listing " + dir_ + ": " + ec.message());
  if (!clean) doomed.clear();  // process 0's to remove
  for (const auto& [p, why] : doomed) {
    fs::remove_all(p, ec);  // removes links inside, never what they point to
    if (ec) return absl::InternalError("removing stale " + p + ": " + ec.message());
    std::fprintf(stderr, "checkpoint: removed %s (%s)\n", p.c_str(), why);
    removed_on_open_.push_back(p);
  }
  std::sort(skipped.begin(), skipped.end(),
            [](const SkippedStep& a, const SkippedStep& b) { return a.step < b.step; });
  skipped_on_open_ = std::move(skipped);
  std::lock_guard<std::mutex> lock(mu_);
  for (int64_t s : found) {
    nlohmann::json metrics;
    if (options_.best_fn) {
      absl::StatusOr<StepMetadata> m = metadata(s);
      if (m.ok()) metrics = m->metrics;
    }
    steps_[s] = metrics;
  }
  return absl::OkStatus();
}

bool CheckpointManager::should_save(int64_t step) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t last = -1;
  if (!steps_.empty()) last = steps_.rbegin()->first;
  if (in_flight_step_ && *in_flight_step_ > last) last = *in_flight_step_;
  return step > last && step % options_.save_interval_steps == 0;
}

std::optional<int64_t> CheckpointManager::latest_step() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (steps_.empty()) return std::nullopt;
  return steps_.rbegin()->first;
}

std::vector<int64_t> CheckpointManager::all_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> out;
  for (const auto& [s, _] : steps_) out.push_back(s);
  return out;
}

absl::Status CheckpointManager::join_locked(std::unique_lock<std::mutex>& lock) {
  if (worker_.joinable()) {
    std::thread t = std::move(worker_);
    lock.unlock();
    t.join();
    lock.lock();
  }
  absl::Status s = pending_error_;
  pending_error_ = absl::OkStatus();
  return s;
}

absl::Status CheckpointManager::wait_until_finished() {
  std::lock_guard<std::mutex> save_lock(save_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  return join_locked(lock);
}

bool CheckpointManager::is_saving_in_progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_step_.has_value();
}

void CheckpointManager::wait_idle() const {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return worker_done_; });
}

absl::Status CheckpointManager::save(int64_t step, const Composite& items, const SaveArgs& args) {
  if (options_.read_only) return read_only_error("save step " + std::to_string(step), dir_);
  std::lock_guard<std::mutex> save_lock(save_mu_);
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (absl::Status s = join_locked(lock); !s.ok()) {
      return absl::Status(s.code(), "previous async save failed (step " + std::to_string(step) +
                                        " not saved): " + std::string(s.message()));
    }
  }
  if (step < 0) return absl::InvalidArgumentError("negative checkpoint step");
  if (!args.force && !should_save(step)) return absl::OkStatus();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (steps_.count(step)) {
      return absl::AlreadyExistsError("checkpoint step " + std::to_string(step) + " exists");
    }
  }

  // Snapshot: describe every item, evaluate the arrays, then point at (sync) or copy (async)
  // their bytes.
  auto job = std::make_shared<SaveJob>();
  job->process = process_index();
  job->process_count = process_count();
  job->meta.step = step;
  job->meta.metrics = args.metrics;
  job->meta.user_metadata = args.user_metadata;
  job->meta.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::vector<Array> all;
  try {
    for (const auto& [name, item] : items) {
      if (absl::Status s = validate_item_name(name); !s.ok()) return s;
      ItemMeta im;
      im.name = name;
      im.is_json = item.is_json();
      if (im.is_json) {
        im.value = item.json_value();
      } else {
        im.treedef = item.def();
        std::vector<std::string> paths = tree_leaf_paths(item.def());
        if (paths.size() != item.leaves().size()) {
          return absl::InvalidArgumentError("item \"" + name + "\": leaves and structure differ");
        }
        std::set<std::string> tensors;
        for (size_t i = 0; i < paths.size(); ++i) {
          const Array& a = item.leaves()[i];
          if (!a.valid() || a.is_tracer()) {
            return absl::InvalidArgumentError("item \"" + name + "\" leaf \"" + paths[i] +
                                              "\" is empty or a tracer");
          }
          LeafMeta l{paths[i], tensor_name_for_path(paths[i]), a.dtype(), a.shape()};
          l.nbytes = static_cast<uint64_t>(a.nbytes());
          if (a.node()->sharding != nullptr) l.sharding = a.sharding().str();
          if (absl::Status s = validate_tensor_name(l.tensor); !s.ok()) {
            return absl::InvalidArgumentError("item \"" + name + "\": " + std::string(s.message()));
          }
          if (is_split(a)) {  // saved as its distinct blocks, by their processes (shards.h)
            if (absl::Status s = describe_shards(name, a, l); !s.ok()) return s;
            job->meta.format = kFormatSharded;
          }
          if (!tensors.insert(l.tensor).second) {
            return absl::InvalidArgumentError("item \"" + name + "\": two leaves named \"" +
                                              l.tensor + "\"");
          }
          im.leaves.push_back(std::move(l));
          all.push_back(a);
        }
      }
      job->meta.items.push_back(std::move(im));
    }
    eval(all);
  } catch (const graft::Error& e) {
    return absl::InvalidArgumentError(std::string("checkpoint save: ") + e.what());
  }

  size_t total = 0;
  for (const Array& a : all) total += static_cast<size_t>(a.nbytes());
  const bool copy = options_.enable_async && options_.snapshot == AsyncSnapshot::kCopy;
  if (copy && total > staging_size_) {
    staging_.reset(new char[total]);  // uninitialized; kept for the next save
    staging_size_ = total;
  }
  size_t next = 0, offset = 0;
  for (const ItemMeta& im : job->meta.items) {
    std::vector<SaveJob::Source> src;
    for (size_t i = 0; i < im.leaves.size(); ++i, ++next) {
      std::shared_ptr<const Buffer> buf = all[next].host_buffer();  // a GPU's: copied
      uint64_t n = im.leaves[i].nbytes;
      if (copy) {
        if (n) std::memcpy(staging_.get() + offset, buf->data(), n);
        src.push_back({staging_.get() + offset, n});
        offset += n;
      } else {
        src.push_back({buf->data(), n});
        job->keepalive.push_back(std::move(buf));
      }
    }
    job->sources.push_back(std::move(src));
  }

  if (!options_.enable_async) return run_job(*job);
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_step_ = step;
  worker_done_ = false;
  worker_ = std::thread([this, job]() mutable {
    absl::Status s = run_job(*job);
    job.reset();  // releases the snapshot's buffers before reporting done
    std::lock_guard<std::mutex> l(mu_);
    if (!s.ok()) pending_error_ = s;
    in_flight_step_.reset();
    worker_done_ = true;
    idle_cv_.notify_all();
  });
  return absl::OkStatus();
}

absl::StatusOr<StepMetadata> CheckpointManager::metadata(int64_t step) const {
  std::string text;
  std::string path = step_dir(step) + "/" + kMetadataFile;
  if (absl::Status s = read_file(path, text, size_t{1} << 30); !s.ok()) return s;
  absl::StatusOr<StepMetadata> m = parse_metadata(text);
  if (!m.ok()) {
    return absl::Status(m.status().code(), std::string(m.status().message()) + " (" + path + ")");
  }
  if (m->step != step) {
    return absl::DataLossError(path + " describes step " + std::to_string(m->step));
  }
  return m;
}

absl::Status CheckpointManager::delete_step(int64_t step) {
  if (options_.read_only) return read_only_error("delete step " + std::to_string(step), dir_);
  wait_idle();
  std::lock_guard<std::mutex> lock(mu_);
  if (!steps_.count(step)) {
    return absl::NotFoundError("no committed checkpoint step " + std::to_string(step));
  }
  return delete_step_locked(step);
}

absl::Status CheckpointManager::delete_step_locked(int64_t step) {
  steps_.erase(step);
  if (process_index() != 0) return absl::OkStatus();  // process 0 deletes; the others forget
  const std::string d = step_dir(step);
  // Renamed out of the listing in one atomic step: a crash below leaves a temporary
  // directory that open() removes. rename() and remove_all() act on a symlink itself, never
  // on its target.
  const std::string doomed = temp_dir_for(dir_, step);
  if (::rename(d.c_str(), doomed.c_str()) != 0) return errno_status("rename", d);
  if (absl::Status s = fsync_dir(dir_); !s.ok()) return s;
  std::error_code ec;
  fs::remove_all(doomed, ec);
  if (ec) return absl::InternalError("removing " + doomed + ": " + ec.message());
  return absl::OkStatus();
}

}  // namespace graft::checkpoint
