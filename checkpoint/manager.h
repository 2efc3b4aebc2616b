// CheckpointManager: Orbax-style management of a directory of checkpoints, one per step.
//
//   <dir>/<step>/                     a committed step (has _COMMITTED)
//     _CHECKPOINT_METADATA            JSON: structure, shapes, dtypes, shardings, checksums,
//                                     each split leaf's blocks (metadata.h)
//     <item>.safetensors              per pytree item, its unsplit leaves (unplaced,
//                                     single-device or replicated), named by leaf path
//     <item>.process-<p>.safetensors  the distinct blocks of split leaves (a NamedSharding
//                                     that splits a dimension) whose first holder in mesh
//                                     order is a device of process p (shards.h)
//     _COMMITTED                      written last
//
// What each process writes: process p writes its <item>.process-<p>.safetensors files (the
// bytes of the blocks it holds first, each block once across all processes); process 0 also
// writes <item>.safetensors, then, after distributed::barrier (every process has written),
// the metadata, the rename and _COMMITTED. In a one-process run that process writes all.
//   <dir>/<step>.orbax-checkpoint-tmp-<nonce>/   a save in progress (nonce: 16 hex digits)
//   <dir>/_LOCK                       held (flock) by the manager that has the folder open
//
// Commit protocol: a save writes every file into the temporary directory and fsyncs it,
// fsyncs the directory, renames it to <dir>/<step>, fsyncs <dir>, then writes and fsyncs
// _COMMITTED. Only steps with _COMMITTED are listed or restored. Deleting a step renames it
// to a temporary name first, so a crash mid-delete leaves a temporary directory, never a
// broken step.
//
// open() locks the folder (dir_lock.h: a second manager, in this process or another, gets
// FailedPrecondition naming the holder's pid and host) and then removes only what graft
// made and a crash left: directories with the temporary name, and step directories
// (canonical step number) holding graft's metadata but no _COMMITTED. Each removal is a line
// on stderr and listed by removed_on_open(). Everything else is left alone and is not a
// step: other names ("2024/" without graft's metadata, "007/"), and symlinks, which are
// never followed, listed, or deleted.
//
// Async (enable_async): save() evaluates the arrays and snapshots them (see AsyncSnapshot),
// then returns; a background thread checksums, writes, commits and applies the retention
// policy. The next save(), wait_until_finished() or the
// destructor joins it; an error from the background is returned by the next save() or
// wait_until_finished() (exactly once), never dropped.
//
// Thread safety: every method may be called from any thread; saves are serialized. One
// manager (one process) has a directory open at a time (the lock).
//
// Multi-process runs (core/distributed/mpi.h): every process opens the folder and makes the
// same saves in the same order (open, save and wait_until_finished meet at
// distributed::barrier). Process 0 holds the lock, removes leftovers, commits and applies
// retention; the others write their shard files, learn after the commit whether the step was
// committed, and forget the steps process 0 deletes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/item.h"
#include "checkpoint/metadata.h"

namespace graft::checkpoint {

struct SaveJob;
class DirLock;

enum class BestMode { kMin, kMax };

// How an async save() snapshots the arrays before returning.
//  kReference: keeps references to the evaluated arrays' buffers. Arrays are immutable and
//    graft never writes into a buffer someone else holds (in-place kernels and jit donation
//    check the buffer's use count: JitDonation.HeldBufferIsNotOverwritten), so this is a
//    snapshot without a copy; save() blocks only for eval.
//  kCopy: copies the bytes into a host staging area reused between saves (for buffers that
//    may change underneath: a device backend, or code writing through Array::buffer()).
enum class AsyncSnapshot { kReference, kCopy };

struct CheckpointManagerOptions {
  // Keep at most this many steps (0: all). With best_fn, the best ones by metric are kept
  // (steps saved without metrics rank last), plus always the latest step so a run can resume.
  int max_to_keep = 0;
  int64_t save_interval_steps = 1;  // should_save(step) needs step % interval == 0
  int64_t keep_period = 0;          // steps divisible by it are never deleted by retention
  std::function<double(const nlohmann::json& metrics)> best_fn;
  BestMode best_mode = BestMode::kMax;
  bool enable_async = true;
  AsyncSnapshot snapshot = AsyncSnapshot::kReference;
  bool create = true;  // create the directory if missing (else open() fails with NotFound)
  // Open for restoring only (Orbax's read_only): nothing is created, locked or removed, and
  // save / delete_step are FailedPrecondition. Otherwise open() finds a folder that cannot be
  // written (a read-only copy or mount) at once, as PermissionDenied, not at the first save.
  bool read_only = false;
};

struct SaveArgs {
  nlohmann::json metrics;        // ranks steps for best_fn; stored in the metadata
  nlohmann::json user_metadata;  // stored as is
  bool force = false;            // save even when should_save(step) is false
};

struct RestoreOptions {
  bool cast = false;  // convert a saved dtype to the target's instead of failing
  bool verify_checksums = true;
};

class CheckpointManager {
 public:
  static absl::StatusOr<std::unique_ptr<CheckpointManager>> open(
      const std::string& directory, CheckpointManagerOptions options = {});
  ~CheckpointManager();  // waits for a background save
  CheckpointManager(const CheckpointManager&) = delete;
  CheckpointManager& operator=(const CheckpointManager&) = delete;

  // True when step is a multiple of save_interval_steps and newer than the latest step
  // saved (or being saved).
  bool should_save(int64_t step) const;
  // Saves the items when should_save(step) or args.force; otherwise does nothing and returns
  // OK. A step that exists already is AlreadyExists. Tree items need paths usable as tensor
  // names (no '/' or ".." in map keys) and evaluable arrays (no tracers).
  absl::Status save(int64_t step, const Composite& items, const SaveArgs& args = {});
  // Joins the background save; returns its error if it failed.
  absl::Status wait_until_finished();
  // Whether a background save is still writing (and holding its snapshot's buffers), like
  // Orbax's is_saving_in_progress().
  bool is_saving_in_progress() const;

  std::optional<int64_t> latest_step() const;
  std::vector<int64_t> all_steps() const;  // committed steps, ascending
  // Reads only the metadata file.
  absl::StatusOr<StepMetadata> metadata(int64_t step) const;
  // Restores the named target items (others in the checkpoint are skipped). Tree targets give
  // the structure, shapes and dtypes (their leaves are not read; placeholders work); JSON
  // targets take the saved value. Without targets, restores every item as saved.
  absl::StatusOr<Composite> restore(int64_t step, const Composite& targets,
                                    const RestoreOptions& options = {}) const;
  absl::StatusOr<Composite> restore(int64_t step) const;
  absl::Status delete_step(int64_t step);

  const std::string& directory() const { return dir_; }
  // What open() removed (what interrupted saves or deletes left), as printed on stderr.
  const std::vector<std::string>& removed_on_open() const { return removed_on_open_; }
  // Step-named folders open() found but cannot use: a committed step whose metadata file is
  // lost, or a folder that is not a committed checkpoint (not written by a save). They are
  // neither restored nor removed, and a save of that step fails (AlreadyExists). Callers that
  // resume or save decide what that means for them (the trainer refuses or names them).
  struct SkippedStep {
    int64_t step;
    std::string path;
    std::string why;
  };
  const std::vector<SkippedStep>& skipped_on_open() const { return skipped_on_open_; }
  std::string step_dir(int64_t step) const { return dir_ + "/" + std::to_string(step); }

 private:
  CheckpointManager(std::string dir, CheckpointManagerOptions options,
                    std::unique_ptr<DirLock> lock);
  absl::Status scan(bool clean);  // lists committed steps, removes what interrupted saves left
  absl::Status join_locked(std::unique_lock<std::mutex>& lock);
  absl::Status run_job(SaveJob& job);  // writes and commits one step, then retention
  absl::Status apply_retention();
  absl::Status delete_step_locked(int64_t step);
  void wait_idle() const;

  const std::string dir_;
  const CheckpointManagerOptions options_;
  const std::unique_ptr<DirLock> lock_;      // released last, after the worker is joined
  mutable std::mutex mu_;                    // guards everything below
  mutable std::condition_variable idle_cv_;  // signalled when worker_done_ turns true
  std::mutex save_mu_;                       // serializes save() callers
  std::map<int64_t, nlohmann::json> steps_;  // committed step -> metrics (null if none)
  std::vector<SkippedStep> skipped_on_open_;
  std::optional<int64_t> in_flight_step_;
  std::thread worker_;
  bool worker_done_ = true;
  absl::Status pending_error_;       // from the background, not yet reported
  std::unique_ptr<char[]> staging_;  // async host copies, reused between saves
  size_t staging_size_ = 0;
  std::vector<std::string> removed_on_open_;
};

}  // namespace graft::checkpoint
