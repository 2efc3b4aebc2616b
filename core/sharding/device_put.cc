#include "core/sharding/device_put.h"

#include <memory>
#include <utility>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/device_shards.h"
#include "core/error.h"
#include "core/lax/lax.h"

namespace graft {

Array device_put(const Array& x, const NamedSharding& sharding) {
  if (!x.valid()) fail("device_put", "got an empty Array handle");
  if (x.is_tracer()) {
    fail("device_put", "cannot place a traced value (inside jit use with_sharding_constraint)");
  }
  sharding.check("device_put", x.shape());
  const std::vector<Device> devs = sharding.devices();  // they exist
  if (sharding.mesh().platform() != "cpu") {
    if (sharding.is_single_device()) return device_put(x, devs[0]);
    const std::shared_ptr<Buffer> b = x.buffer();
    if (const DeviceShards* s = device_shards(*b); s != nullptr && s->sharding == sharding) {
      return x;  // placed so already
    }
    Array out = Array::from_buffer(place_shards(*to_host(b), x.shape(), x.dtype(), sharding),
                                   x.shape(), x.dtype(), x.weak_type());
    out.node()->sharding = std::make_shared<const NamedSharding>(sharding);
    return out;
  }
  // The CPU's devices share the host's memory: a value in a GPU's (or GPUs') comes back.
  std::shared_ptr<Buffer> b = x.buffer();
  if (!b->on_host()) b = std::const_pointer_cast<Buffer>(to_host(b));
  Array out = Array::from_buffer(std::move(b), x.shape(), x.dtype(), x.weak_type());
  out.node()->sharding = std::make_shared<const NamedSharding>(sharding);
  return out;
}

Array device_put(const Array& x, const Device& device) {
  if (device.platform != "cpu") {
    if (!x.valid()) fail("device_put", "got an empty Array handle");
    if (x.is_tracer()) fail("device_put", "cannot place a traced value on ", device.str());
    const std::vector<Device> on = devices(device.platform);  // fails for an unknown platform
    if (device.id < 0 || device.id >= static_cast<int>(on.size())) {
      fail("device_put", "there is no device ", device.str(), " (", on.size(), " ", device.platform,
           " devices)");
    }
    std::shared_ptr<Buffer> b = x.buffer();
    if (b->device() == device.id) return x;
    std::shared_ptr<const Buffer> host = x.host_buffer();
    auto moved = device_backend()->copy_from_host(host->data(), host->bytes(), device.id);
    return Array::from_buffer(std::move(moved), x.shape(), x.dtype(), x.weak_type());
  }
  if (std::shared_ptr<Buffer> b = x.buffer(); !b->on_host()) {  // back from a GPU or GPUs
    std::shared_ptr<const Buffer> host = to_host(b);
    return device_put(Array::from_buffer(std::const_pointer_cast<Buffer>(host), x.shape(),
                                         x.dtype(), x.weak_type()),
                      device);
  }
  if (device.id < 0 || device.id >= device_count()) {
    fail("device_put", "there is no device ", device.str(), " (", device_count(), " devices)");
  }
  return device_put(x, NamedSharding::single_device(device));
}

NamedSharding Array::sharding() const {
  require("sharding");
  if (node_->sharding != nullptr) return *node_->sharding;
  // An array in one GPU's memory (device_put on it, or computed there) is placed there.
  if (node_->evaluated() && index_ < node_->buffers.size()) {
    const Buffer* b = node_->buffers[index_].get();
    if (b != nullptr && !b->on_host() && device_shards(*b) == nullptr) {
      return NamedSharding::single_device(Device{b->device(), process_index(), "cuda"});
    }
  }
  return NamedSharding::single_device(graft::devices()[0]);
}

std::vector<Device> Array::devices() const { return sharding().devices(); }

std::vector<Shard> Array::addressable_shards() const {
  const NamedSharding s = sharding();
  const std::vector<Device> devs = s.devices();
  std::vector<Shard> out;
  if (const DeviceShards* on = device_shards(*buffer())) {  // each block in its device's memory
    const Shape block = s.shard_shape(shape());
    for (size_t k = 0; k < devs.size(); ++k) {
      out.push_back(Shard{devs[k], s.shard_index(shape(), static_cast<int64_t>(k)),
                          Array::from_buffer(on->blocks[k], block, dtype(), weak_type())});
    }
    return out;
  }
  for (size_t k = 0; k < devs.size(); ++k) {
    if (devs[k].process_index != process_index()) continue;
    ShardIndex index = s.shard_index(shape(), static_cast<int64_t>(k));
    Shape start, limit;
    for (const auto& [a, b] : index) {
      start.push_back(a);
      limit.push_back(b);
    }
    Array block = slice(*this, start, limit);
    eval(block);
    out.push_back(Shard{devs[k], std::move(index), std::move(block)});
  }
  return out;
}

}  // namespace graft
