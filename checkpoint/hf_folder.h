// Hugging Face model folders, the layout transformers' save_pretrained writes and
// from_pretrained(dir) reads:
//
//   config.json                  the model's config (built by the caller: checkpoint/ knows
//                                no architecture)
//   generation_config.json       when the caller gives one
//   model.safetensors            every tensor, when their bytes fit in max_shard_bytes; else
//   model-00001-of-0000n.safetensors ... and model.safetensors.index.json
//                                {"metadata": {"total_size": bytes}, "weight_map": {name: file}}
//
// Tensors are put into shards in order; a shard is closed when the next tensor would take it
// past max_shard_bytes (a tensor larger than the limit gets a shard of its own), as
// transformers does. The default limit is transformers' max_shard_size "5GB" (5e9 bytes).
//
// The folder is written beside its final place (<parent>/.<name>.partial) and renamed into
// place when complete, so a failed export leaves no half-written folder and keeps an earlier
// export; an earlier export at the same path is replaced whole. A folder that holds anything
// an export does not write is refused (replacing it would lose those files).
//
//   checkpoint::HfFolderFiles files{.config = {{"model_type", "llama"}, ...}};
//   absl::Status s = checkpoint::export_hf_folder("/out/hf", params, names, files);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/hf.h"
#include "checkpoint/safetensors.h"
#include "core/tree/tree.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {

struct HfFolderFiles {
  nlohmann::json config;             // config.json: a JSON object
  nlohmann::json generation_config;  // generation_config.json: an object, or null (not written)
};

struct HfFolderOptions {
  uint64_t max_shard_bytes = 5'000'000'000;  // transformers' default max_shard_size, "5GB"
};

// True for the names an export writes (config.json, generation_config.json,
// model.safetensors, model.safetensors.index.json, model-NNNNN-of-NNNNN.safetensors).
bool is_hf_export_file(const std::string& name);

// Whether an export to `dir` can succeed, checked without writing the export: `dir` is new, an
// empty folder or an earlier export (only is_hf_export_file names); its parent folders are
// created, and a probe folder is made and removed in the parent, where the export is
// staged. FailedPrecondition (or the file system's error) naming the path and the reason.
absl::Status check_hf_export_dir(const std::string& dir);

// The folder from named tensors. `files.config` must be an object.
absl::Status write_hf_folder(const std::string& dir, const HfFolderFiles& files,
                             const std::vector<TensorView>& tensors,
                             const HfFolderOptions& options = {});

// The folder from a pytree's leaves through an HF name mapping (hf.h).
absl::Status export_hf_folder_leaves(const std::string& dir, const std::vector<Array>& leaves,
                                     const std::vector<std::string>& paths, const HfNameFn& names,
                                     const HfFolderFiles& files,
                                     const HfFolderOptions& options = {});

template <typename T>
absl::Status export_hf_folder(const std::string& dir, const T& tree, const HfNameFn& names,
                              const HfFolderFiles& files, const HfFolderOptions& options = {}) {
  auto [leaves, def] = tree_flatten(tree);
  return export_hf_folder_leaves(dir, leaves, tree_leaf_paths(def), names, files, options);
}

// <source>/config.json parsed: nullopt when `source` is not a folder or has no config.json;
// DataLoss for one that is not a JSON object.
absl::StatusOr<std::optional<nlohmann::json>> read_hf_config(const std::string& source);

}  // namespace graft::checkpoint
