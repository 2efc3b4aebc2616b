#include "transforms/vmap.h"

namespace graft {

std::vector<int> AxisSpec::resolve(const char* op, size_t arg,
                                   const std::vector<Array>& leaves) const {
  std::vector<int> out;
  if (per_leaf_) {
    if (per_leaf_->size() != leaves.size()) {
      fail(op, "in_axes for argument ", arg, " lists ", per_leaf_->size(),
           " axes but the argument has ", leaves.size(), " leaves");
    }
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::optional<int> ax = per_leaf_ ? (*per_leaf_)[i] : all_;
    if (!ax) {
      out.push_back(-1);
      continue;
    }
    int nd = leaves[i].ndim();
    if (*ax < -nd || *ax >= nd) {
      fail(op, "in_axes ", *ax, " is out of range for argument ", arg, " of shape ",
           shape_str(leaves[i].shape()));
    }
    out.push_back(*ax < 0 ? *ax + nd : *ax);
  }
  return out;
}

namespace detail {

std::vector<Array> place_outputs(const VmapResult& r, const std::vector<int>& out_axes) {
  if (out_axes.size() != 1 && out_axes.size() != r.outputs.size()) {
    fail("vmap", "out_axes has ", out_axes.size(), " entries for ", r.outputs.size(), " outputs");
  }
  std::vector<Array> out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    int nd = r.outputs[i].ndim() + (r.dims[i] < 0 ? 1 : 0);
    int to = out_axes[out_axes.size() == 1 ? 0 : i];
    if (to < -nd || to >= nd) {
      fail("vmap", "out_axes ", to, " is out of range for an output of rank ", nd);
    }
    if (to < 0) to += nd;
    out.push_back(move_batch_axis(r.outputs[i], r.dims[i], to, r.axis_size));
  }
  return out;
}

}  // namespace detail
}  // namespace graft
