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
// Fails unless `b` takes and returns what `a` does (a pass may rewrite a body, not its type).
void check_same_signature(std::string_view op, const Program& a, const Program& b);

std::vector<Aval> avals_of(const std::vector<Array>& xs);
std::vector<Aval> concat_avals(std::vector<Aval> a, const std::vector<Aval>& b);
std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b);
std::vector<Array> part(const std::vector<Array>& xs, size_t begin, size_t end);
// xs[i] where mask[i].
std::vector<Array> masked(const std::vector<Array>& xs, const std::vector<bool>& mask);
// t, or zeros shaped like `like` when t is empty; cast to like's dtype.
Array instantiate(const Array& t, const Array& like);
int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims);
// fn vmapped over fixed in_dims, every output moved (or broadcast) to batch axis 0.
std::vector<Array> run_batched(const FlatFn& fn, const std::vector<Array>& xs,
                               const std::vector<int>& dims, int64_t size);
// "(f32[3], i32[])"
std::string avals_str(const std::vector<Aval>& avals);

}  // namespace graft::detail
