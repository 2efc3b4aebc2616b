#include "core/interpreters/batching.h"

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/ir/primitive.h"

namespace graft::detail {

namespace {
thread_local std::string current_axis_name;

struct BatchAxisScope {
  std::string prev;
  explicit BatchAxisScope(const std::string& name) : prev(current_axis_name) {
    current_axis_name = name;
  }
  ~BatchAxisScope() { current_axis_name = prev; }
};
}  // namespace

const std::string& batch_axis_name() { return current_axis_name; }

Array move_batch_axis(const Array& x, int from, int to, int64_t size) {
  if (from < 0) {
    Array e = expand_dims(x, {to});
    Shape s = e.shape();
    s[to] = size;
    return broadcast_to(e, s);
  }
  return from == to ? x : moveaxis(x, from, to);
}

VmapResult vmap_flat(const FlatFn& fn, const std::vector<Array>& args,
                     const std::vector<int>& in_dims, std::optional<int64_t> axis_size,
                     const std::string& axis_name) {
  if (args.size() != in_dims.size()) fail("vmap", "internal: in_dims size mismatch");
  std::optional<int64_t> size = axis_size;
  std::vector<Aval> avals;
  for (size_t i = 0; i < args.size(); ++i) {
    Aval a = args[i].aval();
    if (in_dims[i] >= 0) {
      if (in_dims[i] >= static_cast<int>(a.shape.size())) {
        fail("vmap", "in_axes ", in_dims[i], " is out of range for argument ", i, " of shape ",
             shape_str(a.shape));
      }
      int64_t n = a.shape[in_dims[i]];
      if (size && *size != n) {
        fail("vmap", "inconsistent sizes along the mapped axes: argument ", i, " has size ", n,
             " along axis ", in_dims[i], " but the batch size is ", *size);
      }
      size = n;
      a.shape.erase(a.shape.begin() + in_dims[i]);
    }
    avals.push_back(std::move(a));
  }
  if (!size) fail("vmap", "needs at least one mapped argument or an explicit axis_size");

  // A named axis: bound while fn is traced and its program interpreted; the mapped arguments
  // vary over it.
  AxisScope scope(axis_name, *size);
  AxisMask bit = axis_name.empty() ? 0 : AxisMask{1} << axis_bit(axis_name);
  for (size_t i = 0; i < avals.size(); ++i) {
    if (in_dims[i] >= 0) avals[i].vma |= bit;
  }
  ClosedProgram c = trace_closed(fn, avals, bit);
  std::vector<int> dims(c.consts.size(), -1);
  dims.insert(dims.end(), in_dims.begin(), in_dims.end());
  BatchAxisScope named(axis_name);
  return vmap_program(*c.program, c.args(args), dims, *size);
}

VmapResult vmap_program(const Program& p, const std::vector<Array>& args,
                        const std::vector<int>& in_dims, int64_t size) {
  if (args.size() != p.inputs.size() || in_dims.size() != args.size()) {
    fail("vmap", "the program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  VmapResult r;
  r.axis_size = size;
  std::vector<Array> values(p.avals.size());
  std::vector<int> dims(p.avals.size(), -1);
  for (size_t i = 0; i < args.size(); ++i) {
    values[p.inputs[i]] = args[i];
    dims[p.inputs[i]] = in_dims[i];
  }
  for (size_t i = 0; i < p.constants.size(); ++i) values[p.constants[i]] = p.constant_values[i];
  // Equations that communicate over this vmap's axis go through their batching rule even with
  // no batched input (axis_index; psum of an unbatched value).
  const AxisMask mapped =
      current_axis_name.empty() ? 0 : AxisMask{1} << axis_bit(current_axis_name);
  std::vector<Array> ins;
  std::vector<int> in_d;
  for (const Instr& instr : p.instrs) {
    ins.clear();
    in_d.clear();
    bool batched = false;
    for (int v : instr.in) {
      ins.push_back(values[v]);
      in_d.push_back(dims[v]);
      batched = batched || dims[v] >= 0;
    }
    if (!batched && !(mapped & instr.prim->axis_names())) {
      std::vector<Array> outs = graft::bind(instr.prim, ins);
      for (size_t o = 0; o < instr.out.size(); ++o) values[instr.out[o]] = std::move(outs[o]);
      continue;
    }
    Batched b = instr.prim->vmap(ins, in_d);
    if (b.outputs.size() != instr.out.size() || b.dims.size() != instr.out.size()) {
      fail(instr.prim->name(), "batching rule returned ", b.outputs.size(), " outputs for ",
           instr.out.size());
    }
    for (size_t o = 0; o < b.outputs.size(); ++o) {
      // The rule's output must be the unbatched result with the batch axis inserted.
      Shape want = p.avals[instr.out[o]].shape;
      if (b.dims[o] >= 0) want.insert(want.begin() + b.dims[o], size);
      if (b.outputs[o].shape() != want) {
        fail(instr.prim->name(), "batching rule returned shape ", shape_str(b.outputs[o].shape()),
             ", expected ", shape_str(want));
      }
      values[instr.out[o]] = std::move(b.outputs[o]);
      dims[instr.out[o]] = b.dims[o];
    }
  }
  for (int v : p.outputs) {
    r.outputs.push_back(values[v]);
    r.dims.push_back(dims[v]);
  }
  return r;
}

}  // namespace graft::detail
