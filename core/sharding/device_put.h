// Placing arrays on devices: jax.device_put and jax.lax.with_sharding_constraint, over the
// meshes and shardings of core/sharding/mesh.h (which this header includes; see there for the
// model). Array::sharding(), devices() and addressable_shards() are defined in
// core/sharding/device_put.cc too: they read device shards and slice blocks, which the base types
// below the backend cannot.
#pragma once

#include "core/array.h"
#include "core/device/device.h"
#include "core/sharding/mesh.h"

namespace graft {

// jax.device_put: x (evaluated) placed with `sharding` (the same values; "[device_put] ..."
// if the sharding does not fit x's shape or names devices that do not exist), or on one device.
Array device_put(const Array& x, const NamedSharding& sharding);
Array device_put(const Array& x, const Device& device);

// jax.lax.with_sharding_constraint: inside jit, x's layout is pinned to `sharding` (the
// partitioner moves it there; core/interpreters/spmd.h), which also makes jit partition over its mesh.
// Outside a trace it is the identity. "[with_sharding_constraint] ..." if the sharding does
// not fit x's shape.
Array with_sharding_constraint(const Array& x, const NamedSharding& sharding);

}  // namespace graft
