// Shared by the control-flow primitives' builders and rules (core/primitives/*_rules.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/ir/program.h"

namespace graft::detail {

// A traced function with the arrays of outer traces it closed over lifted out: fn takes
// [consts, args] where consts are those arrays.
struct Closed {
  std::shared_ptr<const Program> program;  // inputs [consts, args]
  FlatFn fn;                               // runs `program`
  std::vector<Array> consts;
  std::vector<Aval> out_avals;
};
Closed close_over(const FlatFn& f, const std::vector<Aval>& avals);
// f, returning one scalar (0.0f) more when it returns nothing, and then setting *added: a
// primitive must define a value for bind to run a body's effect (debug_print) at once, or
// record it for jit, through its first output. The builder drops that output again.
FlatFn with_an_output(FlatFn f, std::shared_ptr<bool> added);
// Fails unless `b` takes and returns what `a` does (a pass may rewrite a body, not its type).
void check_same_signature(std::string_view op, const Program& a, const Program& b);

std::vector<Aval> avals_of(const std::vector<Array>& xs);
std::vector<Aval> concat_avals(std::vector<Aval> a, const std::vector<Aval>& b);
std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b);
std::vector<Array> part(const std::vector<Array>& xs, size_t begin, size_t end);
// xs[i] where mask[i].
std::vector<Array> masked(const std::vector<Array>& xs, const std::vector<bool>& mask);
template <typename T>
std::vector<T> kept(const std::vector<T>& xs, const std::vector<bool>& keep) {
  std::vector<T> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (keep[i]) out.push_back(xs[i]);
  }
  return out;
}
// By value id: whether an instruction or an output of `p` reads it (what DCE rules of
// primitives with bodies ask of a pruned body).
std::vector<bool> values_read(const Program& p);
// p with only the outputs in `keep`, then dead code removed by `dce`.
Program pruned_body(const Program& p, const std::vector<bool>& keep, ProgramPass dce);
// Fails unless `body` takes `in` and returns `out` (shapes and dtypes; weak flags may differ):
// a pruned primitive's bodies must still fit it.
void check_body_fits(std::string_view op, const Program& body, const std::vector<Aval>& in,
                     const std::vector<Aval>& out);
// t, or zeros shaped like `like` when t is empty; cast to like's dtype.
Array instantiate(const Array& t, const Array& like);
int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims);
// body vmapped over fixed in_dims, every output moved (or broadcast) to batch axis 0.
std::vector<Array> run_batched(const Program& body, const std::vector<Array>& xs,
                               const std::vector<int>& dims, int64_t size);
// "(f32[3], i32[])"
std::string avals_str(const std::vector<Aval>& avals);

}  // namespace graft::detail
