// check_shard_grid (metadata.h): whether a split leaf's blocks tile it exactly once. Part of
// the parsers' library (no core library: the metadata fuzz target builds it alone).
#include <map>
#include <set>

#include "checkpoint/metadata.h"
#include "core/error.h"

namespace graft::checkpoint {
namespace {

absl::Status grid_error(const BlockIndex& b, const char* what, size_t d) {
  return absl::InvalidArgumentError(
      str_cat("block ", block_index_str(b), " ", what, " dimension ", d));
}

}  // namespace

std::string block_index_str(const BlockIndex& b) {
  std::string out = "[";
  for (size_t d = 0; d < b.size(); ++d) {
    out += str_cat(d ? ", " : "", b[d].first, ":", b[d].second);
  }
  return out + "]";
}

std::string shard_tensor_name(const std::string& tensor, const BlockIndex& index) {
  std::string out = tensor + "@";
  for (size_t d = 0; d < index.size(); ++d) {
    out += str_cat(d ? "," : "", index[d].first, ":", index[d].second);
  }
  return out;
}

absl::Status check_shard_grid(const Shape& shape, const std::vector<BlockIndex>& blocks) {
  if (blocks.empty()) return absl::InvalidArgumentError("no blocks");
  const size_t rank = shape.size();
  std::vector<std::map<int64_t, int64_t>> cuts(rank);  // per dimension: start -> stop
  for (const BlockIndex& b : blocks) {
    if (b.size() != rank) {
      return absl::InvalidArgumentError(
          str_cat("block ", block_index_str(b), " for an array of rank ", rank));
    }
    for (size_t d = 0; d < rank; ++d) {
      const auto [a, z] = b[d];
      if (a < 0 || a > z || z > shape[d]) {
        return absl::InvalidArgumentError(str_cat(
            "block ", block_index_str(b), " lies outside dimension ", d, " of size ", shape[d]));
      }
      if (a == z && shape[d] != 0) return grid_error(b, "is empty along", d);
      const auto [it, fresh] = cuts[d].emplace(a, z);
      if (!fresh && it->second != z) return grid_error(b, "overlaps another along", d);
    }
  }
  // Per dimension the ranges must partition [0, size): then distinct blocks, one per
  // combination of ranges, cover the array exactly once.
  uint64_t cells = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t pos = 0;
    for (const auto& [a, z] : cuts[d]) {
      if (a < pos) {
        return absl::InvalidArgumentError(
            str_cat("blocks overlap in [", a, ", ", pos, ") of dimension ", d));
      }
      if (a > pos) {
        return absl::InvalidArgumentError(
            str_cat("no block covers [", pos, ", ", a, ") of dimension ", d));
      }
      pos = z;
    }
    if (pos != shape[d]) {
      return absl::InvalidArgumentError(
          str_cat("no block covers [", pos, ", ", shape[d], ") of dimension ", d));
    }
    cells *= cuts[d].size();
    if (cells > blocks.size()) {
      return absl::InvalidArgumentError(
          str_cat("blocks of the grid are missing (", blocks.size(), " blocks)"));
    }
  }
  std::set<BlockIndex> seen;
  for (const BlockIndex& b : blocks) {
    if (!seen.insert(b).second) {
      return absl::InvalidArgumentError(str_cat("block ", block_index_str(b), " appears twice"));
    }
  }
  if (seen.size() != cells) {
    return absl::InvalidArgumentError(
        str_cat(cells - seen.size(), " of ", cells, " blocks of the grid are missing"));
  }
  return absl::OkStatus();
}

}  // namespace graft::checkpoint
