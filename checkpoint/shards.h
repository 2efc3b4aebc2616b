// Split leaves on disk: which blocks a sharded array is saved as, which process writes each,
// and the block files themselves.
//
// A leaf whose NamedSharding splits some dimension is saved as its distinct blocks. The
// sharding gives every device of its mesh a block; devices along the axes the leaf is
// replicated over hold the same block, and each distinct block is written once, by the first
// device in mesh order that holds it (replica 0, as Orbax and torch DCP choose), into the
// file of that device's process:
//
//   <step>/<item>.process-<p>.safetensors   tensors "<leaf tensor>@<start>:<stop>,..." (one
//                                            per block; "w@0:2,0:64"), and in __metadata__
//                                            "crc32c/<tensor>" -> its checksum (decimal)
//
// So process p writes exactly the bytes of the blocks whose first holder it owns (for a
// leaf split over all mesh axes: its devices' blocks; nothing for a block another process
// holds first), and process 0 also writes the whole unsplit leaves (<item>.safetensors) and
// the metadata. The metadata lists every block (file, tensor, index, nbytes, crc32c);
// process 0 knows the plan from the sharding, its own checksums, and reads the others' from
// their files' headers after the barrier (collect_shard_checksums).
//
// On the CPU an array keeps its global buffer (core/sharding/device_put.h), so a block is gathered
// from it when written; restore reads each block's bytes (only that tensor of the file), checks its
// checksum and scatters it into the whole leaf, which is then placed as its target.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/metadata.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/save_job.h"
#include "core/buffer.h"
#include "core/sharding/device_put.h"

namespace graft::checkpoint {

struct BlockPlan {
  BlockIndex index;
  int device = 0;   // id of the first device in mesh order that holds the block
  int process = 0;  // that device's process: the one that writes it
};

// The distinct blocks of an array of `shape` under `sharding`, in the mesh order of their
// first holders. `devices` are the mesh's devices in mesh order (sharding.devices(); a test
// passes its own to model several processes). Pure: reads nothing but its arguments.
std::vector<BlockPlan> plan_blocks(const NamedSharding& sharding, const Shape& shape,
                                   const std::vector<Device>& devices);
// The blocks that process `process` writes.
std::vector<BlockPlan> blocks_of_process(const std::vector<BlockPlan>& plan, int process);

// Whether `a` is saved as blocks: placed with a sharding that splits some dimension.
bool is_split(const Array& a);

std::string shard_file_name(const std::string& item, int process);  // "<item>.process-<p>..."

// Fills l.shards (checksums 0 until written) for a leaf saved as blocks, under item `item`;
// InvalidArgument if a block's tensor name is unusable.
absl::Status describe_shards(const std::string& item, const Array& a, LeafMeta& l);

// Row-major copies between the bytes of a whole array of `shape` (elements of `esize`
// bytes) and a dense block of it.
void copy_block_out(const void* whole, const Shape& shape, size_t esize, const BlockIndex& b,
                    void* block);
void copy_block_in(const void* block, const Shape& shape, size_t esize, const BlockIndex& b,
                   void* whole);

// Writes this process's shard file of item `im` into `dir` (none if it writes no block),
// gathering blocks from `sources` (whole leaves, as SaveJob holds them), and fills the
// checksums of the blocks it wrote.
absl::Status write_item_shards(const std::string& dir, ItemMeta& im,
                               const std::vector<SaveJob::Source>& sources, int process);
// Process 0, once every process has written: the checksums of the blocks other processes
// wrote, from their files' headers. A missing file or entry is DataLoss naming it.
absl::Status collect_shard_checksums(const std::string& dir, ItemMeta& im, int process);

// Opened safetensors files of one step, by file name.
using ReaderCache = std::map<std::string, std::unique_ptr<SafetensorsReader>>;
// The whole bytes of a split leaf, assembled from its blocks (each read from its file and,
// when `verify`, checked against its checksum). Errors name the file and the leaf (`where`
// says which item of which step).
absl::StatusOr<std::shared_ptr<Buffer>> read_split_leaf(const std::string& dir,
                                                        const std::string& where, const LeafMeta& l,
                                                        ReaderCache& readers, bool verify);

}  // namespace graft::checkpoint
