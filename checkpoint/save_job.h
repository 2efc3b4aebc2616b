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
  std::vector<std::vector<Source>> sources;  // per item of meta.items (empty for JSON)
  std::vector<std::shared_ptr<Buffer>> keepalive;
};

// Runs the commit protocol of manager.h for job.meta.step under `dir`.
absl::Status write_step(const std::string& dir, SaveJob& job);

}  // namespace graft::checkpoint
