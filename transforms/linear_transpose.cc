#include "transforms/linear_transpose.h"

#include <sstream>

#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/ops.h"

namespace graft::detail {
namespace {

std::string dtypes_str(const std::vector<Aval>& avals) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < avals.size(); ++i) s << (i ? ", " : "") << dtype_name(avals[i].dtype);
  s << "]";
  return s.str();
}

std::string avals_str(const std::vector<Aval>& avals) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < avals.size(); ++i) s << (i ? ", " : "") << avals[i].str();
  s << "]";
  return s.str();
}

}  // namespace

LinearTranspose linear_transpose_flat(const FlatFn& fn, const std::vector<Array>& primals) {
  std::vector<Aval> in_avals = avals_of_args(primals);
  LinearTranspose t;
  // Trace the pullback at placeholder primals (with unit cotangents): for a linear f it does
  // not read them. This trace also gives f's output avals.
  FlatFn pullback_at = [&](const std::vector<Array>& x) {
    VjpResult v = vjp_flat(fn, x);
    t.out_avals = avals_of_args(v.outputs);
    bool floating = true;
    for (const std::vector<Aval>* avals : {&in_avals, &t.out_avals}) {
      for (const Aval& a : *avals) floating = floating && is_floating(a.dtype);
    }
    if (!floating) {
      fail("linear_transpose", "only supports [float] -> [float] functions (integer -> integer "
           "ones are not transposable in graft), but got ", dtypes_str(in_avals), " -> ",
           dtypes_str(t.out_avals), ".");
    }
    std::vector<Array> ones;
    for (const Array& o : v.outputs) ones.push_back(ones_like(o));
    return v.pullback(ones);
  };
  Graph g = trace_avals(pullback_at, in_avals);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (g.depends(g.outputs[i].node().get())) {
      fail("linear_transpose", "the function is not linear in its arguments: the cotangent of "
           "argument leaf ", i, " depends on the arguments' values");
    }
  }
  // The transpose itself: the pullback at zeros (whose forward values it never reads).
  std::vector<Array> zeros;
  for (const Aval& a : in_avals) zeros.push_back(graft::zeros(a.shape, a.dtype));
  FlatFn transpose = [&](const std::vector<Array>& cts) { return vjp_flat(fn, zeros).pullback(cts); };
  t.program = trace_closed(transpose, t.out_avals);
  return t;
}

std::vector<Array> apply_transpose(const LinearTranspose& t, const std::vector<Array>& cts) {
  bool match = cts.size() == t.out_avals.size();
  for (size_t i = 0; match && i < cts.size(); ++i) {
    match = cts[i].valid() && cts[i].shape() == t.out_avals[i].shape &&
            cts[i].dtype() == t.out_avals[i].dtype;
  }
  if (!match) {
    std::vector<Aval> got;
    for (const Array& c : cts) got.push_back(c.valid() ? c.aval() : Aval{});
    fail("linear_transpose", "cotangent type does not match function output, expected ",
         avals_str(t.out_avals), " but got ", avals_str(got));
  }
  return run_program(*t.program.program, t.program.args(cts));
}

}  // namespace graft::detail
