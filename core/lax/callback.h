// jax.pure_callback: a host function called from inside graft programs.
#pragma once

#include <functional>
#include <vector>

#include "core/array.h"

namespace graft {

// The host function: gets the arguments as evaluated host arrays, returns one array per
// result (of exactly the declared shapes and dtypes; a mismatch is a graft::Error naming the
// result when the call runs). It may use graft ops on its arguments; it must not keep them
// expecting them to change, and it may run on any thread.
using HostCallback = std::function<std::vector<Array>(const std::vector<Array>&)>;

// What vmap does with a pure_callback (JAX's vmap_method):
//   kNone          vmap is a graft::Error (JAX's default);
//   kSequential    one call per batch element, in a scan over the batch;
//   kExpandDims    one call; unbatched arguments get a leading axis of size 1;
//   kBroadcastAll  one call; unbatched arguments are broadcast to the batch size.
// With kExpandDims / kBroadcastAll the batch is the leading axis of every argument and the
// callback must return results with that leading axis.
enum class VmapMethod { kNone, kSequential, kExpandDims, kBroadcastAll };

// jax.pure_callback(callback, result_shape_dtypes, *args, vmap_method=...): the callback runs
// when the result is computed (eagerly: when the value is read; under jit: each time the
// compiled function runs, on the host; on a GPU its arguments are copied to the host and its
// results back). It is pure: jit drops it when its results are unused. It has no
// derivative: grad / jvp of it are a graft::Error, as in JAX (wrap it in custom_jvp / custom_vjp).
// `result_shape_dtypes` are avals (shape, dtype) or, in the overload below, arrays whose shapes and
// dtypes are wanted (eval_shape's placeholders, as JAX's ShapeDtypeStruct).
std::vector<Array> pure_callback(HostCallback callback,
                                 const std::vector<Aval>& result_shape_dtypes,
                                 const std::vector<Array>& args,
                                 VmapMethod vmap_method = VmapMethod::kNone);
std::vector<Array> pure_callback(HostCallback callback, const std::vector<Array>& result_like,
                                 const std::vector<Array>& args,
                                 VmapMethod vmap_method = VmapMethod::kNone);

}  // namespace graft
