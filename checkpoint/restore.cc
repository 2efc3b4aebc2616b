// CheckpointManager::restore: reads a committed step into pytrees, checking the structure,
// shapes and dtypes against the targets and every tensor's (or block's) checksum. Nothing is
// returned unless every requested item restored.
#include <sys/stat.h>

#include <sstream>

#include "checkpoint/crc32c.h"
#include "checkpoint/manager.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/shards.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"

namespace graft::checkpoint {
namespace {

// Reads one tree item. `target` is null to take the saved structure, shapes and dtypes.
absl::StatusOr<Item> restore_tree(const std::string& dir, const ItemMeta& im, const Item* target,
                                  const RestoreOptions& opt) {
  const std::string where = str_cat("item \"", im.name, "\" of ", dir);
  if (target && target->def() != im.treedef) {
    return absl::InvalidArgumentError(str_cat(where, ": structure differs: saved ",
                                              im.treedef.str(), ", target ", target->def().str()));
  }
  absl::StatusOr<SafetensorsReader> reader = SafetensorsReader::open(dir + "/" + im.file());
  if (!reader.ok()) return reader.status();
  ReaderCache shard_files;  // split leaves' blocks, each file opened once per item
  std::vector<Array> leaves;
  for (size_t i = 0; i < im.leaves.size(); ++i) {
    const LeafMeta& l = im.leaves[i];
    DType want = l.dtype;
    if (target && target->leaves()[i].valid()) {
      const Array& like = target->leaves()[i];
      if (like.shape() != l.shape) {
        return absl::InvalidArgumentError(str_cat(where, ": leaf \"", l.path, "\" has shape ",
                                                  shape_str(l.shape), ", target wants ",
                                                  shape_str(like.shape())));
      }
      want = like.dtype();
      if (want != l.dtype && !opt.cast) {
        return absl::InvalidArgumentError(str_cat(where, ": leaf \"", l.path, "\" has dtype ",
                                                  l.dtype, ", target wants ", want,
                                                  " (RestoreOptions::cast converts)"));
      }
    }
    std::shared_ptr<Buffer> buf;
    if (l.shards.empty()) {
      const TensorInfo* t = reader->header().find(l.tensor);
      if (!t) return absl::DataLossError(str_cat(where, ": tensor \"", l.tensor, "\" is missing"));
      if (t->dtype != l.dtype || t->shape != l.shape) {
        return absl::DataLossError(str_cat(where, ": tensor \"", l.tensor, "\" is ", t->dtype,
                                           shape_str(t->shape), " in the file but ", l.dtype,
                                           shape_str(l.shape), " in the metadata"));
      }
      buf = Buffer::make(static_cast<size_t>(l.nbytes));
      if (absl::Status s = reader->read(*t, buf->data()); !s.ok()) return s;
      if (opt.verify_checksums && crc32c(buf->data(), l.nbytes) != l.crc32c) {
        return absl::DataLossError(
            str_cat(where, ": tensor \"", l.tensor, "\" fails its checksum"));
      }
    } else {
      absl::StatusOr<std::shared_ptr<Buffer>> b =
          read_split_leaf(dir, where, l, shard_files, opt.verify_checksums);
      if (!b.ok()) return b.status();
      buf = std::move(*b);
    }
    Array a = Array::from_buffer(std::move(buf), l.shape, l.dtype);
    if (want != l.dtype) {
      a = astype(a, want);
      eval(a);
    }
    // Restored as the target is placed (Orbax's target shardings): a checkpoint saved under
    // one mesh restores under another (split leaves were assembled whole above).
    if (target && target->leaves()[i].valid() && target->leaves()[i].node()->sharding) {
      a = device_put(a, target->leaves()[i].sharding());
    }
    leaves.push_back(std::move(a));
  }
  return Item::from_leaves(im.treedef, std::move(leaves));
}

}  // namespace

absl::StatusOr<Composite> CheckpointManager::restore(int64_t step, const Composite& targets,
                                                     const RestoreOptions& options) const {
  wait_idle();  // a running save may be deleting old steps
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!steps_.count(step)) {
      return absl::NotFoundError(str_cat("no committed checkpoint step ", step, " in ", dir_));
    }
  }
  const std::string dir = step_dir(step);
  struct stat st;
  if (::stat((dir + "/" + kCommitFile).c_str(), &st) != 0) {
    return absl::NotFoundError(str_cat("checkpoint step ", step, " is not committed (", dir, ")"));
  }
  absl::StatusOr<StepMetadata> meta = metadata(step);
  if (!meta.ok()) return meta.status();
  Composite out;
  auto one = [&](const std::string& name, const Item* target) -> absl::Status {
    const ItemMeta* im = meta->find(name);
    if (!im) return absl::NotFoundError(str_cat("item \"", name, "\" is not in step ", step));
    if (im->is_json) {
      if (target && !target->is_json()) {
        return absl::InvalidArgumentError(str_cat("item \"", name, "\" holds JSON, not a pytree"));
      }
      out[name] = Item::json(im->value);
      return absl::OkStatus();
    }
    if (target && target->is_json()) {
      return absl::InvalidArgumentError(str_cat("item \"", name, "\" holds a pytree, not JSON"));
    }
    try {
      absl::StatusOr<Item> item = restore_tree(dir, *im, target, options);
      if (!item.ok()) return item.status();
      out[name] = std::move(*item);
    } catch (const graft::AllocError& e) {
      return absl::ResourceExhaustedError(str_cat("restoring item \"", name, "\": ", e.what()));
    } catch (const graft::Error& e) {
      return absl::InternalError(str_cat("restoring item \"", name, "\": ", e.what()));
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(str_cat("restoring item \"", name, "\": out of memory"));
    }
    return absl::OkStatus();
  };
  if (targets.empty()) {
    for (const ItemMeta& im : meta->items) {
      if (absl::Status s = one(im.name, nullptr); !s.ok()) return s;
    }
  } else {
    for (const auto& [name, target] : targets) {
      if (absl::Status s = one(name, &target); !s.ok()) return s;
    }
  }
  return out;
}

absl::StatusOr<Composite> CheckpointManager::restore(int64_t step) const {
  return restore(step, Composite{});
}

}  // namespace graft::checkpoint
