// pmap as a primitive (like JAX's xla_pmap): a body Program run once per member of a named
// axis, member k on virtual device k, all at the same time, with the collectives in the body
// exchanging data between them (core/primitives/collective.h). Its inputs are the body's
// consts (values of outer traces, the same on every member) and the arguments, each split
// along its in_axis (-1: passed whole to every member); outputs are stacked along their
// out_axis (-1: one member's, which must not vary over the axis).
//
// Rules (pmap.cc): jvp and vjp are pmaps of the body's jvp / vjp (the backward pmap
// recomputes the forward inside, so nothing crosses between the two), and vmap is a pmap
// of the batched body, with the batch moved to the front. The CPU kernel is
// core/backend/cpu/pmap_kernel.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/primitives/control.h"

namespace graft {

class Pmap : public ControlPrimitive {
 public:
  Pmap(std::string fn_name, std::string axis, int64_t size, ProgramPtr body,
       std::vector<int> in_axes, std::vector<int> out_axes, std::vector<Aval> in,
       std::vector<Aval> out);
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override { return {{"body", bodies()[0]}}; }
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> bodies) const override;
  // Its outputs vary over what the body's do, less its own axis (that ends here).
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  // The axes its body communicates over, less its own.
  AxisMask axis_names() const override;
  GRAFT_TRANSFORM_RULES;

  const Program& body() const { return *bodies()[0]; }
  const std::string& axis() const { return axis_; }
  int64_t size() const { return size_; }
  const std::vector<int>& in_axes() const { return in_axes_; }
  const std::vector<int>& out_axes() const { return out_axes_; }

 private:
  std::string fn_name_, axis_;
  int64_t size_;
  std::vector<int> in_axes_, out_axes_;
};

namespace detail {

// pmap of fn at args: in_axes one per argument (normalized, -1 for none); out_axes one for all
// outputs or one per output (negative counts from the end of the output's rank, kNone for
// none). Traces fn once with `axis` bound; errors are "[pmap] ...".
inline constexpr int kNoneAxis = -1000000;
std::vector<Array> pmap_flat(const std::string& fn_name, const std::string& axis, const FlatFn& fn,
                             const std::vector<Array>& args, const std::vector<int>& in_axes,
                             const std::vector<int>& out_axes,
                             std::optional<int64_t> axis_size = std::nullopt);

}  // namespace detail
}  // namespace graft
