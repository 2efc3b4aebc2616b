// Named mapped axes: the names pmap, shard_map and vmap(axis_name=...) bind, and the
// "varying manual axes" (vma) of a value, as in JAX's shard_map.
//
// Inside a function mapped over axis "i", a value either varies across the members of "i"
// (an argument mapped over it, or anything computed from one) or is the same on every member
// (an unmapped argument, a constant, or the result of psum). Aval::vma is that set, as a bit
// mask over interned axis names. Reverse mode relies on it: the cotangent of a value that does
// not vary is summed over the members (the transpose of the implicit broadcast), so the
// gradient of psum(x) with respect to a varying x is 1, not the axis size.
//
// The axis environment is the stack of axes bound while tracing (innermost last), per thread:
// collectives read an axis's size from it when they are bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graft {

using AxisMask = uint64_t;
// Named axes, as collectives and PartitionSpecs take them: {"data"}, {"data", "model"}.
using AxisNames = std::vector<std::string>;
inline constexpr int kMaxAxisNames = 64;

// The bit of an axis name (interned on first use, for the life of the process; at most 64
// distinct names: more is a graft::Error).
int axis_bit(std::string_view name);
AxisMask axis_mask(const std::vector<std::string>& names);
const std::string& axis_name_of(int bit);
// The names of the axes in m, by bit.
std::vector<std::string> axis_names_of(AxisMask m);
// "{i,j}" (empty for 0), for Aval::str and errors.
std::string vma_str(AxisMask m);

struct AxisFrame {
  std::string name;
  int64_t size = 0;
};

// Binds `name` with `size` for the scope's lifetime on this thread (pmap, shard_map and
// vmap with an axis_name push one while they trace and interpret).
class AxisScope {
 public:
  AxisScope(std::string name, int64_t size);
  ~AxisScope();
  AxisScope(const AxisScope&) = delete;
  AxisScope& operator=(const AxisScope&) = delete;

 private:
  bool pushed_ = false;
};

// The size of the innermost binding of `name`; "[op] unbound axis name 'x'" if none.
int64_t bound_axis_size(std::string_view op, const std::string& name);
bool axis_bound(const std::string& name);
const std::vector<AxisFrame>& axis_env();

}  // namespace graft
