// The per-step metadata file (_CHECKPOINT_METADATA, JSON): everything needed to check a
// restore target and to list a checkpoint without reading tensors.
//
//   {"format": "graft-checkpoint-1", "graft_version": "0.1.0", "step": 100,
//    "timestamp_ms": ..., "metrics": {...} | null, "user_metadata": {...} | null,
//    "items": [{"name": "params", "kind": "tree", "file": "params.safetensors",
//               "treedef": {"kind": "Mlp", "keys": ["w1", "b1"], "children": [...]},
//               "leaves": [{"path": "w1", "tensor": "w1", "dtype": "f32", "shape": [4, 8],
//                           "sharding": "replicated", "nbytes": 128, "crc32c": 1234}]},
//              {"name": "loader", "kind": "json", "value": {...}}]}
//
// parse_metadata validates the whole document (it is a fuzz target), so later code may trust
// shapes, dtypes, names and leaf counts to be consistent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/tree.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {

inline constexpr const char* kGraftVersion = "0.1.0";
inline constexpr const char* kFormat = "graft-checkpoint-1";
inline constexpr const char* kMetadataFile = "_CHECKPOINT_METADATA";
inline constexpr const char* kCommitFile = "_COMMITTED";
inline constexpr const char* kLockFile = "_LOCK";  // in the folder, see dir_lock.h
inline constexpr int kMaxTreeDepth = 200;

struct LeafMeta {
  std::string path;    // tree_leaf_paths of the item's structure
  std::string tensor;  // its name in the item's safetensors file
  DType dtype = DType::kF32;
  Shape shape;
  // "replicated" for an array without a sharding, else its NamedSharding's text (what it
  // was saved from; restore places leaves as its target's are).
  std::string sharding = "replicated";
  uint64_t nbytes = 0;
  uint32_t crc32c = 0;
};

struct ItemMeta {
  std::string name;
  bool is_json = false;
  TreeDef treedef;               // trees only
  std::vector<LeafMeta> leaves;  // trees only
  nlohmann::json value;          // json items only
  std::string file() const { return name + ".safetensors"; }
};

struct StepMetadata {
  int64_t step = 0;
  std::string format = kFormat;
  std::string graft_version = kGraftVersion;
  int64_t timestamp_ms = 0;
  nlohmann::json metrics;        // null when the save gave none
  nlohmann::json user_metadata;  // null when none
  std::vector<ItemMeta> items;
  const ItemMeta* find(std::string_view name) const;
};

// The tensor name used for a leaf path (a lone leaf's path is "").
std::string tensor_name_for_path(const std::string& path);
// Item names become file names: same rules as tensor names, and not starting with '_'
// (reserved for the checkpoint's own files) or '.'.
absl::Status validate_item_name(std::string_view name);

nlohmann::json treedef_to_json(const TreeDef& def);
absl::StatusOr<TreeDef> treedef_from_json(const nlohmann::json& j);

std::string metadata_to_json(const StepMetadata& m);
absl::StatusOr<StepMetadata> parse_metadata(std::string_view text);

}  // namespace graft::checkpoint
