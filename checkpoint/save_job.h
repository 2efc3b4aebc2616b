// Internal: what save() hands to the writer (synchronously or on the background thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "checkpoint/metadata.h"
#include "core/buffer.h"

namespace graft::checkpoint {

struct SaveJob {
  struct Source {
    const void* data;
    uint64_t nbytes;
  };
  StepMetadata meta;                         // checksums are filled in by write_step
  std::vector<std::vector<Source>> sources;  // per item of meta.items (empty for JSON): the
                                             // whole leaves (split ones: shards.h gathers)
  std::vector<std::shared_ptr<const Buffer>> keepalive;
  int process = 0;        // process_index() of the writer
  int process_count = 1;  // the processes that write this step together
};

// Runs the commit protocol of manager.h for job.meta.step under `dir`. Every process of a
// multi-process save calls it: each writes its shard files (shards.h), process 0 also the
// whole leaves; after distributed::barrier, process 0 writes the metadata and commits.
absl::Status write_step(const std::string& dir, SaveJob& job);

// <dir>/<step>.orbax-checkpoint-tmp-<16 hex digits, random>: where a save writes before its
// rename, and where a deleted step is moved before it is removed.
std::string temp_dir_for(const std::string& dir, int64_t step);
// Whether a folder entry's name has that form (what open() may remove as graft's own).
bool is_temp_name(const std::string& name);
// "0", "17": a step's directory name (no sign, no leading zeros, at most 18 digits).
bool is_step_name(const std::string& name);

}  // namespace graft::checkpoint
