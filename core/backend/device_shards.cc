#include "core/backend/device_shards.h"

#include <cstring>
#include <set>
#include <utility>

#include "core/error.h"

namespace graft {
namespace {

void release_shards(void* data, size_t, int) { delete static_cast<DeviceShards*>(data); }

const Backend& devices_backend(const char* op) {
  const Backend* d = device_backend();
  if (d == nullptr) fail(op, "a sharding over device memory, but no device backend is linked");
  return *d;
}

// Copies the block `index` of a row-major array of `shape` between the whole array and a dense
// block: to the block when `to_block`, else back into the whole array. Contiguous runs of the
// innermost dimension go in one memcpy each.
void copy_block(const Shape& shape, const ShardIndex& index, size_t esize, char* whole, char* block,
                bool to_block) {
  const size_t rank = shape.size();
  Shape bshape;
  for (const auto& [a, b] : index) bshape.push_back(b - a);
  if (numel(bshape) == 0) return;
  if (rank == 0) {
    to_block ? std::memcpy(block, whole, esize) : std::memcpy(whole, block, esize);
    return;
  }
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  const size_t run = static_cast<size_t>(bshape[rank - 1]) * esize;
  std::vector<int64_t> at(rank, 0);  // position inside the block, the last dimension 0
  for (int64_t r = 0, rows = numel(bshape) / bshape[rank - 1]; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (index[d].first + at[d]) * stride[d];
    char* w = whole + static_cast<size_t>(offset) * esize;
    char* b = block + static_cast<size_t>(r) * run;
    to_block ? std::memcpy(b, w, run) : std::memcpy(w, b, run);
    for (size_t d = rank - 1; d-- > 0;) {  // the next row, odometer-wise
      if (++at[d] < bshape[d]) break;
      at[d] = 0;
    }
  }
}

}  // namespace

const DeviceShards* device_shards(const Buffer& b) {
  if (b.device() != kShardedDevices) return nullptr;
  return static_cast<const DeviceShards*>(b.data());
}

std::shared_ptr<Buffer> place_shards(const Buffer& host, const Shape& shape, DType dtype,
                                     const NamedSharding& sharding) {
  const Backend& backend = devices_backend("device_put");
  const std::vector<Device> devs = sharding.devices();
  const size_t esize = dtype_size(dtype);
  const Shape block = sharding.shard_shape(shape);
  const size_t bytes = static_cast<size_t>(numel(block)) * esize;
  auto shards = std::make_unique<DeviceShards>(DeviceShards{sharding, shape, dtype, {}});
  std::vector<char> staging(bytes + 1);
  for (size_t k = 0; k < devs.size(); ++k) {
    copy_block(shape, sharding.shard_index(shape, static_cast<int64_t>(k)), esize,
               static_cast<char*>(const_cast<void*>(host.data())), staging.data(),
               /*to_block=*/true);
    shards->blocks.push_back(backend.copy_from_host(staging.data(), bytes, devs[k].id));
  }
  const size_t total = static_cast<size_t>(numel(shape)) * esize;
  DeviceShards* raw = shards.release();
  return std::make_shared<Buffer>(
      Buffer::DeviceMemory{raw, total, kShardedDevices, &release_shards});
}

std::shared_ptr<Buffer> gather_shards(const DeviceShards& s, int device) {
  const size_t esize = dtype_size(s.dtype);
  const size_t total = static_cast<size_t>(numel(s.shape)) * esize;
  auto host = Buffer::make(total, "a gathered sharded array");
  if (!s.blocks.empty()) {
    const Backend& backend = devices_backend("eval");
    std::vector<char> staging(s.blocks[0]->bytes() + 1);
    std::set<ShardIndex> done;  // a replicated block is read from its first holder only
    for (size_t k = 0; k < s.blocks.size(); ++k) {
      ShardIndex index = s.sharding.shard_index(s.shape, static_cast<int64_t>(k));
      if (!done.insert(index).second) continue;
      backend.copy_to_host(*s.blocks[k], staging.data(), s.blocks[k]->bytes());
      copy_block(s.shape, index, esize, static_cast<char*>(host->data()), staging.data(),
                 /*to_block=*/false);
    }
  }
  if (device < 0) return host;
  return devices_backend("eval").copy_from_host(host->data(), total, device);
}

int placement_device(const std::shared_ptr<Buffer>* const* buffers, size_t n) {
  int device = -1, sharded_home = -1;
  for (size_t i = 0; i < n; ++i) {
    const Buffer* b = buffers[i]->get();
    if (b == nullptr || b->on_host()) continue;
    if (const DeviceShards* s = device_shards(*b)) {
      if (sharded_home < 0) sharded_home = s->sharding.devices()[0].id;
      continue;
    }
    if (device >= 0 && b->device() != device) {
      fail("eval", "operands live on different devices (", device, " and ", b->device(),
           "): device_put them onto one");
    }
    device = b->device();
  }
  return device >= 0 ? device : sharded_home;
}

bool gather_sharded_args(Buffers& args, int device) {
  bool any = false;
  for (std::shared_ptr<Buffer>& b : args) {
    if (b == nullptr) continue;
    if (const DeviceShards* s = device_shards(*b)) {
      b = gather_shards(*s, device);
      any = true;
    }
  }
  return any;
}

}  // namespace graft
