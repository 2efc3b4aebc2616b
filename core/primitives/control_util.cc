#include "core/primitives/control_util.h"

#include <string>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/ir/primitive.h"
#include "core/interpreters/batching.h"

namespace graft::detail {

Closed close_over(const FlatFn& f, const std::vector<Aval>& avals) {
  ClosedProgram cp = trace_closed(f, avals);
  Closed c;
  c.program = cp.program;
  c.fn = program_fn(cp.program);
  c.consts = std::move(cp.consts);
  c.out_avals = cp.program->output_avals();
  return c;
}

FlatFn with_an_output(FlatFn f, std::shared_ptr<bool> added) {
  return [f = std::move(f), added = std::move(added)](const std::vector<Array>& in) {
    std::vector<Array> out = f(in);
    if (out.empty()) {
      out.push_back(Array(0.0f));
      *added = true;
    }
    return out;
  };
}

void check_same_signature(std::string_view op, const Program& a, const Program& b) {
  if (a.input_avals() != b.input_avals() || a.output_avals() != b.output_avals()) {
    fail(op, "a rewritten body must keep its signature: ", avals_str(a.input_avals()), " -> ",
         avals_str(a.output_avals()), " became ", avals_str(b.input_avals()), " -> ",
         avals_str(b.output_avals()));
  }
}

std::vector<bool> values_read(const Program& p) {
  std::vector<bool> read(p.avals.size(), false);
  for (const Instr& instr : p.instrs) {
    for (int v : instr.in) read[v] = true;
  }
  for (int v : p.outputs) read[v] = true;
  return read;
}

Program pruned_body(const Program& p, const std::vector<bool>& keep, ProgramPass dce) {
  Program q = p;
  q.outputs = kept(p.outputs, keep);
  return dce(q);
}

void check_body_fits(std::string_view op, const Program& body, const std::vector<Aval>& in,
                     const std::vector<Aval>& out) {
  auto fits = [](const std::vector<Aval>& a, const std::vector<Aval>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].shape != b[i].shape || a[i].dtype != b[i].dtype) return false;
    }
    return true;
  };
  if (!fits(body.input_avals(), in) || !fits(body.output_avals(), out)) {
    fail(op, "a pruned body ", avals_str(body.input_avals()), " -> ",
         avals_str(body.output_avals()), " does not fit ", avals_str(in), " -> ", avals_str(out));
  }
}

std::vector<Aval> avals_of(const std::vector<Array>& xs) {
  std::vector<Aval> a;
  for (const Array& x : xs) a.push_back(x.aval());
  return a;
}

std::vector<Aval> concat_avals(std::vector<Aval> a, const std::vector<Aval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<Array> part(const std::vector<Array>& xs, size_t begin, size_t end) {
  return std::vector<Array>(xs.begin() + begin, xs.begin() + end);
}

std::vector<Array> masked(const std::vector<Array>& xs, const std::vector<bool>& mask) {
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (mask[i]) out.push_back(xs[i]);
  }
  return out;
}

Array instantiate(const Array& t, const Array& like) {
  if (!t.valid()) return zeros(like.shape(), like.dtype());
  return t.dtype() == like.dtype() ? t : astype(t, like.dtype());
}

int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) return args[i].shape()[dims[i]];
  }
  return 0;
}

std::vector<Array> run_batched(const Program& body, const std::vector<Array>& xs,
                               const std::vector<int>& dims, int64_t size) {
  VmapResult r = vmap_program(body, xs, dims, size);
  std::vector<Array> out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    out.push_back(move_batch_axis(r.outputs[i], r.dims[i], 0, size));
  }
  return out;
}

std::string avals_str(const std::vector<Aval>& avals) {
  std::string s = "(";
  for (size_t i = 0; i < avals.size(); ++i) s += (i ? ", " : "") + avals[i].str();
  return s + ")";
}

}  // namespace graft::detail
