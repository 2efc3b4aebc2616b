#include "core/primitives/pmap.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/device.h"
#include "core/error.h"
#include "core/ir/ad.h"
#include "core/ir/batching.h"
#include "core/ops.h"
#include "core/primitives/control_util.h"

namespace graft {

namespace {

// Tracing a pmap body on this thread: a pmap inside it is not supported yet.
thread_local int pmap_depth = 0;

std::string axes_str(const std::vector<int>& axes) {
  std::vector<std::string> s;
  for (int a : axes) s.push_back(a < 0 ? "None" : std::to_string(a));
  return absl::StrCat("(", absl::StrJoin(s, ", "), s.size() == 1 ? ",)" : ")");
}

AxisMask bit_of(const std::string& axis) { return AxisMask{1} << axis_bit(axis); }

}  // namespace

Pmap::Pmap(std::string fn_name, std::string axis, int64_t size, ProgramPtr body,
           std::vector<int> in_axes, std::vector<int> out_axes, std::vector<Aval> in,
           std::vector<Aval> out)
    : ControlPrimitive(PrimitiveId::kPmap, {std::move(body)}, std::move(in), std::move(out)),
      fn_name_(std::move(fn_name)),
      axis_(std::move(axis)),
      size_(size),
      in_axes_(std::move(in_axes)),
      out_axes_(std::move(out_axes)) {}

std::string Pmap::params() const {
  return absl::StrCat("name=", fn_name_, " axis_name=", axis_, " axis_size=", size_,
                      " in_axes=", axes_str(in_axes_), " out_axes=", axes_str(out_axes_));
}

std::shared_ptr<const Primitive> Pmap::with_sub_programs(std::vector<ProgramPtr> b) const {
  detail::check_same_signature(name(), body(), *b.at(0));
  return std::make_shared<const Pmap>(fn_name_, axis_, size_, b[0], in_axes_, out_axes_, in_avals(),
                                      out_avals());
}

void Pmap::infer_vma(const std::vector<Aval>&, std::vector<Aval>& out) const {
  const AxisMask own = bit_of(axis_);
  for (size_t o = 0; o < out.size(); ++o) out[o].vma = body().avals[body().outputs[o]].vma & ~own;
}

AxisMask Pmap::axis_names() const { return Primitive::axis_names() & ~bit_of(axis_); }

namespace detail {

std::vector<Array> pmap_flat(const std::string& fn_name, const std::string& axis, const FlatFn& fn,
                             const std::vector<Array>& args, const std::vector<int>& in_axes,
                             const std::vector<int>& out_axes, std::optional<int64_t> axis_size) {
  if (axis.empty()) fail("pmap", "needs an axis_name");
  if (args.size() != in_axes.size()) fail("pmap", "internal: in_axes size mismatch");
  if (pmap_depth > 0) {
    fail("pmap",
         "a pmap inside a pmap is not supported yet (vmap with an axis_name inside "
         "pmap is)");
  }
  std::optional<int64_t> size = axis_size;
  std::vector<Aval> avals = avals_of_args(args);
  const AxisMask bit = bit_of(axis);
  for (size_t i = 0; i < args.size(); ++i) {
    if (in_axes[i] < 0) continue;
    Aval& a = avals[i];
    if (in_axes[i] >= static_cast<int>(a.shape.size())) {
      fail("pmap", "in_axes ", in_axes[i], " is out of range for argument ", i, " of shape ",
           shape_str(a.shape));
    }
    const int64_t n = a.shape[in_axes[i]];
    if (size && *size != n) {
      fail("pmap", "inconsistent sizes along the mapped axes: argument ", i, " has size ", n,
           " along axis ", in_axes[i], " but the axis size is ", *size);
    }
    size = n;
    a.shape.erase(a.shape.begin() + in_axes[i]);
    a.vma |= bit;
  }
  if (!size) fail("pmap", "needs at least one mapped argument or an explicit axis_size");
  if (*size < 1) fail("pmap", "the mapped axis has size 0");
  if (*size > device_count()) {
    fail("pmap", "axis '", axis, "' of size ", *size, " needs ", *size, " devices, but there are ",
         device_count(), " (set GRAFT_CPU_DEVICES=", *size, " for virtual CPU devices)");
  }

  ClosedProgram c;
  {
    AxisScope scope(axis, *size);
    ++pmap_depth;
    struct Leave {
      ~Leave() { --pmap_depth; }
    } leave;
    c = trace_closed(fn, avals, bit);
  }
  const Program& body = *c.program;
  const size_t num_out = body.outputs.size();
  if (out_axes.size() != 1 && out_axes.size() != num_out) {
    fail("pmap", "out_axes has ", out_axes.size(), " entries for ", num_out, " outputs");
  }
  std::vector<int> outs(num_out);
  std::vector<Aval> out_avals;
  for (size_t o = 0; o < num_out; ++o) {
    Aval a = body.avals[body.outputs[o]];
    int ax = out_axes[out_axes.size() == 1 ? 0 : o];
    if (ax == kNoneAxis) {
      if (a.vma & bit) {
        fail("pmap", "output ", o, " varies over axis '", axis,
             "' but its out_axes is none (only a value that is the same on every member, such "
             "as a psum, can be returned unmapped)");
      }
      outs[o] = -1;
    } else {
      const int rank = static_cast<int>(a.shape.size()) + 1;
      const int r = ax < 0 ? ax + rank : ax;
      if (r < 0 || r >= rank) {
        fail("pmap", "out_axes ", ax, " is out of range for output ", o, " of rank ", rank - 1);
      }
      outs[o] = r;
      a.shape.insert(a.shape.begin() + r, *size);
    }
    a.vma &= ~bit;
    out_avals.push_back(std::move(a));
  }
  std::vector<int> ins(c.consts.size(), -1);
  ins.insert(ins.end(), in_axes.begin(), in_axes.end());
  std::vector<Array> all = c.args(args);
  auto p = std::make_shared<const Pmap>(fn_name, axis, *size, c.program, std::move(ins),
                                        std::move(outs), avals_of_args(all), std::move(out_avals));
  return graft::bind(p, all);
}

}  // namespace detail

namespace {

// The arrays of `xs` that are valid, with their axes; `present` marks which.
struct Present {
  std::vector<Array> arrays;
  std::vector<int> axes;
  std::vector<bool> present;
};

Present present_of(const std::vector<Array>& xs, const std::vector<int>& axes) {
  Present p;
  for (size_t i = 0; i < xs.size(); ++i) {
    p.present.push_back(xs[i].valid());
    if (!xs[i].valid()) continue;
    p.arrays.push_back(xs[i]);
    p.axes.push_back(axes[i]);
  }
  return p;
}

// `given` spread back over the slots `present` marks (empty elsewhere).
std::vector<Array> spread(const std::vector<Array>& given, const std::vector<bool>& present) {
  std::vector<Array> out;
  size_t k = 0;
  for (bool p : present) out.push_back(p ? given[k++] : Array());
  return out;
}

std::vector<int> cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int> as_out_axes(const std::vector<int>& axes) {
  std::vector<int> out;
  for (int a : axes) out.push_back(a < 0 ? detail::kNoneAxis : a);
  return out;
}

}  // namespace

using detail::concat;
using detail::part;

std::vector<Array> Pmap::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                             const std::vector<Array>&) const {
  Present t = present_of(tangents, in_axes_);
  const size_t m = primals.size();
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, m, present = t.present](const std::vector<Array>& in) {
    auto [outs, touts] =
        detail::jvp_program(*b, part(in, 0, m), spread(part(in, m, in.size()), present));
    return concat(outs, touts);
  };
  std::vector<int> out_axes = as_out_axes(cat(out_axes_, out_axes_));
  std::vector<Array> r = detail::pmap_flat(fn_name_ + "_jvp", axis_, fn, concat(primals, t.arrays),
                                           cat(in_axes_, t.axes), out_axes, size_);
  return part(r, out_avals().size(), r.size());
}

std::vector<Array> Pmap::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                             const std::vector<Array>& cotangents) const {
  Present c = present_of(cotangents, out_axes_);
  const size_t m = primals.size();
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, m, present = c.present](const std::vector<Array>& in) {
    detail::VjpResult r = detail::vjp_program(b, part(in, 0, m));
    return r.pullback(spread(part(in, m, in.size()), present));
  };
  return detail::pmap_flat(fn_name_ + "_vjp", axis_, fn, concat(primals, c.arrays),
                           cat(in_axes_, c.axes), as_out_axes(in_axes_), size_);
}

Batched Pmap::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int64_t batch = 0;
  std::vector<Array> moved;
  std::vector<int> axes, inner;
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] < 0) {
      moved.push_back(args[i]);
      axes.push_back(in_axes_[i]);
      inner.push_back(-1);
      continue;
    }
    batch = args[i].shape()[dims[i]];
    moved.push_back(moveaxis(args[i], dims[i], 0));
    axes.push_back(in_axes_[i] < 0 ? -1 : in_axes_[i] + 1);
    inner.push_back(0);
  }
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, inner, batch](const std::vector<Array>& in) {
    detail::VmapResult r = detail::vmap_program(*b, in, inner, batch);
    std::vector<Array> out;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      out.push_back(detail::move_batch_axis(r.outputs[o], r.dims[o], 0, batch));
    }
    return out;
  };
  std::vector<int> out_axes;
  for (int a : out_axes_) out_axes.push_back(a < 0 ? detail::kNoneAxis : a + 1);
  Batched r;
  r.outputs = detail::pmap_flat(fn_name_, axis_, fn, moved, axes, out_axes, size_);
  r.dims.assign(r.outputs.size(), 0);
  return r;
}

}  // namespace graft
