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
// Format 2 ("graft-checkpoint-2", written when some leaf is split by its sharding) adds, for
// such a leaf, its blocks in place of the leaf's crc32c (the leaf is in no single tensor):
//
//   {"path": "w1", "tensor": "w1", "dtype": "f32", "shape": [4, 8], "nbytes": 128,
//    "sharding": "NamedSharding(Mesh(data=2), P('data'))",
//    "shards": [{"file": "params.process-0.safetensors", "tensor": "w1@0:2,0:8",
//                "index": [[0, 2], [0, 8]], "nbytes": 64, "crc32c": 1234}, ...]}
//
// A checkpoint without split leaves is still written as format 1, so older readers (and
// tools that read "<item>.safetensors") keep working; both formats are read.
//
// parse_metadata validates the whole document (it is a fuzz target), so later code may trust
// shapes, dtypes, names and leaf counts to be consistent, and a leaf's shards to tile its
// shape exactly once (a grid of blocks, as a NamedSharding cuts it) with byte counts that
// match dtype and block shape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype/dtype.h"
#include "core/shape.h"
#include "core/tree/tree.h"
#include "nlohmann/json.hpp"

namespace graft::checkpoint {

inline constexpr const char* kGraftVersion = "0.1.0";
inline constexpr const char* kFormat = "graft-checkpoint-1";
inline constexpr const char* kFormatSharded = "graft-checkpoint-2";  // adds LeafMeta::shards
inline constexpr const char* kMetadataFile = "_CHECKPOINT_METADATA";
inline constexpr const char* kCommitFile = "_COMMITTED";
inline constexpr const char* kLockFile = "_LOCK";  // in the folder, see dir_lock.h
inline constexpr int kMaxTreeDepth = 200;

// A block's [start, stop) along each dimension (core/sharding/device_put.h's ShardIndex; spelled
// here so the parser builds without the core library).
using BlockIndex = std::vector<std::pair<int64_t, int64_t>>;

// One saved block of a split leaf: a tensor of the block's shape in `file` (a file of the
// step directory).
struct ShardMeta {
  std::string file;
  std::string tensor;
  BlockIndex index;
  uint64_t nbytes = 0;
  uint32_t crc32c = 0;
};

struct LeafMeta {
  std::string path;    // tree_leaf_paths of the item's structure
  std::string tensor;  // its name in the item's safetensors file
  DType dtype = DType::kF32;
  Shape shape;
  // "replicated" for an array without a sharding, else its NamedSharding's text (what it
  // was saved from; restore places leaves as its target's are).
  std::string sharding = "replicated";
  uint64_t nbytes = 0;
  uint32_t crc32c = 0;  // of the whole tensor; unused when `shards` is not empty
  // Empty: the leaf is tensor `tensor` of the item's file. Else its distinct blocks (each
  // once, tiling the shape), in the files of the processes that wrote them.
  std::vector<ShardMeta> shards;
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

// Whether `shards` tile an array of `shape` exactly once as a grid (per dimension, the
// blocks' ranges partition [0, size), and every combination of them appears once); the
// reason otherwise. Blocks must have the array's rank. parse_metadata applies it.
absl::Status check_shard_grid(const Shape& shape, const std::vector<BlockIndex>& blocks);
std::string block_index_str(const BlockIndex& b);  // "[0:2, 0:64]"
// A block's tensor name, which says where the block lies: "layers.wq@0:2,0:64". Reading
// checks each block's name against its index in the metadata.
std::string shard_tensor_name(const std::string& tensor, const BlockIndex& index);

}  // namespace graft::checkpoint
