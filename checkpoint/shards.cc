#include "checkpoint/shards.h"

#include <cstring>
#include <set>

#include "checkpoint/crc32c.h"
#include "core/error.h"

namespace graft::checkpoint {
namespace {

constexpr const char* kCrcKeyPrefix = "crc32c/";  // tensor names have no '/': never a clash

Shape block_shape(const BlockIndex& b) {
  Shape s;
  for (const auto& [a, z] : b) s.push_back(z - a);
  return s;
}

// Calls f(whole_offset, block_offset, run_bytes) for each contiguous run of the block: its
// rows along the last dimension, walked with an odometer (no recursion, any rank).
template <typename F>
void for_each_run(const Shape& shape, size_t esize, const BlockIndex& b, F&& f) {
  const size_t rank = shape.size();
  for (const auto& [a, z] : b) {
    if (z <= a) return;  // an empty block has no bytes
  }
  if (rank == 0) {
    f(0, 0, esize);
    return;
  }
  const Shape strides = row_major_strides(shape);
  const size_t run = static_cast<size_t>(b[rank - 1].second - b[rank - 1].first) * esize;
  std::vector<int64_t> at(rank - 1);
  for (size_t d = 0; d + 1 < rank; ++d) at[d] = b[d].first;
  size_t out = 0;
  while (true) {
    int64_t elem = b[rank - 1].first;
    for (size_t d = 0; d + 1 < rank; ++d) elem += at[d] * strides[d];
    f(static_cast<size_t>(elem) * esize, out, run);
    out += run;
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++at[d] < b[d].second) break;
      at[d] = b[d].first;
      if (d == 0) return;
    }
    if (rank == 1) return;
  }
}

}  // namespace

std::vector<BlockPlan> plan_blocks(const NamedSharding& sharding, const Shape& shape,
                                   const std::vector<Device>& devices) {
  std::vector<BlockPlan> plan;
  std::set<BlockIndex> seen;
  for (size_t k = 0; k < devices.size(); ++k) {
    BlockIndex index = sharding.shard_index(shape, static_cast<int64_t>(k));
    if (!seen.insert(index).second) continue;  // a replica: its first holder writes it
    plan.push_back({std::move(index), devices[k].id, devices[k].process_index});
  }
  return plan;
}

std::vector<BlockPlan> blocks_of_process(const std::vector<BlockPlan>& plan, int process) {
  std::vector<BlockPlan> out;
  for (const BlockPlan& b : plan) {
    if (b.process == process) out.push_back(b);
  }
  return out;
}

bool is_split(const Array& a) {
  if (a.node()->sharding == nullptr) return false;
  const NamedSharding s = a.sharding();
  return !s.is_single_device() && !s.is_fully_replicated() && a.ndim() > 0;
}

std::string shard_file_name(const std::string& item, int process) {
  return str_cat(item, ".process-", process, ".safetensors");
}

absl::Status describe_shards(const std::string& item, const Array& a, LeafMeta& l) {
  const NamedSharding s = a.sharding();
  const uint64_t esize = static_cast<uint64_t>(dtype_size(a.dtype()));
  for (BlockPlan& b : plan_blocks(s, a.shape(), s.devices())) {
    ShardMeta m;
    m.file = shard_file_name(item, b.process);
    m.tensor = shard_tensor_name(l.tensor, b.index);
    if (absl::Status st = validate_tensor_name(m.tensor); !st.ok()) {
      return absl::InvalidArgumentError(
          str_cat("item \"", item, "\" leaf \"", l.path, "\": ", st.message()));
    }
    m.nbytes = esize * static_cast<uint64_t>(numel(block_shape(b.index)));
    m.index = std::move(b.index);
    l.shards.push_back(std::move(m));
  }
  return absl::OkStatus();
}

void copy_block_out(const void* whole, const Shape& shape, size_t esize, const BlockIndex& b,
                    void* block) {
  const char* src = static_cast<const char*>(whole);
  char* dst = static_cast<char*>(block);
  for_each_run(shape, esize, b,
               [&](size_t w, size_t o, size_t n) { std::memcpy(dst + o, src + w, n); });
}

void copy_block_in(const void* block, const Shape& shape, size_t esize, const BlockIndex& b,
                   void* whole) {
  const char* src = static_cast<const char*>(block);
  char* dst = static_cast<char*>(whole);
  for_each_run(shape, esize, b,
               [&](size_t w, size_t o, size_t n) { std::memcpy(dst + w, src + o, n); });
}

absl::Status write_item_shards(const std::string& dir, ItemMeta& im,
                               const std::vector<SaveJob::Source>& sources, int process) {
  const std::string file = shard_file_name(im.name, process);
  uint64_t total = 0;
  for (const LeafMeta& l : im.leaves) {
    for (const ShardMeta& s : l.shards) total += s.file == file ? s.nbytes : 0;
  }
  // Gathered into one staging area: the file is written in one pass, its blocks contiguous.
  std::unique_ptr<char[]> staging(new char[total ? total : 1]);
  std::vector<TensorView> views;
  std::map<std::string, std::string> header = {{"format", "graft"},
                                               {"graft_version", kGraftVersion}};
  uint64_t at = 0;
  for (size_t k = 0; k < im.leaves.size(); ++k) {
    LeafMeta& l = im.leaves[k];
    const size_t esize = static_cast<size_t>(safetensors_dtype_size(l.dtype));
    for (ShardMeta& s : l.shards) {
      if (s.file != file) continue;
      char* dst = staging.get() + at;
      copy_block_out(sources[k].data, l.shape, esize, s.index, dst);
      s.crc32c = crc32c(dst, s.nbytes);
      header[kCrcKeyPrefix + s.tensor] = std::to_string(s.crc32c);
      views.push_back({s.tensor, l.dtype, block_shape(s.index), dst});
      at += s.nbytes;
    }
  }
  if (views.empty()) return absl::OkStatus();
  return write_safetensors(dir + "/" + file, views, header);
}

absl::Status collect_shard_checksums(const std::string& dir, ItemMeta& im, int process) {
  const std::string own = shard_file_name(im.name, process);
  ReaderCache readers;
  for (LeafMeta& l : im.leaves) {
    for (ShardMeta& s : l.shards) {
      if (s.file == own) continue;
      auto it = readers.find(s.file);
      if (it == readers.end()) {
        absl::StatusOr<SafetensorsReader> r = SafetensorsReader::open(dir + "/" + s.file);
        if (!r.ok()) {
          return absl::DataLossError(str_cat("shard file ", s.file, " of item \"", im.name,
                                             "\" (another process's): ", r.status().message()));
        }
        it = readers.emplace(s.file, std::make_unique<SafetensorsReader>(std::move(*r))).first;
      }
      const SafetensorsHeader& h = it->second->header();
      const TensorInfo* t = h.find(s.tensor);
      auto crc = h.metadata.find(kCrcKeyPrefix + s.tensor);
      if (!t || t->dtype != l.dtype || t->shape != block_shape(s.index) ||
          crc == h.metadata.end()) {
        return absl::DataLossError(str_cat("shard file ", s.file, " lacks block \"", s.tensor,
                                           "\" of leaf \"", l.path, "\" (or its checksum)"));
      }
      try {
        const unsigned long v = std::stoul(crc->second);
        if (v > 0xFFFFFFFFul) throw std::out_of_range("crc32c");
        s.crc32c = static_cast<uint32_t>(v);
      } catch (const std::exception&) {
        return absl::DataLossError(
            str_cat("shard file ", s.file, ": bad checksum of \"", s.tensor, "\""));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Buffer>> read_split_leaf(const std::string& dir,
                                                        const std::string& where, const LeafMeta& l,
                                                        ReaderCache& readers, bool verify) {
  auto whole = Buffer::make(static_cast<size_t>(l.nbytes));
  const size_t esize = static_cast<size_t>(safetensors_dtype_size(l.dtype));
  std::vector<char> block;
  for (const ShardMeta& s : l.shards) {
    const std::string leaf = str_cat(where, ": leaf \"", l.path, "\": ");
    auto it = readers.find(s.file);
    if (it == readers.end()) {
      absl::StatusOr<SafetensorsReader> r = SafetensorsReader::open(dir + "/" + s.file);
      if (!r.ok()) {
        return absl::Status(r.status().code(),
                            str_cat(leaf, "shard file ", s.file, ": ", r.status().message()));
      }
      it = readers.emplace(s.file, std::make_unique<SafetensorsReader>(std::move(*r))).first;
    }
    const TensorInfo* t = it->second->header().find(s.tensor);
    if (!t)
      return absl::DataLossError(str_cat(leaf, "block \"", s.tensor, "\" missing from ", s.file));
    if (t->dtype != l.dtype || t->shape != block_shape(s.index)) {
      return absl::DataLossError(str_cat(leaf, "block \"", s.tensor, "\" of ", s.file, " is ",
                                         t->dtype, shape_str(t->shape), ", the metadata says ",
                                         l.dtype, shape_str(block_shape(s.index))));
    }
    block.resize(static_cast<size_t>(s.nbytes));
    if (absl::Status st = it->second->read(*t, block.data()); !st.ok()) {
      return absl::Status(st.code(), str_cat(leaf, st.message()));
    }
    if (verify && crc32c(block.data(), block.size()) != s.crc32c) {
      return absl::DataLossError(
          str_cat(leaf, "block \"", s.tensor, "\" of ", s.file, " fails its checksum"));
    }
    copy_block_in(block.data(), l.shape, esize, s.index, whole->data());
  }
  return whole;
}

}  // namespace graft::checkpoint
